"""Retrieval tools as of a date: the graph walk reads the facts that held then (from the history-facts
graph, where superseded values stay), keyword hits over facts keep those that held then, and
passages of documents dated after it are left out, from searches and from the passage graph alike.
Every strategy built on the tools then sees the past without knowing it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from tracegraph.base.retrieval.history import facts_around
from tracegraph.base.retrieval.passage_graph import PassageGraph
from tracegraph.base.retrieval.timeline import Timeline
from tracegraph.base.retrieval.tools import RetrievedChunk
from tracegraph.schemas.rdf import Triple, fact_key
from tracegraph.schemas.search import KeywordMatch


def passage_graph_as_of(graph: PassageGraph, kept: Sequence[bool]) -> PassageGraph:
    """The passage graph without the passages not `kept` (by vertex); every entity stays, so the
    entity vertices keep their order after the passages."""
    keep = [i for i, k in enumerate(kept) if k]
    if len(keep) == len(graph.passages):
        return graph
    entities = list(range(len(graph.passages), graph.graph.vcount()))
    return PassageGraph(graph.graph.induced_subgraph([*keep, *entities]), [graph.passages[i] for i in keep],
                        [graph.documents[i] for i in keep], [graph.titles[i] for i in keep], list(graph.entities),
                        [graph.facts[i] for i in keep], dict(graph.mentions), graph.built)


class AsOfTools:
    """`tools` as of `timeline.as_of`; everything not about facts or passages goes to `tools` itself."""

    def __init__(self, tools, timeline: Timeline) -> None:
        self.tools, self.timeline = tools, timeline

    def __getattr__(self, name: str):
        return getattr(self.tools, name)

    async def around(self, nodes: Sequence[str], limit: int) -> list[Triple]:
        return await self.timeline.holding(await facts_around(self.tools, nodes, limit))

    async def keyword(self, text: str, limit: int) -> list[KeywordMatch]:
        matches = await self.tools.keyword(text, limit)
        held = {fact_key(f) for f in await self.timeline.holding([m.triple for m in matches])}
        return [m for m in matches if fact_key(m.triple) in held]

    async def _existing(self, chunks: list[RetrievedChunk]) -> list[RetrievedChunk]:
        return [c for c in chunks if await self.timeline.existed(c.document)]

    async def nearest_chunks(self, vector: Sequence[float], limit: int) -> list[RetrievedChunk]:
        return await self._existing(await self.tools.nearest_chunks(vector, limit))

    async def keyword_chunks(self, text: str, limit: int) -> list[RetrievedChunk]:
        return await self._existing(await self.tools.keyword_chunks(text, limit))

    async def chunks(self, uris: Sequence[str]) -> list[RetrievedChunk]:
        return await self._existing(await self.tools.chunks(uris))


class AsOfPassageTools(AsOfTools):
    """AsOfTools over tools that build a passage graph: the graph as of the date, made once per answer."""

    def __init__(self, tools, timeline: Timeline) -> None:
        super().__init__(tools, timeline)
        self._graph: PassageGraph | None = None
        self._building = asyncio.Lock()

    async def passage_graph(self) -> PassageGraph:
        async with self._building:
            if self._graph is None:
                graph = await self.tools.passage_graph()
                self._graph = passage_graph_as_of(graph, [await self.timeline.existed(d) for d in graph.documents])
            return self._graph


def tools_as_of(tools, timeline: Timeline):
    """`tools` as of the timeline's date; `tools` themselves for an answer as of now, or when there
    is no history to read the past from (the trace then says so: Timeline.notes)."""
    if not timeline.as_of or not timeline.kept:
        return tools
    return (AsOfPassageTools if hasattr(tools, "passage_graph") else AsOfTools)(tools, timeline)
