"""A seeded corpus of dated documents for the history benchmark (bench/temporal.py).

Facts link entities with power-law-ish degrees, 20 to a document like one extracted chunk. Documents
are added to the library in order over ~3 years (Metadata.time, strictly increasing), each dated up to
60 days before it was added (Metadata.date), so dates sometimes arrive out of order. Three predicates
are single-valued (`is owned by`, `status`, `version`). A `history` share of the facts later leaves
the current graph: most because a newer document gives a single-valued slot a new value (superseded),
the rest because their document is removed (retracted). Facts are kept as integer arrays and become
Triples one document at a time."""

from __future__ import annotations

import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import pyoxigraph as ox
from synthetic_graph import (
    pseudo_words,  # bench/ is on sys.path when a bench script runs
)
from tracegraph.base.provenance.extraction import (
    Component,
    chunk_triples,
    subgraph_triples,
)
from tracegraph.base.provenance.uris import (
    chunk_uri,
    entity_uri,
    relation_uri,
    subgraph_uri,
)
from tracegraph.base.provenance.vocab import RDFS
from tracegraph.base.stores.protocol import CollectionRef, TripleStore
from tracegraph.base.stores.terms import quad_to_ox
from tracegraph.base.temporal.keeper import HistoryKeeper, document_quads
from tracegraph.base.temporal.records import record_quads, record_uri
from tracegraph.flow.triples.removal import remove_document
from tracegraph.schemas.base import prevalidated
from tracegraph.schemas.dates import canonical
from tracegraph.schemas.ingest import Metadata
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Triple, fact_key

FUNCTIONAL = ["is owned by", "status", "version"]
MULTI = ["depends on", "is part of", "supplies", "located in", "works with", "manages", "uses", "produces",
         "hosts", "funds", "partners with", "reports to"]
STATUSES = ["active", "deprecated", "retired", "planned", "beta", "frozen", "migrating", "sunset"]
VERSIONS = [f"{major}.{minor}" for major in range(1, 10) for minor in range(10)]
START = datetime(2023, 1, 1, tzinfo=UTC)
SPAN = timedelta(days=3 * 365)
MAX_LAG = timedelta(days=60)  # how long before it reached the library a document is dated
ENTITIES_PER_FACT = 0.15
SKEW = 2.0  # entity index = n * u**SKEW: a few hubs, a long tail
NEW_SLOTS = 0.10  # share of facts that give a single-valued slot its first value
SUPERSEDED_SHARE = 0.7  # of the history share; the rest is retracted with its documents
CONFIDENCE = 0.9
CHUNKER, EXTRACTOR = Component("chunker", "bench"), Component("kg-extract", "bench")
DOCUMENT_BASE = "urn:trustgraph:doc:bench-"


def _iri(value: str) -> IriTerm:
    return prevalidated(IriTerm, {"kind": "i", "iri": value})


def _literal(value: str) -> LiteralTerm:
    return prevalidated(LiteralTerm, {"kind": "l", "value": value, "datatype": None, "language": None})


def _triple(s: IriTerm, p: IriTerm, o: IriTerm | LiteralTerm) -> Triple:
    return prevalidated(Triple, {"s": s, "p": p, "o": o, "g": None})


@dataclass(frozen=True)
class Message:
    """One document as the triples processor receives it (one chunk's extraction)."""

    meta: Metadata
    triples: list[Triple]
    confidence: dict[str, float]
    facts: int


@dataclass
class Corpus:
    """Facts as arrays (`o` < 0 is the literal VALUES[-o - 1]), 20 per document in library order;
    `retractions[i]`: the documents removed, and when, right after document i is added."""

    per_document: int
    entities: list[str]
    predicates: list[str]
    s: np.ndarray
    p: np.ndarray
    o: np.ndarray
    dates: list[str]
    times: list[str]
    retractions: dict[int, list[tuple[int, str]]]
    updates: int  # facts that gave an existing slot a new value

    @property
    def facts(self) -> int:
        return len(self.s)

    @property
    def documents(self) -> int:
        return len(self.times)

    @property
    def functional_iris(self) -> frozenset[str]:
        return frozenset(relation_uri(label) for label in FUNCTIONAL)

    def document(self, i: int) -> str:
        return f"{DOCUMENT_BASE}{i:07d}"

    def retracted_facts(self) -> int:
        return sum(self._size(doc) for pairs in self.retractions.values() for doc, _ in pairs)

    def _size(self, i: int) -> int:
        return min(self.per_document, self.facts - i * self.per_document)

    def fact(self, k: int) -> tuple[str, str, str | None, str | None]:
        """(subject IRI, predicate IRI, object IRI or None, literal or None) of fact k."""
        o = int(self.o[k])
        obj, value = (entity_uri(self.entities[o]), None) if o >= 0 else (None, VALUES[-o - 1])
        return entity_uri(self.entities[int(self.s[k])]), relation_uri(self.predicates[int(self.p[k])]), obj, value

    def meta(self, i: int) -> Metadata:
        return Metadata(id=chunk_uri(self.document(i), 1, 2000, 100), root=self.document(i), user="bench",
                        collection="history", time=self.times[i], date=self.dates[i])

    def message(self, i: int, shape: str = "full") -> Message:
        """Document i as its extraction message: `facts` only; with `labels` (rdfs:label of every entity
        and predicate named); or `full`, which adds the chunk and its subgraph in urn:graph:source
        (`tg:contains` per fact, `tg:mentions` per entity, the activities)."""
        doc, time, meta = self.document(i), self.times[i], self.meta(i)
        chunk = meta.id
        facts: list[Triple] = []
        labels: dict[str, str] = {}
        for k in range(i * self.per_document, i * self.per_document + self._size(i)):
            s, p, o, value = self.fact(k)
            facts.append(_triple(_iri(s), _iri(p), _iri(o) if o else _literal(value)))
            labels[p] = self.predicates[int(self.p[k])]
            labels[s] = self.entities[int(self.s[k])]
            if o:
                labels[o] = self.entities[int(self.o[k])]
        facts = list(dict.fromkeys(facts))
        triples = list(facts)
        if shape in ("labels", "full"):
            triples += [_triple(_iri(uri), RDFS.label, _literal(text)) for uri, text in labels.items()]
        if shape == "full":
            mentioned = [uri for uri in labels if uri.startswith(entity_uri(""))]
            triples += chunk_triples(chunk, doc, index=1, char_offset=0, char_length=1800, chunk_size=2000,
                                     chunk_overlap=100, component=CHUNKER, timestamp=time)
            triples += subgraph_triples(subgraph_uri(chunk, "llm"), chunk, facts, component=EXTRACTOR, timestamp=time,
                                        extractor="llm", llm_model="bench-model", mentions=mentioned)
        return Message(meta, triples, {fact_key(f): CONFIDENCE for f in facts}, len(facts))


VALUES = STATUSES + VERSIONS


def _value(rng: random.Random, predicate: str, entity: int) -> int:
    """An object code for a single-valued predicate: an entity for `is owned by`, else a literal."""
    if predicate == "status":
        return -1 - rng.randrange(len(STATUSES))
    if predicate == "version":
        return -1 - len(STATUSES) - rng.randrange(len(VERSIONS))
    return entity


def build(facts: int = 100_000, history: float = 0.10, per_document: int = 20, seed: int = 16) -> Corpus:
    """The corpus for (facts, history, per_document, seed); the same arguments give the same corpus."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    n = max(100, round(facts * ENTITIES_PER_FACT))
    words = pseudo_words(max(200, int(np.sqrt(n * 2)) + 50), seed)
    names: dict[str, None] = {}
    while len(names) < n:
        names.setdefault(f"{rng.choice(words)} {rng.choice(words)}")
    entities = list(names)
    predicates = FUNCTIONAL + MULTI
    draws = np.minimum((n * nrng.random((2, facts)) ** SKEW).astype(np.int64), n - 1)
    s, o = draws[0].copy(), draws[1].copy()
    p = np.empty(facts, dtype=np.int64)
    documents = -(-facts // per_document)
    update_share = history * SUPERSEDED_SHARE
    slots: list[tuple[int, int]] = []
    value: dict[tuple[int, int], int] = {}
    updates = 0
    for i in range(documents):
        ready, used = len(slots), set()  # only slots of earlier documents are updated
        for k in range(i * per_document, min(facts, (i + 1) * per_document)):
            if rng.random() < update_share + NEW_SLOTS:
                # A new slot may land on an existing one (hubs): updates are paced to stay at their share.
                update = ready and updates < update_share * (k + 1)
                slot = slots[rng.randrange(ready)] if update else (int(s[k]), rng.randrange(len(FUNCTIONAL)))
                if slot not in used:
                    used.add(slot)
                    new = _value(rng, FUNCTIONAL[slot[1]], int(o[k]))
                    while slot in value and new == value[slot]:
                        new = _value(rng, FUNCTIONAL[slot[1]], rng.randrange(n))
                    if slot in value:
                        updates += 1
                    else:
                        slots.append(slot)
                    value[slot] = new
                    s[k], p[k], o[k] = slot[0], slot[1], new
                    continue
            p[k] = len(FUNCTIONAL) + min(int(len(MULTI) * rng.random() ** 1.5), len(MULTI) - 1)
            if o[k] == s[k]:
                o[k] = (o[k] + 1) % n
    step = SPAN / documents
    times = [START + MAX_LAG + step * i for i in range(documents)]
    dates = [canonical(t - MAX_LAG * rng.random()) for t in times]
    retractions: dict[int, list[tuple[int, str]]] = {}
    removed = round(documents * history * (1 - SUPERSEDED_SHARE))
    for doc in sorted(rng.sample(range(int(documents * 0.95)), min(removed, int(documents * 0.95)))):
        after = min(documents - 1, doc + rng.randint(1, max(1, documents // 10)))
        retractions.setdefault(after, []).append((doc, canonical(times[after] + timedelta(seconds=1))))
    return Corpus(per_document, entities, predicates, s, p, o, dates, [canonical(t) for t in times], retractions,
                  updates)


def span() -> tuple[datetime, datetime]:
    """The earliest date and the latest library time any corpus can have."""
    return START, START + MAX_LAG + SPAN


async def preload(corpus: Corpus, documents: int, shape: str, off: TripleStore, on: TripleStore,
                  keeper: HistoryKeeper, ref: CollectionRef, batch: int = 500) -> int:
    """Documents [0, documents) the fast way, to the same end state as writing them one by one: every
    message's quads, the document quads, and the records of the multi-valued facts (`record_quads`, which
    need no decision) as N-Quads in bulk into both stores; then the single-valued facts through
    `keeper.admit` in library order (they compete for slots), with the removals due meanwhile done as
    the triples processor's `forget` does. Returns the quads bulk-loaded into the history store."""
    functional = corpus.functional_iris
    loaded = 0
    began = time.perf_counter()
    for first in range(0, documents, batch):
        shared: list[ox.Quad] = []
        history: list[ox.Quad] = []
        for i in range(first, min(documents, first + batch)):
            message = corpus.message(i, shape)
            meta = message.meta
            shared += [quad_to_ox(t) for t in message.triples]
            history += [quad_to_ox(t) for t in document_quads(meta.root, meta.time, meta.date)]
            for fact in message.triples[:message.facts]:
                if fact.p.iri not in functional:  # named as admit names it: no document here is added twice
                    uri = record_uri(fact, meta.root)
                    history += [quad_to_ox(t) for t in record_quads(uri, fact, meta.root, meta.time, meta.date,
                                                                    message.confidence[fact_key(fact)])]
        text = ox.serialize(shared, format=ox.RdfFormat.N_QUADS).decode()
        await off.add_nquads(ref, text)
        loaded += await on.add_nquads(ref, text + ox.serialize(history, format=ox.RdfFormat.N_QUADS).decode())
    print(f"  … preload: {documents:,} documents in bulk, {time.perf_counter() - began:,.0f} s", file=sys.stderr, flush=True)
    for i in range(documents):
        if (i + 1) % max(1, documents // 10) == 0:
            print(f"  … preload: single-valued facts of {i + 1:,}/{documents:,} documents, "
                  f"{time.perf_counter() - began:,.0f} s", file=sys.stderr, flush=True)
        message = corpus.message(i, "facts")
        contested = [f for f in message.triples if f.p.iri in functional]
        if contested:
            admission = await keeper.admit(ref, message.meta, contested, message.confidence)
            await admission.store(on, ref)
        for doc, at in corpus.retractions.get(i, []):
            await forget(corpus.document(doc), at, off, on, keeper, ref)
    return loaded


async def forget(document: str, at: str, off: TripleStore, on: TripleStore, keeper: HistoryKeeper,
                 ref: CollectionRef) -> tuple[float, float]:
    """Remove a document as TriplesProcessor.forget does, from the store without history and the one
    with it (`remove_document`, then `keeper.retract`); the seconds each took."""
    started = time.perf_counter()
    await remove_document(off, ref, document)
    plain = time.perf_counter() - started
    started = time.perf_counter()
    await remove_document(on, ref, document)
    retraction = await keeper.retract(ref, document, at)
    await on.add(ref, retraction.write)
    if retraction.remove:
        await on.remove(ref, retraction.remove)
    return plain, time.perf_counter() - started
