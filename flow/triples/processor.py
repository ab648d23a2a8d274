"""triples: writes the quads other processors send, answers pattern and read-only SPARQL queries,
and forgets a document on the librarian's request. The engine comes from settings.

Once a change to a collection's default graph is stored, it announces it as GraphUpdate events,
so indexes built from the graph (the keyword index) follow it.

It also keeps the graph's history (base/temporal/keeper.py: when each fact was learned, held and
ended, and supersession of single-valued predicates), answers the temporal service from it, and keeps
the queue of doubtful extractions (base/review/) that a reviewer approves into the graph or rejects."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterable, Sequence

from tracegraph.base.error_text import bounded_error
from tracegraph.base.errors import ConfigError
from tracegraph.base.provenance.extraction import failed_indexing_triples
from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Consumer, Producer, Service
from tracegraph.base.provenance.vocab import RDF, TG
from tracegraph.base.stores.graph_edit import replace_in_graph
from tracegraph.base.stores.protocol import SOURCE_GRAPH, CollectionRef, TripleStore
from tracegraph.base.stores.terms import read_nquads
from tracegraph.base.stores.triples_registry import local_folder_for, triple_store_for
from tracegraph.base.review.queue import Approved, decide, enqueue, list_items
from tracegraph.base.temporal.keeper import Admission, Attribution, HistoryKeeper
from tracegraph.base.temporal.records import quoted_fact
from tracegraph.flow.triples.temporal import answer as temporal_answer
from tracegraph.flow.triples.functional import functional_predicates
from tracegraph.flow.triples.removal import remove_document
from tracegraph.flow.triples.tombstone import WritesInFlight, mark_removed, refused
from tracegraph.flow.store_folder import store_folder_held
from tracegraph.schemas.ingest import Metadata, Triples, TriplesBatch
from tracegraph.schemas.rdf import Triple, fact_key, iri, node_iris
from tracegraph.schemas.search import GraphUpdate
from tracegraph.schemas.dates import now
from tracegraph.schemas.temporal import ReviewRequest, ReviewResponse, TemporalRequest, TemporalResponse
from tracegraph.schemas.triples import (
    DocumentRemovalRequest, DocumentRemovalResponse, GraphEditRequest, GraphEditResponse, SparqlQueryRequest,
    SparqlQueryResponse, TriplesQueryRequest, TriplesQueryResponse,
)

log = logging.getLogger(__name__)

UPDATE_BATCH = 5000  # triples per GraphUpdate: a bulk load becomes many modest messages


def _ref(meta: Metadata | TriplesQueryRequest | SparqlQueryRequest | DocumentRemovalRequest | TemporalRequest
         | ReviewRequest) -> CollectionRef:
    return CollectionRef(meta.user, meta.collection)


def _in_default_graph(triples: Iterable[Triple]) -> list[Triple]:
    return [t for t in triples if not t.g]  # None, or upstream's ""


def _batches(triples: Sequence[Triple]) -> list[list[Triple]]:
    return [list(triples[i:i + UPDATE_BATCH]) for i in range(0, len(triples), UPDATE_BATCH)]


def new_passages(triples: Iterable[Triple]) -> list[str]:
    """The chunks whose records these triples create (the chunker's `a tg:Chunk` in the source graph)."""
    return [t.s.iri for t in triples
            if t.g == SOURCE_GRAPH and t.p == RDF.type and t.o == TG.Chunk and hasattr(t.s, "iri")]


def graph_updates(meta: Metadata, *, added: Sequence[Triple] = (), removed: Sequence[Triple] = (),
                  nodes: Sequence[str] = (), passages: Sequence[str] = ()) -> list[GraphUpdate]:
    """The events announcing a stored change, at most UPDATE_BATCH triples each; [] for no change.
    Extra `nodes` (e.g. orphaned entities) and the `passages` added or removed ride on the last event."""
    updates = [GraphUpdate(metadata=meta, added=part, nodes=node_iris(part)) for part in _batches(added)]
    updates += [GraphUpdate(metadata=meta, removed=part, nodes=node_iris(part)) for part in _batches(removed)]
    if nodes or passages:
        last = updates.pop() if updates else GraphUpdate(metadata=meta)
        updates.append(last.model_copy(update={"nodes": list(dict.fromkeys([*last.nodes, *nodes])),
                                               "passages": list(dict.fromkeys(passages))}))
    return updates


class TriplesProcessor(FlowProcessor):
    name = "triples"
    input = Consumer("input", Triples, prefetch=16)
    bulk = Consumer("bulk", TriplesBatch, prefetch=1)  # one bulk load at a time: RocksDB ingests faster so
    query = Service("query", TriplesQueryRequest, TriplesQueryResponse, prefetch=32)
    sparql = Service("sparql", SparqlQueryRequest, SparqlQueryResponse, prefetch=8)
    remove = Service("remove", DocumentRemovalRequest, DocumentRemovalResponse, prefetch=2)
    edit = Service("edit", GraphEditRequest, GraphEditResponse, prefetch=2)
    temporal = Service("temporal", TemporalRequest, TemporalResponse, prefetch=4)
    review = Service("review", ReviewRequest, ReviewResponse, prefetch=2)
    updates = Producer("graph-updates", GraphUpdate)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.store: TripleStore | None = None
        self.history: HistoryKeeper | None = None
        self.in_flight = WritesInFlight()

    async def start(self) -> None:
        folder = local_folder_for(self.settings)
        if folder is not None:  # before the store opens and before joining any flow
            await self._stack.enter_async_context(store_folder_held(
                self.name, folder, "use a Cassandra cluster (TG_TRIPLES_ENGINE=cassandra, TG_CASSANDRA_HOSTS)"))
        self.store = triple_store_for(self.settings)
        self._stack.push_async_callback(self.store.aclose)
        if self.settings.history:
            self.history = HistoryKeeper(self.store)
        await super().start()

    async def apply_config(self, version, config) -> None:
        if self.history is not None:
            self.history.functional = functional_predicates(config)
        await super().apply_config(version, config)

    async def store_admitted(self, ref: CollectionRef, meta: Metadata, triples: list[Triple],
                             confidence: dict[str, float] | None = None, stated: dict[str, str] | None = None,
                             **attribution) -> Admission:
        """Write quads with their history (when kept): the admitted quads first, then what leaves
        the current graph, so a redelivery after a crash finds the same decisions to make."""
        if self.history is None:
            await self.store.add(ref, triples)
            return Admission(write=triples, current=_in_default_graph(triples))
        async with self.history.writing(ref):
            admission = await self.history.admit(ref, meta, triples, confidence, stated=stated, **attribution)
            await admission.store(self.store, ref)
        return admission

    async def announce(self, flow: Flow, updates: list[GraphUpdate]) -> None:
        """Send after the store succeeded: an event never claims a change that was not made. A failed
        send fails the message, whose redelivery rewrites (idempotently) and sends again."""
        for update in updates:
            await flow[self.updates].send(update)

    async def gave_up(self, spec, message, flow: Flow, error: str) -> None:
        """Quads given up on are lost, so say so on their document, where `--wait` reads failures (a
        full disk is never given up on; this is a store failing for other reasons). Best effort: the
        store may refuse this write too, and the runtime has logged the give-up already."""
        if spec not in (self.input, self.bulk):
            return
        meta = message.metadata
        record = failed_indexing_triples(meta.root or meta.id, self.name, f"quads not stored: {error[:1000]}")
        try:
            await self.store.add(_ref(meta), record)
        except Exception as exc:
            log.error("triples: could not record the give-up on %s either: %s", meta.root or meta.id,
                      bounded_error(exc))

    @input.handler
    async def write(self, message: Triples, flow: Flow) -> None:
        ref = _ref(message.metadata)
        async with self.in_flight.writing(ref, message.metadata.root):
            if not await self.refused_late(ref, message):
                await self.write_live(message, flow)

    async def refused_late(self, ref: CollectionRef, message: Triples) -> bool:
        """Work derived from a removed document is refused (flow/triples/tombstone.py)."""
        if not await refused(self.store, ref, message.metadata.root, message.triples):
            return False
        log.info("refused %d quads for %s: document %s was removed", len(message.triples), message.metadata.id,
                 message.metadata.root)
        return True

    async def write_live(self, message: Triples, flow: Flow) -> None:
        admission = await self.store_admitted(_ref(message.metadata), message.metadata, message.triples,
                                              message.confidence, message.valid_from)
        await self.announce(flow, graph_updates(message.metadata, added=_in_default_graph(admission.write),
                                                removed=_in_default_graph(admission.displaced),
                                                passages=new_passages(message.triples)))
        if message.review:  # doubtful facts wait for a reviewer; one approved before goes straight in
            enqueued = await enqueue(self.store, _ref(message.metadata), message)
            for approved in enqueued.approved_again:
                await self.admit_approved(_ref(message.metadata), flow, approved)

    @bulk.handler
    async def write_bulk(self, message: TriplesBatch, flow: Flow) -> None:
        await self.store.add_nquads(_ref(message.metadata), message.nquads)
        quads = await asyncio.to_thread(read_nquads, message.nquads)
        displaced: list[Triple] = []
        if self.history is not None:
            async with self.history.writing(_ref(message.metadata)):
                admission = await self.history.admit(_ref(message.metadata), message.metadata, quads)
                await admission.store(self.store, _ref(message.metadata), written=True)
            displaced = admission.displaced
        await self.announce(flow, graph_updates(message.metadata, added=_in_default_graph(quads),
                                                removed=displaced, passages=new_passages(quads)))

    @query.handler
    async def answer_query(self, req: TriplesQueryRequest, flow: Flow) -> AsyncIterator[TriplesQueryResponse]:
        if req.around:
            found = await self.store.around(_ref(req), req.around, req.limit, req.g)
        else:
            found = await self.store.match(_ref(req), req.s, req.p, req.o, req.g, req.limit)
        yield TriplesQueryResponse(triples=found)

    @sparql.handler
    async def answer_sparql(self, req: SparqlQueryRequest, flow: Flow) -> AsyncIterator[SparqlQueryResponse]:
        result = await self.store.query(_ref(req), req.query, limit=req.limit,
                                        **({"timeout": req.timeout} if req.timeout else {}))
        yield SparqlQueryResponse(kind=result.kind, variables=list(result.variables),
                                  bindings=[dict(row) for row in result.rows], boolean=result.boolean,
                                  triples=list(result.triples), truncated=result.truncated)

    @remove.handler
    async def forget(self, req: DocumentRemovalRequest, flow: Flow) -> AsyncIterator[DocumentRemovalResponse]:
        earlier = await mark_removed(self.store, _ref(req), req.document, now())  # first: late work is refused
        await self.in_flight.drained(_ref(req), req.document)  # writes that checked before it landed
        removal = await remove_document(self.store, _ref(req), req.document)
        meta = Metadata(id=req.document, root=req.document, user=req.user, collection=req.collection)
        reinstated: list[Triple] = []
        if self.history is not None:  # after the removal: a value it had superseded comes back
            async with self.history.writing(_ref(req)):
                retraction = await self.history.retract(_ref(req), req.document)
                await self.store.add(_ref(req), retraction.write)
                if retraction.remove:
                    await self.store.remove(_ref(req), retraction.remove)
            reinstated = retraction.current
        await self.announce(flow, graph_updates(meta, added=reinstated, removed=removal.facts,
                                                nodes=removal.orphaned_entities, passages=removal.chunks))
        log.info("removed %s from %s/%s: %d quads, %d chunks, %d orphaned entities", req.document, req.user,
                 req.collection, removal.removed, len(removal.chunks), len(removal.orphaned_entities))
        yield DocumentRemovalResponse(removed=removal.removed, chunks=removal.chunks,
                                      orphaned_entities=removal.orphaned_entities, already_removed=earlier is not None)

    @temporal.handler
    async def answer_temporal(self, req: TemporalRequest, flow: Flow) -> AsyncIterator[TemporalResponse]:
        if self.history is None:
            raise ConfigError("this triples service keeps no history (TG_HISTORY=false): no point-in-time "
                              "queries or diffs")
        yield await temporal_answer(self.store, _ref(req), req)

    @review.handler
    async def answer_review(self, req: ReviewRequest, flow: Flow) -> AsyncIterator[ReviewResponse]:
        ref = _ref(req)
        if req.operation == "list":
            items, truncated = await list_items(self.store, ref, req.status, req.limit)
            yield ReviewResponse(items=items, truncated=truncated)
            return
        decision = await decide(self.store, ref, req.ids, req.operation == "approve", req.reviewer or "admin", now())
        for approved in decision.approved:
            await self.admit_approved(ref, flow, approved)
        for withdrawn in decision.withdrawn:
            await self.withdraw(ref, flow, withdrawn)
        yield ReviewResponse(changed=decision.changed, unknown=decision.unknown)

    async def admit_approved(self, ref: CollectionRef, flow: Flow, approved: Approved) -> None:
        """An approved fact joins the graph as if extracted, in its chunk's subgraph, its record
        attributed to the reviewer (recorded when they approved it)."""
        meta = Metadata(id=approved.chunk, root=approved.document, user=ref.user, collection=ref.collection)
        triples = [approved.fact, *approved.labels]
        if approved.subgraph:
            triples.append(Triple(s=iri(approved.subgraph), p=TG.contains, o=quoted_fact(approved.fact), g=SOURCE_GRAPH))
        admission = await self.store_admitted(
            ref, meta, triples, {fact_key(approved.fact): approved.confidence},
            attribution=Attribution(approved.reviewer, approved.reviewed_at, approved.item))
        await self.announce(flow, graph_updates(meta, added=_in_default_graph(admission.write),
                                                removed=_in_default_graph(admission.displaced)))

    async def withdraw(self, ref: CollectionRef, flow: Flow, withdrawn: Approved) -> None:
        """A fact approved, then rejected: out of its subgraph, out of the current graph unless another
        chunk states it, and its record retracted."""
        contains = Triple(s=iri(withdrawn.subgraph), p=TG.contains, o=quoted_fact(withdrawn.fact), g=SOURCE_GRAPH) \
            if withdrawn.subgraph else None
        removed: list[Triple] = []
        if contains is not None:
            await self.store.remove(ref, [contains])
        if not await self.store.match(ref, p=TG.contains, o=quoted_fact(withdrawn.fact), g=SOURCE_GRAPH, limit=1):
            removed = [withdrawn.fact]
            await self.store.remove(ref, removed)
        if self.history is not None:
            async with self.history.writing(ref):
                await self.store.add(ref, await self.history.withdraw(ref, withdrawn.fact, withdrawn.document))
        meta = Metadata(id=withdrawn.chunk, root=withdrawn.document, user=ref.user, collection=ref.collection)
        await self.announce(flow, graph_updates(meta, removed=removed))

    @edit.handler
    async def edit_graph(self, req: GraphEditRequest, flow: Flow) -> AsyncIterator[GraphEditResponse]:
        """Drop, then add, in a derived graph. No graph-update event: nothing derived from the default
        graph changes, and a processor must not be woken by its own writes."""
        removed, added = await replace_in_graph(self.store, _ref(req), req.graph, drop_subjects=req.drop_subjects,
                                                drop_all=req.drop_all, add=req.add)
        yield GraphEditResponse(removed=removed, added=added)
