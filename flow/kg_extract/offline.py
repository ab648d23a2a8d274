"""The offline extractor: no model, only patterns. Entities are runs of capitalised words and
acronyms; definitions come from "X is a …" sentences; relations from the few words joining two
entities in a sentence ("Acme acquired Widget Inc"), or, failing that, from two entities named
together ("mentioned with"). Everything it writes is labelled `tg:extractor "offline"`."""

from __future__ import annotations

import re

from tracegraph.flow.kg_extract.facts import Extraction, Relation

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n{2,}|\n(?=[#*-]\s)")
_TOKEN = re.compile(r"[A-Za-z0-9][\w&'’.-]*[\w&]|[A-Za-z0-9]|[,;:()\"]")
_CONNECTORS = {"of", "de", "for", "and", "&", "the", "von", "van"}
_COMMON = set("""a an the this that these those it its in on at for with as by but and or if when while after
before their there here we they he she you i our his her each all some many most both such also however
then thus so to from into one two new every no not who what which whom whose where when why how during
does did do is are was were can could should would will""".split())
_COPULA = re.compile(r"^(?:is|was|are|were)\s+(?:a|an|the)\s+(.+)$")
_STOP_PHRASE = re.compile(r"\b(?:that|which|who|whose|where|with|based|founded|since|and)\b")
_MAX_PREDICATE_WORDS = 6
_ABBREVIATION = re.compile(r"\b(Dr|Mr|Mrs|Ms|Prof|Inc|Ltd|Co|Corp|St|Jr|Sr|vs|No|e\.g|i\.e)\.")


def _entities(tokens: list[str]) -> list[tuple[int, int, str]]:
    """(start, end, label) of capitalised runs, joined over lower-case connectors."""
    found, i = [], 0
    while i < len(tokens):
        if not _capital(tokens[i]):
            i += 1
            continue
        j = i + 1
        while j < len(tokens):
            if _capital(tokens[j]):
                j += 1
            elif tokens[j].lower() in _CONNECTORS and j + 1 < len(tokens) and _capital(tokens[j + 1]):
                j += 2
            else:
                break
        words = tokens[i:j]
        while words and words[0].lower() in _COMMON:  # "The Helios Grid" -> "Helios Grid"
            words = words[1:]
            i += 1
        if words and not (len(words) == 1 and (words[0].lower() in _COMMON or len(words[0]) < 2)):
            found.append((i, j, " ".join(words).rstrip(".")))
        i = max(j, i + 1)
    return found


def _capital(token: str) -> bool:
    return token[:1].isupper() or (token.isupper() and len(token) > 1)


def _predicate(words: list[str]) -> str | None:
    """The joining words as a relation name, if they look like one."""
    if not 1 <= len(words) <= _MAX_PREDICATE_WORDS or any(w in ",;:()\"" for w in words):
        return None
    text = " ".join(words).lower()
    text = re.sub(r"^(?:which|that|who|and|,)\s+", "", text)
    text = re.sub(r"\s+(?:the|a|an)$", "", text).strip()
    if not text or all(w in _COMMON for w in text.split()):
        return None
    return text


def extract(text: str) -> Extraction:
    result = Extraction()
    text = _ABBREVIATION.sub(r"\1", text)  # "Dr. Kern" is not the end of a sentence
    for sentence in _SENTENCES.split(text):
        sentence = sentence.strip(" \t\n#*-")
        tokens = _TOKEN.findall(sentence)
        entities = _entities(tokens)
        if not entities:
            continue
        for _, _, label in entities:
            result.definitions.setdefault(label, "")
        first_start, first_end, first = entities[0]
        rest = " ".join(tokens[first_end:])
        copula = _COPULA.match(rest) if first_start == 0 else None
        if copula:
            result.definitions[first] = sentence
            kind = _STOP_PHRASE.split(copula.group(1).rstrip(".").split(",")[0])[0].strip()
            kind_words = kind.split()
            if 0 < len(kind_words) <= 4 and not _capital(kind_words[0]):
                result.relations.append(Relation(first, "is a", kind))
        related = False
        for (_, a_end, a), (b_start, _, b) in zip(entities, entities[1:]):
            predicate = _predicate(tokens[a_end:b_start])
            if predicate and a != b:
                result.relations.append(Relation(a, predicate, b))
                related = True
        if not related and len(entities) == 2 and entities[0][2] != entities[1][2]:
            result.relations.append(Relation(entities[0][2], "mentioned with", entities[1][2]))
    result.relations = list(dict.fromkeys(result.relations))
    return result
