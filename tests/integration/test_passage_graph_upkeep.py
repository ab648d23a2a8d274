"""The passage graph follows the triples writer's real graph-update events: a document loaded after
the first question joins the search service's graph chunk by chunk, without a full re-read, and the
graph equals a full build of the collection."""

from __future__ import annotations

import pytest

from tracegraph.base.retrieval import passage_graph

from support.ingest import ingest_stack, load_and_wait
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(240)
SCOPE = ("default", "default")
TEXTS = {
    "leland.txt": "Leland is a town in Brunswick County, North Carolina. The film Maximum Overdrive was shot in "
                  "Leland in 1986.",
    "overdrive.txt": "Maximum Overdrive is a 1986 horror film directed by Stephen King. Emilio Estevez starred in it.",
    "king.txt": "Stephen King is an American author from Portland, Maine. He wrote the novel Carrie.",
}


def facts_by_passage(graph: passage_graph.PassageGraph) -> dict[str, frozenset]:
    return {p: frozenset(graph.facts[i]) for i, p in enumerate(graph.passages)}


def edges(graph: passage_graph.PassageGraph) -> frozenset:
    names = [*graph.passages, *graph.entities]
    return frozenset((names[e.source], names[e.target], round(e["weight"], 9)) for e in graph.graph.es)


async def test_a_document_loaded_after_the_first_question_joins_the_graph_incrementally(tmp_path):
    for name, text in TEXTS.items():
        (tmp_path / name).write_text(text)
    async with ingest_stack(tmp_path / "data") as (api, stack):
        first = [await load_and_wait(api, tmp_path / name) for name in ("leland.txt", "overdrive.txt")]
        await api.flow_service("default", "search", {"query": "Who directed the film shot in Leland?"})
        cache = stack["search"].passage_graphs
        kept = cache.kept(SCOPE)
        assert kept is not None and set(kept.graph.documents) == set(first)
        loaded = kept.loaded

        added = await load_and_wait(api, tmp_path / "king.txt")
        await wait_until_async(lambda: added in cache.kept(SCOPE).graph.documents and cache.kept(SCOPE).graph.facts[
            cache.kept(SCOPE).graph.documents.index(added)], timeout=60, what="the new document's facts in the graph")
        await cache.settled(SCOPE)
        kept = cache.kept(SCOPE)
        assert kept.loaded == loaded and kept.refreshes > 0, "applied from its events, not by a full re-read"
        full = await passage_graph.load(kept.tools)
        assert facts_by_passage(kept.graph) == facts_by_passage(full)
        assert kept.graph.mentions == full.mentions and edges(kept.graph) == edges(full)
