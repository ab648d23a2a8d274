"""raptor: each collection's RAPTOR summary tree (RSN-05), kept in urn:graph:raptor for the search
service's `raptor` strategy.

Passages (chunks) are clustered recursively into clusters, domains and one overview, each node
summarised from its children (the LLM when configured, else offline extracts; each says which).
When documents are added or removed (the graph updates name their chunks) only the branches that
hold those passages are changed, up to the root, within a summary budget per batch; the rest stays
as stored. A passage's vector is the one document-embeddings stored for its chunk: the embeddings
service is asked only for chunks the vector store does not hold (yet)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Sequence

import numpy as np

from tracegraph.base.provenance.query import now
from tracegraph.base.raptor import tree as rt
from tracegraph.base.raptor.rdf import build_triples, read_tree, tree_triples
from tracegraph.base.retrieval.passage_graph import PASSAGES_QUERY, passages_query
from tracegraph.base.retrieval.tools import RetrievedChunk
from tracegraph.base.errors import TransientError
from tracegraph.base.flow import Flow
from tracegraph.base.specs import Client, Consumer
from tracegraph.base.stores.protocol import RAPTOR_GRAPH
from tracegraph.flow.derived.coverage import Coverage
from tracegraph.flow.derived.maintainer import (
    MAX_ROWS, Changes, DerivedIndexProcessor, Scope, runs_of, summary_methods,
)
from tracegraph.schemas.embeddings import VectorQueryRequest, VectorQueryResponse
from tracegraph.schemas.ingest import TextChunk
from tracegraph.schemas.search import GraphUpdate

log = logging.getLogger(__name__)
NODE_PREFIX = "urn:trustgraph:raptor:"
RECORDED_PER_QUERY = 500  # chunk IRIs one bound SPARQL query names


def build_uri() -> str:
    return f"urn:trustgraph:raptor-build:{uuid.uuid4()}"


class RaptorProcessor(DerivedIndexProcessor):
    """New passages come from the chunker's output (`chunks`), text included, so the tree does not wait
    for the vector store; removed ones from the graph updates of a document's removal."""

    name = "raptor"
    graph = RAPTOR_GRAPH
    document_embeddings = Client("document-embeddings", VectorQueryRequest, VectorQueryResponse, priority="bulk")
    chunks = Consumer("chunks", TextChunk, prefetch=64)

    async def start(self) -> None:
        self.params = rt.TreeParams()
        self.trees: dict[Scope, tuple[rt.Tree, dict[str, str]]] = {}  # the tree, and which build wrote each node
        await super().start()

    def relevant(self, update: GraphUpdate) -> bool:
        return bool(update.passages or update.everything)

    @chunks.handler
    async def on_chunk(self, chunk: TextChunk, flow: Flow) -> None:
        await self.absorb(flow, chunk)

    async def refresh(self, tools, scope: Scope, changes: Changes) -> str:
        """Passages that arrived join the tree once the source graph records them (a chunk's record
        is sent before the chunk, but through the triples writer: one not recorded yet fails the
        batch, to be redelivered, in the first full build as in later ones); passages a graph update
        announces join with their text from the vector store (one it does not hold yet joins when its
        chunk arrives); passages whose record is gone leave it."""
        tree, built_by = await self._tree(tools, scope)
        if not tree.nodes or changes.everything:
            async for _ in self._full(tools, scope, changes.arrived):
                pass
            mode = "full"
            current = set(placed_passages(self.trees[scope][0]))  # every recorded passage
        else:
            current = await self._recorded(tools, [*changes.arrived, *changes.passages])
            mode = await self._refresh_incrementally(tools, scope, tree, built_by, current, changes)
        waiting = sorted(p for p in changes.arrived if p not in current)
        if waiting:
            raise TransientError(f"{len(waiting)} passage(s) not recorded in the source graph yet "
                                 f"(e.g. {waiting[0]}): trying again")
        return mode

    async def _refresh_incrementally(self, tools, scope: Scope, tree: rt.Tree, built_by: dict[str, str],
                                     current: set[str], changes: Changes) -> str:
        arrived = [changes.arrived[p] for p in sorted(changes.arrived) if p in current and tree.parent(p) is None]
        announced = sorted(p for p in changes.passages
                           if p in current and p not in changes.arrived and tree.parent(p) is None)
        left = sorted(p for p in changes.passages if p not in current and tree.parent(p) is not None)
        passages = [*await self._embedded(tools, arrived), *await self._passages(tools, announced)]
        if not passages and not left:
            return "unchanged"
        await self._change(tools, scope, tree, built_by, passages, left)
        return "incremental"

    async def _change(self, tools, scope: Scope, tree: rt.Tree, built_by: dict[str, str],
                      passages: list[rt.Passage], left: list[str]) -> None:
        try:
            await self._change_tree(tools, scope, tree, built_by, passages, left)
        except BaseException:
            self.trees.pop(scope, None)  # changed in memory, maybe not stored: read the stored tree again
            raise

    async def _change_tree(self, tools, scope: Scope, tree: rt.Tree, built_by: dict[str, str],
                           passages: list[rt.Passage], left: list[str]) -> None:
        started, summariser = now(), rt.LlmSummariser(tools.complete)
        changes_made = []
        if left:
            changes_made.append(await rt.remove(tree, left, summariser, self.params))
        if passages:
            changes_made.append(await rt.add(tree, passages, summariser, self.params))
        removed = set().union(*(c.removed for c in changes_made))
        changed = set().union(*(c.changed for c in changes_made)) - removed
        await self._store(tools, scope, tree, built_by, changed, removed, started, len(passages) + len(left))
        log.info("raptor: %s/%s: %d passage(s) added, %d removed; %d node(s) rewritten, %d dropped, %d summaries "
                 "waiting", *scope, len(passages), len(left), len(changed), len(removed), len(tree.stale))

    async def _store(self, tools, scope: Scope, tree: rt.Tree, built_by: dict[str, str], changed: set[str],
                     removed: set[str], started: str, passage_count: int) -> None:
        """Rewrite the changed nodes and drop the removed ones, as one incremental tg:RaptorBuild."""
        build = build_uri()
        written = {n: build for n in changed}
        built_by = {n: b for n, b in {**built_by, **written}.items() if n in tree.nodes}
        stale = set(self.trees[scope][1].values()) - set(built_by.values())
        add = [*build_triples(build, self.params, "incremental", started, now(), passage_count),
               *tree_triples(tree, build, changed)]
        await self.save(tools, drop=[*changed, *removed, *stale], add=add)
        self.trees[scope] = (tree, built_by)
        self.runs[scope].method = summary_methods(tree.nodes[n].method for n in changed if n in tree.nodes)

    async def reconcile(self, flow: Flow, scope: Scope) -> Coverage:
        """As every derived structure, then the summaries the batches' budgets left waiting."""
        coverage = await super().reconcile(flow, scope)
        await self.catch_up(self.tools(flow, scope), scope)
        return coverage

    async def catch_up(self, tools, scope: Scope) -> int:
        """Write the waiting summaries (`Tree.stale`) in budget-sized steps, each stored on its own
        and the lock let go between them, so that new passages are not held up; returns how many."""
        done = 0
        while True:
            async with self._locks[scope]:
                tree, built_by = self.trees.get(scope, (None, {}))
                if tree is None or not tree.stale:
                    return done
                started = now()
                written = await rt.summarise_stale(tree, rt.LlmSummariser(tools.complete), self.params,
                                                   self.params.summary_budget(self.params.min_summaries))
                try:
                    await self._store(tools, scope, tree, built_by, written, set(), started, 0)
                except BaseException:
                    self.trees.pop(scope, None)
                    raise
                done += len(written)
            await asyncio.sleep(0)

    async def rebuild(self, tools, scope: Scope) -> AsyncIterator[str]:
        async for line in self._full(tools, scope):
            yield line

    async def _full(self, tools, scope: Scope, arrived: dict[str, TextChunk] | None = None) -> AsyncIterator[str]:
        """The tree of every recorded passage: texts from `arrived` chunks, else from the vector store
        (a passage it does not hold yet joins later, when its chunk arrives)."""
        started, arrived = now(), arrived or {}
        uris = await self._passage_list(tools)
        yield f"found {len(uris):,} passages"
        passages = [*await self._embedded(tools, [arrived[u] for u in uris if u in arrived]),
                    *await self._passages(tools, [u for u in uris if u not in arrived])]
        yield f"embedded {len(passages):,} passages"
        tree = await rt.build(passages, rt.LlmSummariser(tools.complete), self.params)
        yield f"built a tree of {len(tree.nodes):,} nodes over {tree.height} level(s)"
        build = build_uri()
        add = [*build_triples(build, self.params, "full", started, now(), len(passages)), *tree_triples(tree, build)]
        await self.save(tools, drop_all=True, add=add)
        self.trees[scope] = (tree, {n: build for n in tree.nodes})
        self.runs[scope].method = summary_methods(node.method for node in tree.nodes.values())
        yield f"stored {len(add):,} triples in {RAPTOR_GRAPH}"

    async def _tree(self, tools, scope: Scope) -> tuple[rt.Tree, dict[str, str]]:
        if scope not in self.trees:
            stored = await self.stored(tools)
            self.trees[scope] = (read_tree(stored), runs_of(stored, NODE_PREFIX))
        return self.trees[scope]

    async def _passage_list(self, tools) -> list[str]:
        """Every chunk of the collection, from its extraction provenance."""
        result = await tools.sparql(PASSAGES_QUERY, limit=MAX_ROWS, timeout=120)
        return list(dict.fromkeys(row["chunk"].iri for row in result.bindings if "chunk" in row))

    async def _recorded(self, tools, uris: Sequence[str]) -> set[str]:
        """Those of `uris` the source graph records as chunks: a query bound to them, not a scan of
        every passage, so a batch costs what it names."""
        wanted = list(dict.fromkeys(uris))
        found: set[str] = set()
        for start in range(0, len(wanted), RECORDED_PER_QUERY):
            part = wanted[start:start + RECORDED_PER_QUERY]
            result = await tools.sparql(passages_query(part), limit=len(part) * 4, timeout=120)
            found.update(row["chunk"].iri for row in result.bindings if "chunk" in row)
        return found & set(wanted)

    async def _passages(self, tools, uris: Sequence[str]) -> list[rt.Passage]:
        """Passages whose text the vector store holds, with the vectors stored beside it."""
        found = [c for c in await tools.chunks(uris, with_vectors=True) if c.text]
        return await self._embedded(tools, found)

    async def _embedded(self, tools, items: Sequence[TextChunk | RetrievedChunk]) -> list[rt.Passage]:
        """Chunks as unit-length passages: a vector the vector store holds is reused; only chunks it
        lacks (not indexed yet, or failed there) are sent to the embeddings service."""
        if not items:
            return []
        rows = [(i.metadata.id, i.text, i.document) if isinstance(i, TextChunk) else (i.uri, i.text, i.document)
                for i in items]
        vector_of = {i.uri: i.vector for i in items if isinstance(i, RetrievedChunk) and i.vector is not None}
        asked = [i.metadata.id for i in items if isinstance(i, TextChunk)]  # the others came from the store
        if asked:
            vector_of.update({c.uri: c.vector for c in await tools.chunks(asked, with_vectors=True)
                              if c.vector is not None})
        missing = [(uri, text) for uri, text, _ in rows if uri not in vector_of]
        if missing:
            vector_of.update(zip([uri for uri, _ in missing], await tools.embed([text for _, text in missing])))
        log.debug("raptor: %d chunk vector(s) reused from the vector store, %d embedded",
                  len(rows) - len(missing), len(missing))
        vectors = np.asarray([vector_of[uri] for uri, _, _ in rows], dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return [rt.Passage(uri, text, v, document) for (uri, text, document), v in zip(rows, vectors)]

    async def coverage(self, tools, scope: Scope) -> Coverage:
        tree, _ = await self._tree(tools, scope)
        return Coverage.of("passages", await self._passage_list(tools), placed_passages(tree))

    async def repair(self, tools, scope: Scope, gap: Coverage) -> str:
        """Missing passages join with their text from the vector store, gone ones leave."""
        tree, built_by = await self._tree(tools, scope)
        if not tree.nodes:
            async for _ in self._full(tools, scope):
                pass
            return "full"
        passages = await self._passages(tools, sorted(gap.missing))
        if not passages and not gap.extra:
            return "unchanged"
        await self._change(tools, scope, tree, built_by, passages, sorted(gap.extra))
        return "incremental"

    async def counts(self, tools, scope: Scope) -> dict[str, int]:
        tree, _ = await self._tree(tools, scope)
        return {**{f"tree-level-{level}": len(ids) for level, ids in tree.levels.items()},
                "passages": sum(tree.nodes[i].passage_count for i in tree.levels.get(1, []))}



def placed_passages(tree: rt.Tree) -> list[str]:
    """The chunks under the tree's level-1 clusters."""
    return [child for node_id in tree.levels.get(1, []) for child in tree.nodes[node_id].children]
