"""Which of a collection's entities a question names, in any case, by alias or by handle.

An entity's IRI is its label's slug (base/provenance/uris.py), so the store's own IRI index is a
case-insensitive label index: every run of words in the question is read as the extractor reads a name
("the Billing service" → Billing, "grid analytics team" stays a team) and its slug is looked up with the
labels, in one batch. The aliases (`X is also known as Y`) lead from a second name to the entity, and
@handles and e-mail addresses to the person or team holding them.

A lower-case word is not a name by itself: a single stop word or common word never matches, and a word
run written in lower case matches only a label that looks like a name (capitals, digits or punctuation,
or an entity the extractor typed, aliased or gave a handle). In a question that writes its names with
capitals, a lower-case run counts only when its label is more than a capitalised word ("nats" → NATS)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from spacy.lang.en.stop_words import STOP_WORDS

from tracegraph.base.errors import RemoteError
from tracegraph.base.extraction.names import KIND_WORDS, canonical_name, handles_in
from tracegraph.base.extraction.vocabulary import ALIAS
from tracegraph.base.provenance.uris import ENTITY_BASE, entity_uri, relation_uri
from tracegraph.base.provenance.vocab import RDF, RDFS, TG
from tracegraph.base.retrieval.names import CALENDAR_WORDS, question_names
from tracegraph.base.retrieval.passage_graph import without_qualifier
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, literal

MAX_WORDS = 6  # the longest word run looked up as one name
SCAN_WORDS = 64  # words of a question read for names: a bound on the lookups one question costs
ALIAS_PREDICATE = relation_uri(ALIAS)
# Words that ask, relate or describe but name nothing here; on top of English stop words.
COMMON_WORDS = frozenset("""
    who whom whose what which when where why how whats whos please tell show list give find name describe explain
    own owns owned owner owners ownership run runs ran running use uses used using call calls called depend depends
    depended dependency dependencies dependent dependents need needs rely relies lead leads led maintain maintains
    maintained manage manages managed operate operates decide decided decision decisions choose chose chosen move
    moved migrate migrated change changed changes incident incidents outage outages risk risks reason reasons
    context status summary consequence consequences impact background option options problem problems
    thing things stuff info information detail details data question answer doc docs document documents
    people person everyone anybody today yesterday tomorrow week weeks month months year years day days
    current currently now new old main top recent recently last ago
""".split()) | frozenset(KIND_WORDS) | frozenset(w + "s" for w in KIND_WORDS)
_STOP = frozenset(STOP_WORDS) | COMMON_WORDS | CALENDAR_WORDS
_KINDS = frozenset(KIND_WORDS)
_WORD = re.compile(r"[^\W_](?:[\w'’.&+/-]*[^\W_])?")
_POSSESSIVE = re.compile(r"['’]s$")
_BREAK = re.compile(r"[,;:!?()\[\]{}\"“”]|\.(?:\s|$)")  # punctuation no name runs across


@dataclass(frozen=True, slots=True)
class Phrase:
    """A run of the question's words that may name an entity: as written, where (character offsets), the
    labels it may stand for, and whether the question writes it as a name (capitalised, quoted)."""

    text: str
    start: int
    end: int
    forms: tuple[str, ...]
    written_as_name: bool
    given: bool = False  # a name found whole (base/retrieval/names.py), not a run of words tried


@dataclass(frozen=True, slots=True)
class Match:
    """An entity the question names: the words that name it, the entity, its label, and how they matched."""

    mention: str
    entity: str
    label: str
    how: str


@dataclass(frozen=True, slots=True)
class Grounding:
    """The entities a question names, in the order it names them; the names it gives (capitalised or
    quoted) that no entity of the collection has; and, when it gives no name and none matched, the one
    run of words it asks about (`asked`: "quasar" in "who owns quasar?")."""

    matches: tuple[Match, ...] = ()
    unmatched: tuple[str, ...] = ()
    asked: str | None = None

    @property
    def entities(self) -> list[str]:
        return list(dict.fromkeys(m.entity for m in self.matches))

    @property
    def names(self) -> list[str]:
        """Each matched entity's label, then the unmatched names as written."""
        labels = {m.entity: m.label for m in self.matches}
        return list(dict.fromkeys([*labels.values(), *self.unmatched]))

    def notes(self) -> list[str]:
        """How each name was matched, for the trace."""
        return [f"'{m.mention}' names {m.label} ({m.how})" for m in self.matches]


async def ground(tools, question: str) -> Grounding:
    """The entities `question` names in the collection `tools` reads."""
    phrases = question_phrases(question)
    wanted = list(dict.fromkeys(entity_uri(form) for p in phrases for form in p.forms))
    labels = await tools.labels(wanted) if wanted else {}
    hits = [(p, e, labels[e]) for p in phrases for e in dict.fromkeys(entity_uri(f) for f in p.forms) if e in labels]
    hits += await _handle_hits(tools, question)
    marks = await _marks(tools, [e for _, e, _ in hits])
    cased = _writes_names_with_capitals(question)
    kept = _non_overlapping([h for h in hits if _accepted(h[0], h[2], h[1] in marks.named, cased)])
    matches: list[Match] = []
    for phrase, entity, label in kept:
        canonical = marks.canonical.get(entity)
        if canonical is not None:
            matches.append(Match(phrase.text, canonical[0], canonical[1], f"an alias: {label}"))
        matches.append(Match(phrase.text, entity, label, _how(phrase, entity, label)))
    unmatched = _unmatched(phrases, kept)
    asked = asked_words(question) if not matches and not unmatched else None
    return Grounding(tuple(matches), tuple(unmatched), asked)


def question_phrases(question: str) -> list[Phrase]:
    """The word runs to look up: each name the question writes as one (capitalised, quoted, with its
    parenthetical) whole, and every run of up to MAX_WORDS other words that neither starts nor ends with a
    stop word, in the question's first SCAN_WORDS words.

    >>> [p.text for p in question_phrases("who owns the billing service?")]
    ['billing', 'billing service']
    >>> [p.forms for p in question_phrases("Who owns the Skyline Service?")]
    [('Skyline Service', 'Skyline')]
    """
    phrases: list[Phrase] = []
    reserved: list[tuple[int, int]] = []
    shouted = not any(c.islower() for c in question)  # "WHO OWNS BILLING?": capitals mark nothing
    for name in [] if shouted else question_names(question):
        start = question.find(name)
        if start < 0:
            continue
        reserved.append((start, start + len(name)))
        phrases.append(Phrase(name, start, start + len(name), _forms(name, without_qualifier(name)), True, True))
    for segment in _segments(question, reserved):
        for i in range(len(segment)):
            for j in range(i + 1, min(i + MAX_WORDS, len(segment)) + 1):
                words = segment[i:j]
                first, last = (_bare(w.group()).lower() for w in (words[0], words[-1]))
                if first in _STOP or (last in _STOP and (len(words) == 1 or last not in _KINDS)):
                    continue  # "billing service" is tried (the extractor reads it as Billing); "service" is not
                start, end = words[0].start(), words[-1].start() + len(_bare(words[-1].group()))
                text = question[start:end]
                phrases.append(Phrase(text, start, end, _forms(text), not shouted and any(c.isupper() for c in text)))
    return phrases


def asked_words(question: str) -> str | None:
    """The one run of content words a question asks about, when it has exactly one of up to three words
    ("who owns quasar?" → quasar): what a question written without capitals names.

    >>> asked_words("who owns quasar?"), asked_words("what is the capital of mongolia?")
    ('quasar', None)
    """
    runs, current = [], []
    for word in _WORD.finditer(question[:2000]):
        bare = _bare(word.group())
        if current and bare.lower() in _KINDS:  # "grid analytics team"
            current.append(bare)
        elif bare.lower() in _STOP or bare[:1].isdigit():
            if current:
                runs.append(current)
            current = []
        else:
            current.append(bare)
    if current:
        runs.append(current)
    return " ".join(runs[0]) if len(runs) == 1 and len(runs[0]) <= 3 else None


def _forms(*texts: str) -> tuple[str, ...]:
    """The labels a run may stand for: as written, and as the extractor names it ("the X service" → X)."""
    return tuple(dict.fromkeys(f for t in texts for f in (t, canonical_name(t).label) if f.strip()))


def _segments(question: str, reserved: Sequence[tuple[int, int]]) -> list[list[re.Match[str]]]:
    """The question's words in runs that no punctuation and no reserved span (a name found whole) breaks."""
    stops = [m.start() for m in _BREAK.finditer(question)]
    segments: list[list[re.Match[str]]] = [[]]
    for count, word in enumerate(_WORD.finditer(question)):
        if count >= SCAN_WORDS:
            break
        inside = any(start < word.end() and word.start() < end for start, end in reserved)
        after = segments[-1][-1].end() if segments[-1] else -1
        if inside or any(after <= at < word.start() for at in stops) or \
                any(after <= start < word.start() for start, _ in reserved):
            segments.append([])
        if not inside:
            segments[-1].append(word)
    return [s for s in segments if s]


def _how(phrase: Phrase, entity: str, label: str) -> str:
    if "@" in phrase.text:
        return "its handle"
    if entity != entity_uri(phrase.text):
        return "read as the extractor reads names"
    return "its label" if phrase.text == label else "its label, in any case"


def _bare(word: str) -> str:
    return _POSSESSIVE.sub("", word).rstrip(".")


def _writes_names_with_capitals(question: str) -> bool:
    """Whether some word past a sentence's first is capitalised (in a question not written all in capitals):
    the asker marks names with capitals."""
    if not any(c.islower() for c in question):
        return False
    for sentence in re.split(r"[.?!]\s+", question):
        words = _WORD.findall(sentence)
        if any(any(c.isupper() for c in w) for w in words[1:] if w != "I"):
            return True
    return False


def _accepted(phrase: Phrase, label: str, named: bool, cased: bool) -> bool:
    """Whether a label matched through `phrase` is the entity the question means (see the module's rules)."""
    if phrase.written_as_name or named:
        return True
    distinctive = any(c.isdigit() or not (c.isalpha() or c.isspace()) for c in label) or \
        any(c.isupper() for w in label.split() for c in w[1:])
    return distinctive or (not cased and any(c.isupper() for c in label))


def _non_overlapping(hits: list[tuple[Phrase, str, str]]) -> list[tuple[Phrase, str, str]]:
    """The longest runs first, then each run that overlaps none kept; in the question's order."""
    kept: list[tuple[Phrase, str, str]] = []
    for hit in sorted(hits, key=lambda h: (-(h[0].end - h[0].start), h[0].start)):
        phrase = hit[0]
        if all(phrase.end <= k[0].start or k[0].end <= phrase.start or k[0] == phrase for k in kept):
            if not any(k[1] == hit[1] for k in kept):
                kept.append(hit)
    return sorted(kept, key=lambda h: h[0].start)


def _unmatched(phrases: Sequence[Phrase], kept: Sequence[tuple[Phrase, str, str]]) -> list[str]:
    """Names the question gives whole (capitalised, quoted) that no kept match covers."""
    covered = [(p.start, p.end) for p, _, _ in kept]
    return [p.text for p in phrases if p.given and not any(s < p.end and p.start < e for s, e in covered)]


@dataclass
class _Marks:
    named: set[str]  # typed, aliased or with a handle: the extractor read a name there
    canonical: dict[str, tuple[str, str]]  # alias entity -> (the entity it is a name of, its label)


async def _marks(tools, entities: Sequence[str]) -> _Marks:
    """What the graph says of the matched entities that shows they are names, and whose alias each is."""
    marks = _Marks(set(), {})
    unique = list(dict.fromkeys(entities))
    if not unique:
        return marks
    values = " ".join(f"<{e}>" for e in unique)
    query = (f"SELECT ?e ?typed ?canon ?cl ?other WHERE {{ VALUES ?e {{ {values} }} "
             f"OPTIONAL {{ ?e <{RDF.type.iri}> ?typed }} OPTIONAL {{ ?e <{ALIAS_PREDICATE}> ?other }} "
             f"OPTIONAL {{ ?canon <{ALIAS_PREDICATE}> ?e OPTIONAL {{ ?canon <{RDFS.label.iri}> ?cl }} }} }}")
    try:
        rows = (await tools.sparql(query, limit=len(unique) * 20, timeout=10)).bindings
    except RemoteError:  # an engine without SPARQL: the same, one pattern at a time
        rows = [row for e in unique for row in await _mark_rows(tools, e)]
    for row in rows:
        entity = _iri(row.get("e"))
        if entity and any(_iri(row.get(k)) for k in ("typed", "canon", "other")):
            marks.named.add(entity)
        canon = _iri(row.get("canon"))
        if entity and canon and canon.startswith(ENTITY_BASE) and entity not in marks.canonical:
            label = row.get("cl")
            marks.canonical[entity] = (canon, label.value if isinstance(label, LiteralTerm) else canon)
    return marks


async def _mark_rows(tools, entity: str) -> list[dict]:
    node = IriTerm(iri=entity)
    rows: list[dict] = [{"e": node, "typed": t.o} for t in await tools.match(s=node, p=RDF.type, limit=1)]
    rows += [{"e": node, "other": t.o} for t in await tools.match(s=node, p=IriTerm(iri=ALIAS_PREDICATE), limit=1)]
    for t in await tools.match(p=IriTerm(iri=ALIAS_PREDICATE), o=node, limit=1):
        label = await tools.labels([t.s.iri]) if isinstance(t.s, IriTerm) else {}
        rows.append({"e": node, "canon": t.s, "cl": literal(label[t.s.iri]) if label else None})
    return rows


async def _handle_hits(tools, question: str) -> list[tuple[Phrase, str, str]]:
    """The entities holding the @handles and e-mail addresses the question writes."""
    hits = []
    for handle in dict.fromkeys(handles_in(question[:2000])):
        start = question.find(handle)
        phrase = Phrase(handle, start, start + len(handle), (handle,), True)
        for entity, label in await _holders(tools, handle):
            hits.append((phrase, entity, label))
    return hits


async def _holders(tools, handle: str) -> list[tuple[str, str]]:
    """(entity, label) of the entities with this handle, as written or in lower case."""
    found: list[str] = []
    for form in dict.fromkeys([handle, handle.lower()]):
        for t in await tools.match(p=TG.contactHandle, o=literal(form), limit=20):
            if isinstance(t.s, IriTerm) and t.s.iri.startswith(ENTITY_BASE) and t.s.iri not in found:
                found.append(t.s.iri)  # a person or team, not the CODEOWNERS rule that names the handle
    labels = await tools.labels(found) if found else {}
    return [(e, labels.get(e) or handle) for e in found]


def _iri(term) -> str | None:
    return term.iri if isinstance(term, IriTerm) else None

