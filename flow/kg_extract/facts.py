"""What an extractor finds in a chunk, and how it becomes triples with deterministic IRIs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import RDFS, SKOS
from tracegraph.schemas.rdf import Triple, iri, literal

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
class Relation:
    subject: str
    predicate: str
    object: str


@dataclass(slots=True)
class Extraction:
    """Entity labels with optional definitions, and relations between labels."""

    definitions: dict[str, str] = field(default_factory=dict)  # label -> definition ("" if none)
    relations: list[Relation] = field(default_factory=list)

    def labels(self) -> list[str]:
        seen = dict.fromkeys(self.definitions)
        for r in self.relations:
            seen.setdefault(r.subject)
            seen.setdefault(r.object)
        return list(seen)


def to_triples(extraction: Extraction) -> tuple[list[Triple], list[Triple]]:
    """(facts, labels): facts are what a subgraph `tg:contains` (relations and definitions);
    labels name the entities and predicates the chunk mentions, and are not claims of the source.
    An entity no fact mentions is still named: its subgraph `tg:mentions` it (`mentions`), which is
    how a passage that only names something links to it, and how removal finds its label."""
    facts: list[Triple] = []
    labels: dict[str, Triple] = {}

    def label(uri: str, text: str) -> None:
        labels.setdefault(uri, Triple(s=iri(uri), p=RDFS.label, o=literal(text)))

    for text, definition in extraction.definitions.items():
        if definition:
            facts.append(Triple(s=iri(entity_uri(text)), p=SKOS.definition, o=literal(definition)))
            label(entity_uri(text), text)
    for r in extraction.relations:
        label(relation_uri(r.predicate), r.predicate)
        label(entity_uri(r.subject), r.subject)
        label(entity_uri(r.object), r.object)
        facts.append(Triple(s=iri(entity_uri(r.subject)), p=iri(relation_uri(r.predicate)),
                            o=iri(entity_uri(r.object))))
    for text in extraction.labels():
        label(entity_uri(text), text)
    return list(dict.fromkeys(facts)), list(labels.values())


def mentions(extraction: Extraction) -> list[str]:
    """The IRIs of every entity the chunk names, in a fact or not."""
    return list(dict.fromkeys(entity_uri(text) for text in extraction.labels()))


def mentioned(extraction: Extraction) -> list[str]:
    """Labels of the entities the chunk names (each gets a label and a vector): those with a
    definition or in a relation first, then the ones only named."""
    names = [t for t, d in extraction.definitions.items() if d]
    for r in extraction.relations:
        names += [r.subject, r.object]
    return list(dict.fromkeys([*names, *extraction.labels()]))
