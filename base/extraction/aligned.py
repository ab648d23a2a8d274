"""An LLM's extraction brought into the graph's conventions, like the offline extractor's: names made canonical
("the Orders service" → Orders, a service), predicates mapped onto the vocabulary in the voice they were
written ("is used by" → Y uses X; "leads" → X is led by Y) with the model's own words kept as the phrase,
and each fact placed on the lines of the chunk that name its ends."""

from __future__ import annotations

import re
from dataclasses import replace

from tracegraph.base.extraction import nlp
from tracegraph.base.extraction import vocabulary as vocab
from tracegraph.base.extraction.facts import Extraction, Lines, Relation
from tracegraph.base.extraction.names import canonical_name

_AUXILIARIES = frozenset("is are was were be been being has have had will would can could should may might must "
                         "does do did".split())
_PREPOSITIONS = frozenset("on upon to from in into onto with by for of via through over at after".split())
_NEAR = 6  # lines: a fact's two names further apart than this are placed on the subject's line alone


def aligned(extraction: Extraction, text: str, first_line: int = 1, model: str | None = None) -> Extraction:
    """`extraction` with canonical names and predicates, and lines taken from `text` (whose first line is
    `first_line` of its document)."""
    lines = text.split("\n")
    relations = [_relation(r, lines, first_line, model) for r in extraction.relations]
    definitions: dict[str, str] = {}
    for name, definition in extraction.definitions.items():
        definitions.setdefault(canonical_name(name).label or name, definition)
    confidence = {canonical_name(n).label or n: c for n, c in extraction.definition_confidence.items()}
    kinds = {label: kind for n in extraction.definitions if (kind := canonical_name(n).kind)
             for label in [canonical_name(n).label]}
    return Extraction(definitions=definitions, relations=relations, definition_confidence=confidence,
                      definition_lines={n: found for n in definitions if (found := _lines_of([n], lines, first_line))},
                      kinds=kinds)


def _relation(r: Relation, lines: list[str], first_line: int, model: str | None) -> Relation:
    subject, obj = canonical_name(r.subject).label or r.subject, canonical_name(r.object).label or r.object
    label, reverse = _canonical_predicate(r.predicate, model)
    s, o = (obj, subject) if reverse else (subject, obj)
    return replace(r, subject=s, predicate=label, object=o, phrase=r.predicate if label != r.predicate else "",
                   lines=_lines_of([r.subject, r.object], lines, first_line))


def _canonical_predicate(predicate: str, model: str | None) -> tuple[str, bool]:
    """(the vocabulary's label, whether the ends turn round) for a predicate phrase; the phrase itself when
    it is outside the vocabulary."""
    words = predicate.lower().split()
    passive = len(words) >= 2 and words[0] in _AUXILIARIES and words[-1] == "by"
    content = [w for w in words if w not in _AUXILIARIES]
    if not content:
        return predicate, False
    preposition = content[-1] if content[-1] in _PREPOSITIONS and len(content) > 1 else ""
    verb = content[0]
    lemma = next(iter(nlp.pipeline(model)(verb)), None)
    found = vocab.canonical(lemma.lemma_ if lemma is not None else verb, preposition, passive=passive)
    if found is None and words[0] in ("is", "are", "was", "be"):  # "is responsible for", "is the owner of"
        role = [w for w in content if w not in ("a", "an", "the") and w != preposition]
        found = vocab.canonical(f"be {' '.join(role)}", preposition)
    return (found.label, found.reverse) if found else (predicate, False)


def _lines_of(names: list[str], lines: list[str], first_line: int) -> Lines | None:
    """The lines naming the subject and the object (the nearest pair), else the subject's first line."""
    found = [[k for k, line in enumerate(lines) if _names(name, line)] for name in names]
    if not found or not found[0]:
        return None
    if len(found) > 1 and found[1]:
        a, b = min(((a, b) for a in found[0] for b in found[1]), key=lambda p: abs(p[0] - p[1]))
        if abs(a - b) <= _NEAR:
            return first_line + min(a, b), first_line + max(a, b)
    return first_line + found[0][0], first_line + found[0][0]


def _names(name: str, line: str) -> bool:
    words = re.findall(r"[^\W_]+", name.lower())
    return bool(words) and re.search(r"(?<![^\W_])" + r"[\W_]+".join(map(re.escape, words)) + r"(?![^\W_])",
                                     line.lower()) is not None
