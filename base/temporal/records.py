"""A fact record: one document's statement of a fact, with its transaction and valid times.

Records live in the history graph, beside the current (default) graph that queries see by default:

    <rec> rdf:reifies <<( s p o )>> ; tg:statedIn <doc> ;
          tg:recordedAt "…"^^xsd:dateTime ; tg:validFrom "…"^^xsd:dateTime ;
          [tg:extractionConfidence 0.8] [tg:retractedAt …] [tg:validUntil … ; tg:supersededBy <rec2> ; tg:supersededAt …]

The fact itself is also kept in the history-facts graph, so an answer as of an earlier date can walk
the graph as it stood. A record's IRI is derived from (fact, document, recorded time): processing the
same document again writes the same quads, and re-adding a removed document starts a new record.
A new record is built as N-Quads text (`record_nquads`), so admitting a message's facts builds no
model object per quad; the quads stored are the same as when they were built as models.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracegraph.base.provenance.uris import fact_record_uri
from tracegraph.base.provenance.vocab import RDF, TG, XSD
from tracegraph.base.stores.protocol import HISTORY_FACTS_GRAPH, HISTORY_GRAPH
from tracegraph.base.stores.terms import read_nquads
from tracegraph.base.temporal.nquads import literal_nt, quad_line, term_nt
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Term, Triple, TripleTerm, fact_key, iri, literal


def record_uri(fact: Triple, document: str, *episode: str) -> str:
    return fact_record_uri(fact_key(fact), document, *episode)


def instant(value: str) -> LiteralTerm:
    return literal(value, XSD.dateTime.iri)


def bare(fact: Triple) -> Triple:
    """The fact without its graph: what a triple term quotes."""
    return Triple(s=fact.s, p=fact.p, o=fact.o) if fact.g else fact


def quoted_fact(fact: Triple) -> TripleTerm:
    return TripleTerm(triple=bare(fact))


def _h(s: Term, p: IriTerm, o: Term) -> Triple:
    return Triple(s=s, p=p, o=o, g=HISTORY_GRAPH)


_REIFIES, _STATED_IN, _RECORDED_AT, _VALID_FROM, _CONFIDENCE = (
    f"<{t.iri}>" for t in (RDF.reifies, TG.statedIn, TG.recordedAt, TG.validFrom, TG.extractionConfidence))


def instant_nt(value: str) -> str:
    return literal_nt(value, XSD.dateTime.iri)


def record_nquads(record: str, fact: Triple, document: str, recorded_at: str, valid_from: str,
                  confidence: float | None = None) -> str:
    """The N-Quads lines of a new record, and of the fact in the history-facts graph: the one definition
    of a record's quads (admission writes the text as it is; `record_quads` reads it back)."""
    r, spo = f"<{record}>", f"{term_nt(fact.s)} {term_nt(fact.p)} {term_nt(fact.o)}"
    lines = [quad_line(r, _REIFIES, f"<<( {spo} )>>", HISTORY_GRAPH), quad_line(r, _STATED_IN, f"<{document}>", HISTORY_GRAPH),
             quad_line(r, _RECORDED_AT, instant_nt(recorded_at), HISTORY_GRAPH),
             quad_line(r, _VALID_FROM, instant_nt(valid_from), HISTORY_GRAPH), f"{spo} <{HISTORY_FACTS_GRAPH}> .\n"]
    if confidence is not None:
        lines.append(quad_line(r, _CONFIDENCE, literal_nt(f"{confidence:.3f}", XSD.decimal.iri), HISTORY_GRAPH))
    return "".join(lines)


def record_quads(record: str, fact: Triple, document: str, recorded_at: str, valid_from: str,
                 confidence: float | None = None) -> list[Triple]:
    """The quads of a new record, and the fact in the history-facts graph, as wire triples."""
    return read_nquads(record_nquads(record, fact, document, recorded_at, valid_from, confidence))


def retraction(record: str, at: str) -> Triple:
    return _h(iri(record), TG.retractedAt, instant(at))


def supersession(record: str, until: str, by: str, at: str) -> list[Triple]:
    r = iri(record)
    return [_h(r, TG.validUntil, instant(until)), _h(r, TG.supersededBy, iri(by)), _h(r, TG.supersededAt, instant(at))]


ENDING = (TG.validUntil, TG.supersededBy, TG.supersededAt)  # what supersession writes, and reopening drops


@dataclass
class Record:
    """A record as read back from the history graph."""

    uri: str
    fact: Triple
    document: str = ""
    recorded_at: str = ""
    valid_from: str = ""
    retracted_at: str | None = None
    valid_until: str | None = None
    superseded_by: str | None = None
    superseded_at: str | None = None
    confidence: float | None = None

    @property
    def active(self) -> bool:
        return self.retracted_at is None

    def holds(self, at: str, known: str | None = None) -> bool:
        """True if, as known at `known` (None: now), the fact held at valid time `at` by this record."""
        if known is not None and (self.recorded_at > known or (self.retracted_at or "~") <= known):
            return False
        if known is None and not self.active:
            return False
        ended = self.valid_until is not None and (known is None or (self.superseded_at or "") <= known)
        return self.valid_from <= at and not (ended and self.valid_until <= at)


_FIELDS = {TG.statedIn.iri: "document", TG.recordedAt.iri: "recorded_at", TG.validFrom.iri: "valid_from",
           TG.retractedAt.iri: "retracted_at", TG.validUntil.iri: "valid_until", TG.supersededBy.iri: "superseded_by",
           TG.supersededAt.iri: "superseded_at", TG.extractionConfidence.iri: "confidence"}


def _value(term: Term) -> str:
    return term.iri if isinstance(term, IriTerm) else getattr(term, "value", str(term))


def read_record(uri: str, quads: list[Triple]) -> Record | None:
    """A Record from its quads (`store.match(s=record, g=HISTORY_GRAPH)`); None without a fact."""
    fact = next((q.o.triple for q in quads if q.p == RDF.reifies and isinstance(q.o, TripleTerm)), None)
    if fact is None:
        return None
    record = Record(uri=uri, fact=fact)
    for q in quads:
        name = _FIELDS.get(q.p.iri)
        if name == "confidence":
            record.confidence = float(_value(q.o))
        elif name == "recorded_at":  # the earliest, should a record ever carry two
            record.recorded_at = min(filter(None, [record.recorded_at, _value(q.o)]))
        elif name:
            setattr(record, name, _value(q.o))
    return record
