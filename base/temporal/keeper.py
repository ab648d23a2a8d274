"""Keeps the history while facts are written and documents removed, through pattern queries and one
SPARQL query per batch of single-valued slots (every engine can do both).

Writing: each fact gets one record per document stating it (`records.py`), built as N-Quads text and
loaded in one call after the message's quads (`Admission.store`); a fact whose predicate is
single-valued (config type `functional-predicate`) competes with the other values of its subject's
slot, and only the value with the latest valid-from stays in the current graph; the others are closed
(`tg:validUntil`, `tg:supersededBy`, `tg:supersededAt`). Removing a document retracts its records and
re-decides the slots it won, so an older value it had superseded comes back.

A slot is decided from every active record of it, whatever order documents arrive in, so processing
again gives the same graph. Within one process a lock makes two writers of one slot take turns."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from tracegraph.base.errors import QueryError
from tracegraph.base.provenance.uris import user_uri
from tracegraph.base.provenance.vocab import PROV, RDF, TG, is_knowledge
from tracegraph.base.stores.protocol import (
    DEFAULT_GRAPH, HISTORY_FACTS_GRAPH, HISTORY_GRAPH, SOURCE_GRAPH, CollectionRef, TripleStore,
)
from tracegraph.base.temporal.records import (
    Record, instant, quoted_fact, read_record, record_nquads, record_quads, record_uri, retraction, supersession,
)
from tracegraph.schemas.dates import now
from tracegraph.schemas.ingest import Metadata
from tracegraph.base.temporal.query import records_for, slot_values, store_rows
from tracegraph.schemas.rdf import BlankTerm, IriTerm, Term, Triple, fact_key, iri

_MANY = 100_000
_SLOTS_PER_QUERY = 200


@dataclass(frozen=True)
class Attribution:
    """Who let a reviewed fact into the graph, and when (the record's recorded time)."""

    reviewer: str
    at: str
    item: str


@dataclass
class Admission:
    """What to store for one write: `write` (the message's quads, less the facts that lose their slot,
    plus document times, attributions and records reopened with a new end) and `records` (each new fact
    record as N-Quads text: a message's facts are many, and text skips building a model per quad), then
    `remove` (facts leaving the current graph, and end times replaced)."""

    write: list[Triple] = field(default_factory=list)
    remove: list[Triple] = field(default_factory=list)
    current: list[Triple] = field(default_factory=list)  # default-graph facts this write makes current
    displaced: list[Triple] = field(default_factory=list)  # facts leaving the current graph
    records: list[str] = field(default_factory=list)  # the new fact records, as N-Quads text (records.py)

    async def store(self, store: TripleStore, ref: CollectionRef, *, written: bool = False) -> None:
        """Write the quads and records, then remove what leaves the current graph, so a redelivery after a
        crash finds the same decisions to make. `written`: the message's default-graph quads are stored
        already (a bulk load wrote them as they came)."""
        await store.add(ref, [t for t in self.write if not written or t.g is not DEFAULT_GRAPH])
        if self.records:
            await store.add_nquads(ref, "".join(self.records))
        if self.remove:
            await store.remove(ref, self.remove)


@dataclass
class _Slot:
    write: list[Triple] = field(default_factory=list)
    remove: list[Triple] = field(default_factory=list)
    winners: list[Triple] = field(default_factory=list)  # the values holding now (several when stated together)
    losers: list[Triple] = field(default_factory=list)


def source_iri(root: str) -> str:
    """The IRI a record names its source by: a library document's own IRI, or, for a bulk load named
    by its file (`tg-load-turtle data/x.ttl`), a `urn:trustgraph:load:` IRI of that name.

    >>> source_iri("urn:trustgraph:doc:1f2e"), source_iri("data/x.ttl")
    ('urn:trustgraph:doc:1f2e', 'urn:trustgraph:load:data%2Fx.ttl')
    """
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|^`\\]+$", root):
        return root
    return f"urn:trustgraph:load:{quote(root, safe='')}"


def document_quads(document: str, recorded_at: str, valid_from: str) -> list[Triple]:
    d = iri(document)
    return [Triple(s=d, p=TG.recordedAt, o=instant(recorded_at), g=HISTORY_GRAPH),
            Triple(s=d, p=TG.validFrom, o=instant(valid_from), g=HISTORY_GRAPH)]


def attribution_quads(record: str, attribution: Attribution) -> list[Triple]:
    r = iri(record)
    return [Triple(s=r, p=PROV.wasAttributedTo, o=iri(user_uri(attribution.reviewer)), g=HISTORY_GRAPH),
            Triple(s=r, p=TG.reviewedAt, o=instant(attribution.at), g=HISTORY_GRAPH),
            Triple(s=r, p=TG.reviewedItem, o=iri(attribution.item), g=HISTORY_GRAPH)]


class HistoryKeeper:
    def __init__(self, store: TripleStore) -> None:
        self.store = store
        self.functional: frozenset[str] = frozenset()  # predicate IRIs that hold one value per subject
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    def writing(self, ref: CollectionRef) -> asyncio.Lock:
        """Held by the writer from a decision to the end of its store writes: a slot decided for one document
        must be in the store before another document's decision reads the slot, or both values would win."""
        return self._locks.setdefault((ref.user, ref.collection), asyncio.Lock())

    async def admit(self, ref: CollectionRef, meta: Metadata, triples: Sequence[Triple],
                    confidence: Mapping[str, float] | None = None,
                    attribution: Attribution | None = None, stated: Mapping[str, str] | None = None) -> Admission:
        """Records for the facts of one message. A fact holds from the date its own text states (`stated`,
        fact_key → date: "Ledger 4.3 ships on 2025-05-12"), else from its document's date. The caller holds
        `writing(ref)` until the admission is stored."""
        facts = [t for t in triples if t.g is DEFAULT_GRAPH and is_knowledge(t)]
        ingest = facts or any(t.g == SOURCE_GRAPH for t in triples)  # not a trace event or an answer's record
        if not meta.root or not ingest:
            return Admission(write=list(triples), current=[t for t in triples if t.g is DEFAULT_GRAPH])
        meta = meta.model_copy(update={"root": source_iri(meta.root)})
        recorded = (attribution.at if attribution else None) or meta.time or now()
        valid_from = meta.date or await self.document_date(ref, meta.root) or recorded
        admission = Admission(write=list(triples))
        if not attribution:
            admission.write += document_quads(meta.root, meta.time or recorded, valid_from)
        incoming: list[Record] = []
        episode = recorded if facts and await self._was_retracted(ref, meta.root) else ""
        stated, confidence = stated or {}, confidence or {}
        for fact in facts:
            uri, key = record_uri(fact, meta.root, episode), fact_key(fact)
            holds_from = stated.get(key) or valid_from
            admission.records.append(record_nquads(uri, fact, meta.root, recorded, holds_from, confidence.get(key)))
            if attribution:
                admission.write += attribution_quads(uri, attribution)
            incoming.append(Record(uri=uri, fact=fact, document=meta.root, recorded_at=recorded, valid_from=holds_from))
        contested = [r for r in incoming if r.fact.p.iri in self.functional]
        if not contested:
            admission.current = facts
            return admission
        losers: set[str] = set()
        by_slot: dict[tuple[str, str], list[Record]] = {}
        for r in contested:
            by_slot.setdefault((str(r.fact.s), str(r.fact.p)), []).append(r)
        history = await self._slots_records(ref, [(rs[0].fact.s, rs[0].fact.p) for rs in by_slot.values()])
        for key, records in by_slot.items():
            s, p = records[0].fact.s, records[0].fact.p
            slot = await self._decide(ref, s, p, records, at=recorded,  # learned when the superseding document was
                                      history=history.get(key))
            admission.write += slot.write
            admission.remove += slot.remove
            admission.displaced += [f for f in slot.losers]
            losers |= {fact_key(f) for f in slot.losers}
        if losers:
            admission.write = [t for t in admission.write if t.g is not DEFAULT_GRAPH or fact_key(t) not in losers]
        admission.current = [f for f in facts if fact_key(f) not in losers] if losers else facts
        current = {fact_key(c) for c in admission.current}
        admission.remove = [t for t in admission.remove if t.g is not DEFAULT_GRAPH or fact_key(t) not in current]
        return admission

    async def retract(self, ref: CollectionRef, document: str, at: str | None = None) -> Admission:
        """The document's records end at `at` (now); the slots they held are decided again. Returns
        the quads to write and remove, and the facts that became current again."""
        at = at or now()
        result = Admission(write=[Triple(s=iri(document), p=TG.retractedAt, o=instant(at), g=HISTORY_GRAPH)])
        records = [r for r in await self._records_stated_in(ref, document) if r.active]
        result.write += [retraction(r.uri, at) for r in records]
        slots = dict.fromkeys((r.fact.s, r.fact.p) for r in records if r.fact.p.iri in self.functional)
        history = await self._slots_records(ref, list(slots))
        for s, p in slots:
            slot = await self._decide(ref, s, p, [], retired={r.uri for r in records}, at=at,
                                      history=history.get((str(s), str(p))))
            result.write += slot.write
            result.remove += slot.remove
            result.current += slot.winners
            result.write += slot.winners
        return result

    async def withdraw(self, ref: CollectionRef, fact: Triple, document: str, at: str | None = None) -> list[Triple]:
        """Retractions of the document's active records of one fact (an approval taken back)."""
        found = await self.store.match(ref, p=RDF.reifies, o=quoted_fact(fact), g=HISTORY_GRAPH, limit=_MANY)
        records = [r for t in found if isinstance(t.s, IriTerm) and (r := await self._record(ref, t.s.iri))]
        return [retraction(r.uri, at or now()) for r in records if r.active and r.document == document]

    async def _was_retracted(self, ref: CollectionRef, document: str) -> bool:
        """Whether the document was removed before: its statements now are new records."""
        return bool(await self.store.match(ref, s=iri(document), p=TG.retractedAt, g=HISTORY_GRAPH, limit=1))

    async def document_date(self, ref: CollectionRef, document: str) -> str | None:
        found = await self.store.match(ref, s=iri(document), p=TG.validFrom, g=HISTORY_GRAPH, limit=1)
        return found[0].o.value if found else None

    async def _records_stated_in(self, ref: CollectionRef, document: str) -> list[Record]:
        stated = await self.store.match(ref, p=TG.statedIn, o=iri(document), g=HISTORY_GRAPH, limit=_MANY)
        return [r for t in stated if isinstance(t.s, IriTerm) and (r := await self._record(ref, t.s.iri))]

    async def _record(self, ref: CollectionRef, uri: str) -> Record | None:
        return read_record(uri, await self.store.match(ref, s=iri(uri), g=HISTORY_GRAPH, limit=1000))

    async def _slot_records(self, ref: CollectionRef, s, p) -> list[Record]:
        """Every record of every value this subject's predicate ever had."""
        records: list[Record] = []
        for value in await self.store.match(ref, s=s, p=p, g=HISTORY_FACTS_GRAPH, limit=_MANY):
            fact = Triple(s=s, p=p, o=value.o)
            for t in await self.store.match(ref, p=RDF.reifies, o=quoted_fact(fact), g=HISTORY_GRAPH, limit=_MANY):
                if isinstance(t.s, IriTerm) and (record := await self._record(ref, t.s.iri)):
                    records.append(record)
        return records

    async def _slots_records(self, ref: CollectionRef, slots: Sequence[tuple[Term, IriTerm]]
                             ) -> dict[tuple[str, str], list[Record]]:
        """`_slot_records` of many slots in two queries per batch. A slot missing from the answer is read
        by pattern lookups in `_decide`: a blank subject (a query cannot name it), or every slot on an
        engine without SPARQL (Cassandra)."""
        named = [(s, p) for s, p in slots if not isinstance(s, BlankTerm)]
        found: dict[tuple[str, str], list[Record]] = {(str(s), str(p)): [] for s, p in named}
        rows = store_rows(self.store, ref)
        try:
            for i in range(0, len(named), _SLOTS_PER_QUERY):
                facts = await slot_values(rows, named[i:i + _SLOTS_PER_QUERY])
                for records in (await records_for(rows, facts)).values() if facts else ():
                    for record in records:
                        found[(str(record.fact.s), str(record.fact.p))].append(record)
        except QueryError:
            return {}
        return found

    async def _decide(self, ref: CollectionRef, s, p, incoming: Iterable[Record],
                      retired: set[str] = frozenset(), at: str | None = None,
                      history: list[Record] | None = None) -> _Slot:
        """The value with the latest valid-from wins the slot, with any value valid from the same instant
        ("Ann and Bo lead Tax" holds both); every other active record ends where the next different value
        begins. A record whose end must change is not edited: it is retracted and a new record (an episode)
        carries the new end, so the graph as known earlier stays answerable."""
        known = {r.uri: r for r in (await self._slot_records(ref, s, p) if history is None else history)}
        known.update({r.uri: r for r in incoming if r.uri not in known})
        active = sorted((r for r in known.values() if r.active and r.uri not in retired),
                        key=lambda r: (r.valid_from, r.recorded_at, r.uri))
        slot = _Slot()
        if not active:
            return slot
        winner = active[-1]
        held = {str(r.fact.o) for r in active if r.valid_from == winner.valid_from}
        slot.winners = list({str(r.fact.o): Triple(s=s, p=p, o=r.fact.o) for r in active
                             if str(r.fact.o) in held}.values())
        at = at or now()
        for i, record in enumerate(active):
            later = next((r for r in active[i + 1:] if str(r.fact.o) != str(record.fact.o)
                          and r.valid_from > record.valid_from), None)
            if (record.valid_until, record.superseded_by) == ((later.valid_from, later.uri) if later else (None, None)):
                continue
            ending = record
            if record.valid_until is not None or record.superseded_by is not None:
                ending = Record(uri=record_uri(record.fact, record.document, record.recorded_at, at),
                                fact=record.fact, document=record.document, valid_from=record.valid_from)
                slot.write.append(retraction(record.uri, at))
                slot.write += record_quads(ending.uri, record.fact, record.document, at, record.valid_from,
                                           record.confidence)
            if later is not None:
                slot.write += supersession(ending.uri, later.valid_from, later.uri, at)
        slot.losers = list({fact_key(f): f for f in (Triple(s=s, p=p, o=r.fact.o) for r in active)
                            if str(f.o) not in held}.values())
        slot.remove += slot.losers
        return slot
