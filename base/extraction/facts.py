"""What an extractor finds in a chunk, how sure it is of each fact, and how the findings become
triples with deterministic IRIs, sorted by the flow's review threshold."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tracegraph.base.extraction.vocabulary import CODE_PATH, KIND_OF
from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import RDF, RDFS, SKOS, TG
from tracegraph.schemas.rdf import Triple, fact_key, iri, literal

_WRAPPING = "\"'`´“”‘’«»„ \t\n,;:-–—"
_POSSESSIVE = re.compile(r"(?<=\w)['’]s$|(?<=s)['’]$")


def normalise_label(text: str, possessive: bool = True) -> str:
    """A name without what surrounds it in prose: quotes, a possessive "'s", stray punctuation,
    runs of spaces. `“Hall’s”` and `Hall` are then one label, not two near-duplicates.

    >>> normalise_label(' "G. Stanley  Hall\\'s" ')
    'G. Stanley Hall'
    """
    text, before = " ".join(text.split()), None
    while text != before:
        before = text
        text = re.sub(r"(?<!\b[A-Z])\.+$", "", text.strip(_WRAPPING)).lstrip(".")  # "U.S." keeps its dot
        if possessive:
            text = _POSSESSIVE.sub("", text)
        if (text.endswith(")") and "(" not in text) or text.endswith("("):
            text = text[:-1]
        if text.startswith("(") and ")" not in text:
            text = text[1:]
    return text


@dataclass(frozen=True, slots=True)
class Confidence:
    """How sure an extractor is of one fact, in [0, 1], and what it rests on: the rule that made the
    fact, or the checks it failed. A reviewer reads `reason` when the value falls below the threshold."""

    value: float
    reason: str = ""


STATED = Confidence(1.0, "given as a fact")  # a hand-built Extraction: nothing to doubt
STATED_KIND = Confidence(0.9, "the text names the entity's kind or handle")
KIND_CLASSES = {"team": TG.Team, "person": TG.Person, "service": TG.Service, "datastore": TG.Datastore,
                "library": TG.Library, "platform": TG.Platform}


Lines = tuple[int, int]  # first and last line (1-based, inclusive) of the text a fact was read from


@dataclass(frozen=True, slots=True)
class Relation:
    """subject —predicate→ object, where the object is an entity label or, with `value`, a literal (a version,
    a status). Two relations are the same fact whatever their confidence, lines, phrase or date: `lines` are
    where the text states it, `phrase` the text's own words for the predicate ("stores user shopping carts
    in" for "writes to"), `since` the date (YYYY-MM-DD) the text says it holds from."""

    subject: str
    predicate: str
    object: str
    confidence: Confidence = field(default=STATED, compare=False)
    value: bool = False
    lines: Lines | None = field(default=None, compare=False)
    phrase: str = field(default="", compare=False)
    since: str = field(default="", compare=False)


@dataclass(slots=True)
class Extraction:
    """Entity labels with optional definitions, relations between labels, and what the text says of the
    entities themselves: their kind (service, team, person, datastore …), contact handles, and a context
    sentence to find them by (not a fact)."""

    definitions: dict[str, str] = field(default_factory=dict)  # label -> definition ("" if none)
    relations: list[Relation] = field(default_factory=list)
    definition_confidence: dict[str, Confidence] = field(default_factory=dict)  # label -> of its definition
    definition_lines: dict[str, Lines] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)  # label -> entity kind
    handles: dict[str, set[str]] = field(default_factory=dict)  # label -> @handles and e-mail addresses
    contexts: dict[str, str] = field(default_factory=dict)  # label -> a sentence naming it, for its embedding

    def labels(self) -> list[str]:
        seen = dict.fromkeys(self.definitions)
        for r in self.relations:
            seen.setdefault(r.subject)
            if not r.value:
                seen.setdefault(r.object)
        return list(seen)


def rated_facts(extraction: Extraction) -> dict[Triple, Confidence]:
    """The facts a subgraph may contain (definitions, then relations), each with the extractor's
    confidence in it; a fact found twice keeps its stronger finding."""
    rated: dict[Triple, Confidence] = {}

    def add(fact: Triple, confidence: Confidence) -> None:
        if fact not in rated or confidence.value > rated[fact].value:
            rated[fact] = confidence

    for text, definition in extraction.definitions.items():
        if definition:
            add(Triple(s=iri(entity_uri(text)), p=SKOS.definition, o=literal(definition)),
                extraction.definition_confidence.get(text, STATED))
    for r in extraction.relations:
        add(relation_triple(r), r.confidence)
    for text, kind in extraction.kinds.items():
        if kind in KIND_CLASSES:
            add(Triple(s=iri(entity_uri(text)), p=RDF.type, o=KIND_CLASSES[kind]), STATED_KIND)
    for text, handles in extraction.handles.items():
        for handle in sorted(handles):
            add(Triple(s=iri(entity_uri(text)), p=TG.contactHandle, o=literal(handle)), STATED_KIND)
    return rated


def relation_triple(r: Relation) -> Triple:
    """The triple a relation states: entity IRIs minted from the labels, a literal object for a value."""
    predicate = TG.codePath if r.predicate == CODE_PATH else iri(relation_uri(r.predicate))
    return Triple(s=iri(entity_uri(r.subject)), p=predicate,
                  o=literal(r.object) if r.value else iri(entity_uri(r.object)))


def placed_facts(extraction: Extraction) -> dict[Triple, Lines | None]:
    """Each fact with the lines it was first read from (None when the extractor could not place it)."""
    placed: dict[Triple, Lines | None] = {}
    for text, lines in extraction.definition_lines.items():
        definition = extraction.definitions.get(text)
        if definition:
            placed.setdefault(Triple(s=iri(entity_uri(text)), p=SKOS.definition, o=literal(definition)), lines)
    for r in extraction.relations:
        placed.setdefault(relation_triple(r), r.lines)
    return placed


def stated_dates(extraction: Extraction) -> dict[str, str]:
    """fact_key -> the date a relation's text says it holds from, for the relations that give one."""
    return {fact_key(relation_triple(r)): r.since for r in extraction.relations if r.since}


def phrases(extraction: Extraction) -> dict[str, str]:
    """fact_key -> the text's own words for a canonical relation, where they differ from its label."""
    return {fact_key(relation_triple(r)): r.phrase for r in extraction.relations
            if r.phrase and r.phrase != r.predicate}


def label_triples(extraction: Extraction) -> list[Triple]:
    """An `rdfs:label` for every entity and predicate the chunk names, whatever becomes of its facts."""
    labels: dict[str, Triple] = {}

    def label(uri: str, text: str) -> None:
        labels.setdefault(uri, Triple(s=iri(uri), p=RDFS.label, o=literal(text)))

    for text, definition in extraction.definitions.items():
        if definition:
            label(entity_uri(text), text)
    for r in extraction.relations:
        if r.predicate != CODE_PATH:  # stored as tg:codePath, a term of our vocabulary
            label(relation_uri(r.predicate), r.predicate)
        label(entity_uri(r.subject), r.subject)
        if not r.value:
            label(entity_uri(r.object), r.object)
    for text in extraction.labels():
        label(entity_uri(text), text)
    return list(labels.values())


def to_triples(extraction: Extraction) -> tuple[list[Triple], list[Triple]]:
    """(facts, labels): facts are what a subgraph `tg:contains` (relations and definitions);
    labels name the entities and predicates the chunk mentions, and are not claims of the source.
    An entity no fact mentions is still named: its subgraph `tg:mentions` it (`mentions`), which is
    how a passage that only names something links to it, and how removal finds its label."""
    return list(rated_facts(extraction)), label_triples(extraction)


@dataclass(frozen=True, slots=True)
class Triage:
    """Facts sorted by a review threshold: `accepted` go to the graph, `queued` to the review queue."""

    accepted: list[Triple]
    queued: list[Triple]
    confidence: dict[str, float]  # fact_key -> confidence, for every fact
    reasons: dict[str, str]  # fact_key -> why it is doubted, for the queued facts


def triage(rated: dict[Triple, Confidence], threshold: float) -> Triage:
    """Split rated facts at `threshold` (a fact at exactly the threshold is accepted). Values are
    rounded, so the same chunk always gives the same message.

    >>> fact = Triple(s=iri("urn:a"), p=iri("urn:p"), o=iri("urn:b"))
    >>> split = triage({fact: Confidence(0.21, "object 'b' not in the text")}, 0.3)
    >>> split.accepted, len(split.queued), split.reasons[fact_key(fact)]
    ([], 1, "object 'b' not in the text")
    """
    confidence = {fact_key(f): round(c.value, 3) for f, c in rated.items()}
    accepted = [f for f in rated if confidence[fact_key(f)] >= threshold]
    queued = [f for f in rated if confidence[fact_key(f)] < threshold]
    return Triage(accepted, queued, confidence, {fact_key(f): rated[f].reason for f in queued})


def strongest(relations: list[Relation]) -> list[Relation]:
    """Each relation once, in order of first finding, with the highest confidence it was found with."""
    kept: dict[Relation, Relation] = {}
    for r in relations:
        if r not in kept or r.confidence.value > kept[r].confidence.value:
            kept[r] = r
    return list(kept.values())


def mentions(extraction: Extraction) -> list[str]:
    """The IRIs of every entity the chunk names, in a fact or not; not a category it only says something is
    ("X is a song"): the passage graph would join every passage about a song through it."""
    categories = {r.object for r in extraction.relations if r.predicate == KIND_OF and not r.value}
    categories -= {name for r in extraction.relations if r.predicate != KIND_OF
                   for name in (r.subject, *(() if r.value else (r.object,)))}
    return list(dict.fromkeys(entity_uri(text) for text in extraction.labels() if text not in categories))


def mentioned(extraction: Extraction) -> list[str]:
    """Labels of the entities the chunk names (each gets a label and a vector): those with a
    definition or in a relation first, then the ones only named."""
    names = [t for t, d in extraction.definitions.items() if d]
    for r in extraction.relations:
        names += [r.subject] if r.value else [r.subject, r.object]
    return list(dict.fromkeys([*names, *extraction.labels()]))
