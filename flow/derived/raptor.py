"""raptor: each collection's RAPTOR summary tree (RSN-05), kept in urn:graph:raptor for the search
service's `raptor` strategy.

Passages (chunks) are clustered recursively into clusters, domains and one overview, each node
summarised from its children (the LLM when configured, else offline extracts; each says which).
When documents are added or removed (the graph updates name their chunks) only the branches that
hold those passages are changed and re-summarised, up to the root; the rest stays as stored."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Sequence

import numpy as np

from tracegraph.base.provenance.query import now
from tracegraph.base.raptor import tree as rt
from tracegraph.base.raptor.rdf import build_triples, read_tree, tree_triples
from tracegraph.base.retrieval.passage_graph import PASSAGES_QUERY
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


def build_uri() -> str:
    return f"urn:trustgraph:raptor-build:{uuid.uuid4()}"


class RaptorProcessor(DerivedIndexProcessor):
    """New passages come from the chunker's output (`chunks`), text included, so the tree does not wait
    for the vector store; removed ones from the graph updates of a document's removal."""

    name = "raptor"
    graph = RAPTOR_GRAPH
    document_embeddings = Client("document-embeddings", VectorQueryRequest, VectorQueryResponse)
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
            current = set(await self._passage_list(tools))
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
        build = build_uri()
        written = {n: build for n in changed}
        built_by = {n: b for n, b in {**built_by, **written}.items() if n in tree.nodes}
        stale = set(self.trees[scope][1].values()) - set(built_by.values())
        add = [*build_triples(build, self.params, "incremental", started, now(), len(passages) + len(left)),
               *tree_triples(tree, build, changed)]
        await self.save(tools, drop=[*changed, *removed, *stale], add=add)
        self.trees[scope] = (tree, built_by)
        self.runs[scope].method = summary_methods(tree.nodes[n].method for n in changed if n in tree.nodes)
        log.info("raptor: %s/%s: %d passage(s) added, %d removed; %d node(s) rewritten, %d dropped", *scope,
                 len(passages), len(left), len(changed), len(removed))

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

    async def _passages(self, tools, uris: Sequence[str]) -> list[rt.Passage]:
        """Passages whose text the vector store holds, embedded."""
        found = [c for c in await tools.chunks(uris) if c.text]
        return await self._embedded(tools, [(c.uri, c.text, c.document) for c in found])

    async def _embedded(self, tools, items: Sequence[TextChunk | tuple[str, str, str | None]]) -> list[rt.Passage]:
        """(chunk IRI, text, document) or chunks, as unit-length embedded passages."""
        rows = [(i.metadata.id, i.text, i.document) if isinstance(i, TextChunk) else i for i in items]
        if not rows:
            return []
        vectors = np.asarray(await tools.embed([text for _, text, _ in rows]), dtype=np.float32)
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
