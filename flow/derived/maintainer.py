"""What the community and RAPTOR processors share: a structure derived from each collection's graph,
kept in a named graph of its own and kept current from the triples writer's graph-update events.

Updates that arrive close together (an ingest sends many) are absorbed in one refresh per collection
(micro-batching, TG_DERIVED_SETTLE seconds). An update is acknowledged only once the refresh it
joined has been stored through the triples service's confirmed `edit` request, so a processor killed
mid-refresh is sent the updates again and redoes the work; nothing is lost. The derived graph is the
state: a restarted processor reads it back and continues incrementally. One processor of each kind
per flow writes a collection's structure (a lock per collection orders refreshes and rebuilds).

An update given up after `max-attempts` (its upstream failing for longer than the retry window) marks
the collection behind; every TG_DERIVED_RECONCILE seconds each collection seen is checked for what its
structure misses or keeps too many of (`coverage`), and a gap is repaired (`repair`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from tracegraph.base.errors import TraceGraphError
from tracegraph.base.flow import Flow
from tracegraph.base.microbatch import MicroBatcher
from tracegraph.base.processor import FlowProcessor, _cancel
from tracegraph.base.provenance.query import now
from tracegraph.base.provenance.vocab import PROV
from tracegraph.base.retrieval.lookup_cache import LabelCache, VectorCache
from tracegraph.base.specs import Client, Consumer, Service, Spec
from tracegraph.flow.derived.coverage import BEHIND, CURRENT, REPAIRING, Coverage, state_of
from tracegraph.flow.retrieval_tools import BusRetrievalTools
from tracegraph.schemas.derived import DerivedRequest, DerivedResponse
from tracegraph.schemas.embeddings import EmbeddingsRequest, EmbeddingsResponse
from tracegraph.schemas.ingest import TextChunk
from tracegraph.schemas.llm import TextCompletionRequest, TextCompletionResponse
from tracegraph.schemas.rdf import IriTerm, Triple
from tracegraph.schemas.search import GraphUpdate
from tracegraph.schemas.triples import (
    MAX_EDIT_TRIPLES, GraphEditRequest, GraphEditResponse, SparqlQueryRequest, SparqlQueryResponse,
    TriplesQueryRequest, TriplesQueryResponse,
)

log = logging.getLogger(__name__)
MAX_ROWS = 1_000_000  # the most a pattern query returns: a collection's whole graph, or a derived graph

Scope = tuple[str, str]


@dataclass
class Changes:
    """What the events of one refresh changed in a collection: graph updates, and (for the RAPTOR
    tree) new chunks with their text."""

    nodes: set[str] = field(default_factory=set)
    passages: set[str] = field(default_factory=set)
    everything: bool = False
    arrived: dict[str, TextChunk] = field(default_factory=dict)  # chunk IRI -> the chunk

    def absorb(self, event: GraphUpdate | TextChunk) -> None:
        if isinstance(event, TextChunk):
            self.arrived[event.metadata.id] = event
            return
        self.nodes.update(event.nodes)
        self.passages.update(event.passages)
        self.everything = self.everything or event.everything


@dataclass
class RunReport:
    """How the last refresh or rebuild of a collection went, for the status answer."""

    mode: str | None = None
    method: str | None = None
    duration_ms: int | None = None
    updated: str | None = None


class DerivedIndexProcessor(FlowProcessor):
    """Subclasses say which updates concern them (`relevant`), how to refresh and rebuild a
    collection's structure, and how to count it; this class batches, orders, stores and serves."""

    graph: ClassVar[str]  # the named graph the structure lives in

    input = Consumer("input", GraphUpdate, prefetch=64)
    request = Service("request", DerivedRequest, DerivedResponse, prefetch=2)
    triples = Client("triples", TriplesQueryRequest, TriplesQueryResponse)
    sparql = Client("sparql", SparqlQueryRequest, SparqlQueryResponse)
    edit = Client("edit", GraphEditRequest, GraphEditResponse)
    embeddings = Client("embeddings", EmbeddingsRequest, EmbeddingsResponse, priority="bulk")  # background
    completion = Client("text-completion", TextCompletionRequest, TextCompletionResponse)

    async def start(self) -> None:
        # BusRetrievalTools reads these: embeddings and labels are cached per collection as elsewhere.
        self.vector_cache = VectorCache(self.settings.retrieval_vector_cache_bytes)
        self.label_cache = LabelCache(max_age=self.settings.passage_graph_max_age)
        self.runs: dict[Scope, RunReport] = defaultdict(RunReport)
        self._locks: dict[Scope, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._batcher: MicroBatcher[tuple[Flow, GraphUpdate | TextChunk], None] = MicroBatcher(
            self._refresh_all, window=self.settings.derived_settle, max_items=100_000, name=f"{self.name}:updates")
        self._stack.push_async_callback(self._batcher.aclose)
        self.seen: dict[Scope, str] = {}  # every collection an event or request named -> its flow id
        self.standing: dict[Scope, str] = {}  # behind after a give-up, repairing while a repair runs
        if self.settings.derived_reconcile > 0:
            task = asyncio.create_task(self._reconcile_forever(), name=f"{self.name}:reconcile")
            self._stack.push_async_callback(_cancel, task)
        await super().start()

    # -- what a subclass provides ------------------------------------------------------------------------

    def relevant(self, update: GraphUpdate) -> bool:
        raise NotImplementedError

    async def refresh(self, tools: BusRetrievalTools, scope: Scope, changes: Changes) -> str:
        """Bring the collection's structure up to date with `changes`; returns the mode it ran in."""
        raise NotImplementedError

    def rebuild(self, tools: BusRetrievalTools, scope: Scope) -> AsyncIterator[str]:
        """Recompute the structure from scratch, yielding progress lines."""
        raise NotImplementedError

    async def counts(self, tools: BusRetrievalTools, scope: Scope) -> dict[str, int]:
        raise NotImplementedError

    async def coverage(self, tools: BusRetrievalTools, scope: Scope) -> Coverage:
        """What the collection holds now against what the stored structure places."""
        raise NotImplementedError

    async def repair(self, tools: BusRetrievalTools, scope: Scope, gap: Coverage) -> str:
        """Bring the structure to cover the collection again; returns the mode it ran in."""
        raise NotImplementedError

    # -- updates ----------------------------------------------------------------------------------------

    @input.handler
    async def on_update(self, update: GraphUpdate, flow: Flow) -> None:
        if self.relevant(update):
            await self.absorb(flow, update)

    async def absorb(self, flow: Flow, event: GraphUpdate | TextChunk) -> None:
        """Returns once the refresh that took `event` in is stored (then the event may be acknowledged)."""
        self.seen[(event.metadata.user, event.metadata.collection)] = flow.id
        await self._batcher.submit([(flow, event)])

    async def gave_up(self, spec: Spec, message: object, flow: Flow, error: str) -> None:
        """The collection's structure misses what the message brought: the next reconciliation repairs it."""
        metadata = getattr(message, "metadata", None)
        if metadata is not None:
            scope = (metadata.user, metadata.collection)
            self.seen[scope] = flow.id
            self.standing[scope] = BEHIND
            log.warning("%s: %s/%s is behind (an update was given up: %s); the reconciliation every %gs "
                        "repairs it", self.name, *scope, error[:200], self.settings.derived_reconcile)

    # -- reconciliation ---------------------------------------------------------------------------------

    async def _reconcile_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.derived_reconcile)
            for scope, flow_id in list(self.seen.items()):
                flow = self.flows.get(flow_id)
                if flow is None:
                    continue
                try:
                    await self.reconcile(flow, scope)
                except TraceGraphError as exc:  # upstream still failing: the next round tries again
                    self.standing[scope] = BEHIND
                    log.warning("%s: %s/%s could not be reconciled yet: %s", self.name, *scope, str(exc)[:300])
                except Exception:  # a bug must not end the reconciliation of every other collection
                    self.standing[scope] = BEHIND
                    log.exception("%s: %s/%s: the reconciliation failed", self.name, *scope)

    async def reconcile(self, flow: Flow, scope: Scope) -> Coverage:
        """Compare the structure with the collection and repair a gap; returns the coverage after."""
        tools = self.tools(flow, scope)
        async with self._locks[scope]:
            gap = await self.coverage(tools, scope)
            if gap.complete:
                self.standing[scope] = CURRENT
                return gap
            log.warning("%s: %s/%s is behind (%s): repairing", self.name, *scope, gap.describe())
            self.standing[scope] = REPAIRING
            started = time.perf_counter()
            try:
                mode = await self.repair(tools, scope, gap)
            except BaseException:
                self.standing[scope] = BEHIND
                raise
            self._ran(scope, mode, started)
            after = await self.coverage(tools, scope)
            self.standing[scope] = CURRENT if after.complete else BEHIND
            log.info("%s: %s/%s repaired: %s", self.name, *scope, after.describe())
            return after

    async def _refresh_all(self, items: list[tuple[Flow, GraphUpdate | TextChunk]]) -> list[None]:
        """One refresh per collection for a batch of events; an error fails (and redelivers) them all."""
        batches: dict[tuple[int, str, str], tuple[Flow, Changes]] = {}
        for flow, event in items:
            key = (id(flow), event.metadata.user, event.metadata.collection)
            batches.setdefault(key, (flow, Changes()))[1].absorb(event)
        for (_, user, collection), (flow, changes) in batches.items():
            scope = (user, collection)
            async with self._locks[scope]:
                started = time.perf_counter()
                mode = await self.refresh(self.tools(flow, scope), scope, changes)
                self._ran(scope, mode, started)
        return [None] * len(items)

    # -- requests ---------------------------------------------------------------------------------------

    @request.handler
    async def serve(self, req: DerivedRequest, flow: Flow) -> AsyncIterator[DerivedResponse]:
        scope = (req.user, req.collection)
        tools = self.tools(flow, scope)
        self.seen.setdefault(scope, flow.id)
        if req.operation == "rebuild":
            async with self._locks[scope]:
                started = time.perf_counter()
                async for line in self.rebuild(tools, scope):
                    yield DerivedResponse(progress=line)
                self._ran(scope, "full", started)
        # The status reads without the lock, so that it can say a repair is running.
        run, coverage = self.runs[scope], await self.coverage(tools, scope)
        yield DerivedResponse(counts=await self.counts(tools, scope), mode=run.mode, method=run.method,
                              duration_ms=run.duration_ms, updated=run.updated, coverage=coverage.counts(),
                              state=state_of(coverage, self.standing.get(scope) == REPAIRING))

    # -- helpers ----------------------------------------------------------------------------------------

    def tools(self, flow: Flow, scope: Scope) -> BusRetrievalTools:
        return BusRetrievalTools(self, flow, DerivedRequest(user=scope[0], collection=scope[1]))

    def _ran(self, scope: Scope, mode: str, started: float) -> None:
        run = self.runs[scope]
        run.mode, run.duration_ms = mode, round((time.perf_counter() - started) * 1000)
        if mode != "unchanged":
            run.updated = now()
        log.info("%s: %s/%s %s in %d ms", self.name, *scope, mode, run.duration_ms)

    async def save(self, tools: BusRetrievalTools, *, drop: Iterable[str] = (), add: Sequence[Triple] = (),
                   drop_all: bool = False) -> None:
        """Replace part of the derived graph: drop first, then add, in confirmed requests of bounded size."""
        drop = list(dict.fromkeys(drop))
        ref = {"user": tools.user, "collection": tools.collection, "graph": self.graph}
        if drop_all:
            await tools.flow[self.edit].request(GraphEditRequest(drop_all=True, **ref))
        for start in range(0, len(drop), MAX_EDIT_TRIPLES):
            await tools.flow[self.edit].request(GraphEditRequest(drop_subjects=drop[start:start + MAX_EDIT_TRIPLES], **ref))
        for start in range(0, len(add), MAX_EDIT_TRIPLES):
            await tools.flow[self.edit].request(GraphEditRequest(add=list(add[start:start + MAX_EDIT_TRIPLES]), **ref))

    async def stored(self, tools: BusRetrievalTools) -> list[Triple]:
        """Everything the derived graph holds for the collection."""
        return await tools.match(g=self.graph, limit=MAX_ROWS)


def runs_of(stored: Iterable[Triple], prefix: str) -> dict[str, str]:
    """Which run (prov:wasGeneratedBy) wrote each stored node whose IRI starts with `prefix`. A run
    no node points at any more is dropped with the nodes' rewrite, so run records do not pile up."""
    return {t.s.iri: t.o.iri for t in stored
            if t.p == PROV.wasGeneratedBy and isinstance(t.o, IriTerm) and getattr(t.s, "iri", "").startswith(prefix)}


def summary_methods(methods: Iterable[str]) -> str | None:
    """How a batch of reports or tree summaries was written, in one phrase for the status answer."""
    kinds = sorted({m if m.startswith("LLM") else "offline (extractive)" for m in methods})
    return " and ".join(kinds) or None
