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
from tracegraph.base.specs import Client
from tracegraph.base.stores.protocol import RAPTOR_GRAPH
from tracegraph.flow.derived.maintainer import MAX_ROWS, Changes, DerivedIndexProcessor, Scope, runs_of
from tracegraph.schemas.embeddings import VectorQueryRequest, VectorQueryResponse
from tracegraph.schemas.search import GraphUpdate

log = logging.getLogger(__name__)
NODE_PREFIX = "urn:trustgraph:raptor:"
FETCH = 1000  # chunk texts per request to the vector store


def build_uri() -> str:
    return f"urn:trustgraph:raptor-build:{uuid.uuid4()}"


class RaptorProcessor(DerivedIndexProcessor):
    name = "raptor"
    graph = RAPTOR_GRAPH
    document_embeddings = Client("document-embeddings", VectorQueryRequest, VectorQueryResponse)

    async def start(self) -> None:
        self.params = rt.TreeParams()
        self.trees: dict[Scope, tuple[rt.Tree, dict[str, str]]] = {}  # the tree, and which build wrote each node
        await super().start()

    def relevant(self, update: GraphUpdate) -> bool:
        return bool(update.passages or update.everything)

    async def refresh(self, tools, scope: Scope, changes: Changes) -> str:
        tree, built_by = await self._tree(tools, scope)
        if not tree.nodes or changes.everything:
            async for _ in self._full(tools, scope):
                pass
            return "full"
        current = set(await self._passage_list(tools))
        arrived = sorted(p for p in changes.passages if p in current and tree.parent(p) is None)
        left = sorted(p for p in changes.passages if p not in current and tree.parent(p) is not None)
        if not arrived and not left:
            return "unchanged"
        started, summariser = now(), rt.LlmSummariser(tools.complete)
        changes_made = []
        if left:
            changes_made.append(await rt.remove(tree, left, summariser, self.params))
        if arrived:
            changes_made.append(await rt.add(tree, await self._passages(tools, arrived), summariser, self.params))
        removed = set().union(*(c.removed for c in changes_made))
        changed = set().union(*(c.changed for c in changes_made)) - removed
        build = build_uri()
        written = {n: build for n in changed}
        built_by = {n: b for n, b in {**built_by, **written}.items() if n in tree.nodes}
        stale = set(self.trees[scope][1].values()) - set(built_by.values())
        add = [*build_triples(build, self.params, "incremental", started, now(), len(arrived) + len(left)),
               *tree_triples(tree, build, changed)]
        await self.save(tools, drop=[*changed, *removed, *stale], add=add)
        self.trees[scope] = (tree, built_by)
        self.runs[scope].method = _method(tree, changed)
        log.info("raptor: %s/%s: %d passage(s) added, %d removed; %d node(s) rewritten, %d dropped", *scope,
                 len(arrived), len(left), len(changed), len(removed))
        return "incremental"

    async def rebuild(self, tools, scope: Scope) -> AsyncIterator[str]:
        async for line in self._full(tools, scope):
            yield line

    async def _full(self, tools, scope: Scope) -> AsyncIterator[str]:
        started = now()
        uris = await self._passage_list(tools)
        yield f"found {len(uris):,} passages"
        passages = await self._passages(tools, uris)
        yield f"embedded {len(passages):,} passages"
        tree = await rt.build(passages, rt.LlmSummariser(tools.complete), self.params)
        yield f"built a tree of {len(tree.nodes):,} nodes over {tree.height} level(s)"
        build = build_uri()
        add = [*build_triples(build, self.params, "full", started, now(), len(passages)), *tree_triples(tree, build)]
        await self.save(tools, drop_all=True, add=add)
        self.trees[scope] = (tree, {n: build for n in tree.nodes})
        self.runs[scope].method = _method(tree, tree.nodes)
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
        """The chunks' texts (from the vector store) and their embeddings."""
        found = []
        for start in range(0, len(uris), FETCH):
            found += [c for c in await tools.chunks(list(uris[start:start + FETCH])) if c.text]
        if not found:
            return []
        vectors = np.asarray(await tools.embed([c.text for c in found]), dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return [rt.Passage(c.uri, c.text, v, c.document) for c, v in zip(found, vectors)]

    async def counts(self, tools, scope: Scope) -> dict[str, int]:
        tree, _ = await self._tree(tools, scope)
        return {**{f"tree-level-{level}": len(ids) for level, ids in tree.levels.items()},
                "passages": sum(tree.nodes[i].passage_count for i in tree.levels.get(1, []))}


def _method(tree: rt.Tree, nodes) -> str | None:
    kinds = sorted({tree.nodes[n].method.split(" —")[0] for n in nodes if n in tree.nodes})
    return " and ".join(kinds) or None
