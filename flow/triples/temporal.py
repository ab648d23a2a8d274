"""The temporal service's answers: history query results (base/temporal/query.py) as TemporalFacts,
with their source documents, what superseded them, and readable labels."""

from __future__ import annotations

from collections.abc import Sequence

from tracegraph.base.provenance.vocab import RDFS, TG
from tracegraph.base.stores.protocol import DEFAULT_GRAPH, HISTORY_FACTS_GRAPH, HISTORY_GRAPH, CollectionRef, TripleStore
from tracegraph.base.temporal import query
from tracegraph.base.temporal.query import Change, FactState, store_rows
from tracegraph.schemas.dates import now
from tracegraph.schemas.rdf import IriTerm, iri
from tracegraph.schemas.temporal import TemporalChange, TemporalFact, TemporalRequest, TemporalResponse


async def _superseders(store: TripleStore, ref: CollectionRef, states: Sequence[FactState]) -> dict[str, str]:
    """record IRI → the document stating the record that superseded it."""
    found: dict[str, str] = {}
    for record in (r for s in states for r in s.records if r.superseded_by):
        stated = await store.match(ref, s=iri(record.superseded_by), p=TG.statedIn, g=HISTORY_GRAPH, limit=1)
        if stated:
            found[record.uri] = stated[0].o.iri
    return found


def _fact(state: FactState, superseders: dict[str, str]) -> TemporalFact:
    records = state.records
    untils = [r.valid_until for r in records if r.valid_until]
    retracted = [r.retracted_at for r in records if r.retracted_at]
    confidences = [r.confidence for r in records if r.confidence is not None]
    by = next((superseders[r.uri] for r in records if r.uri in superseders), None)
    return TemporalFact(s=state.fact.s, p=state.fact.p, o=state.fact.o,
                        valid_from=min(r.valid_from for r in records), valid_until=max(untils) if untils else None,
                        recorded_at=min(r.recorded_at for r in records),
                        retracted_at=max(retracted) if len(retracted) == len(records) else None,
                        sources=sorted({r.document for r in records if r.document}), superseded_by=by,
                        confidence=max(confidences) if confidences else None)


async def _labels(store: TripleStore, ref: CollectionRef, states: Sequence[FactState]) -> dict[str, str]:
    names = {t.iri for s in states for t in (s.fact.s, s.fact.p, s.fact.o) if isinstance(t, IriTerm)}
    labels: dict[str, str] = {}
    for name in sorted(names):
        for graph in (DEFAULT_GRAPH, HISTORY_FACTS_GRAPH):
            found = await store.match(ref, s=iri(name), p=RDFS.label, g=graph, limit=1)
            if found:
                labels[name] = found[0].o.value
                break
    return labels


async def answer(store: TripleStore, ref: CollectionRef, req: TemporalRequest) -> TemporalResponse:
    rows = store_rows(store, ref)
    if req.operation == "diff":
        changes, truncated = await query.diff(rows, req.from_, req.to, req.axis, req.limit)
        states = [s for c in changes for s in (c.fact, c.previous) if s is not None]
        superseders = await _superseders(store, ref, states)
        return TemporalResponse(changes=[_change(c, superseders) for c in changes], truncated=truncated,
                                labels=await _labels(store, ref, states), **{"from": req.from_}, to=req.to)
    at = req.at or now()
    states, truncated = await query.snapshot(rows, at, req.known, req.subject, req.limit)
    superseders = await _superseders(store, ref, states)
    return TemporalResponse(facts=[_fact(s, superseders) for s in states], truncated=truncated, at=at,
                            known=req.known, labels=await _labels(store, ref, states))


def _change(change: Change, superseders: dict[str, str]) -> TemporalChange:
    return TemporalChange(change=change.change, fact=_fact(change.fact, superseders),
                          previous=_fact(change.previous, superseders) if change.previous else None)
