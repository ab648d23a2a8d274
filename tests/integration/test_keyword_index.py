"""The keyword index follows ingest on the embedded stack: the triples writer announces each stored
change as a GraphUpdate, the keyword-index processor indexes it, and removing the document removes
its facts from keyword search."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from tracegraph.base.bus import codec
from tracegraph.base.bus.topic import Topic
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import RequestTimeout
from tracegraph.schemas.rdf import Triple, iri
from tracegraph.schemas.search import GraphUpdate, KeywordQueryRequest, KeywordQueryResponse

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(300)

GRAPH_UPDATES = Topic.parse("persistent://tg/flow/graph-updates:default")
KEYWORD_REQUEST = Topic.parse("non-persistent://tg/request/keyword-query:default")
KEYWORD_RESPONSE = Topic.parse("non-persistent://tg/response/keyword-query:default")
DEPENDS = Triple(s=iri("https://trustgraph.ai/e/helios-grid"), p=iri("https://trustgraph.ai/r/depends-on"),
                 o=iri("https://trustgraph.ai/e/corvid-analytics"))
QUERY = "Corvid Analytics load forecasting"


async def until_serving(keywords: RequestClient[KeywordQueryRequest, KeywordQueryResponse]) -> None:
    """The keyword index has joined the flow once it answers (and so listens for updates too)."""
    async def answers() -> bool:
        with contextlib.suppress(RequestTimeout):
            return (await keywords.request(KeywordQueryRequest(query="anything"), timeout=0.5)).error is None
        return False
    await wait_until_async(answers, timeout=30, what="the keyword index to join the flow")


async def test_keyword_search_follows_ingest_and_removal(tmp_path):
    async with ingest_stack(tmp_path) as (api, stack):
        updates: list[GraphUpdate] = []

        async def observe(deliveries) -> None:
            async for delivery in deliveries:
                updates.append(codec.decode(delivery.body, delivery.properties, GraphUpdate))

        async with (stack.backend.subscribe(GRAPH_UPDATES, "test-observer", prefetch=64, auto_ack=True) as deliveries,
                    RequestClient(stack.backend, KEYWORD_REQUEST, KEYWORD_RESPONSE, KeywordQueryRequest,
                                  KeywordQueryResponse, timeout=10) as keywords):
            observer = asyncio.create_task(observe(deliveries))
            try:
                await until_serving(keywords)

                async def matches(query: str = QUERY) -> list:
                    return (await keywords.request(KeywordQueryRequest(query=query, limit=10))).matches

                doc = await load_and_wait(api, CORPUS / "helios-grid.md")
                found = await wait_until_async(
                    lambda: _with(matches(), DEPENDS), timeout=30, what="the Helios Grid → Corvid Analytics fact")
                hit = next(m for m in found if m.triple == DEPENDS)
                assert hit.text == "Helios Grid depends on Corvid Analytics" and hit.score > 0
                assert DEPENDS in [m.triple for m in found[:3]], "the fact should rank near the top"

                added = [t for u in updates for t in u.added]
                assert DEPENDS in added
                assert "https://trustgraph.ai/e/helios-grid" in {n for u in updates for n in u.nodes}
                assert all(t.g is None for t in added), "only default-graph facts are announced"
                assert all(len(u.added) <= 5000 for u in updates)

                removed = (await api.request("librarian", {"operation": "remove-document", "document-id": doc}))
                assert removed["removed"]["triples"] > 0
                await wait_until_async(lambda: _gone(matches()), timeout=30, what="the document's facts to leave")
                assert await matches("Helios Grid Mara Lindqvist Meridian Dam") == []
                assert DEPENDS in [t for u in updates for t in u.removed]
            finally:
                observer.cancel()
                await asyncio.gather(observer, return_exceptions=True)


BULK = """
<urn:x:reactor-7> <http://www.w3.org/2000/01/rdf-schema#label> "Reactor Seven" .
<urn:x:reactor-7> <urn:x:is-cooled-by> <urn:x:glacier_river> .
<urn:x:reactor-7> <urn:x:is-cooled-by> <urn:x:lake-mist> <urn:graph:elsewhere> .
"""


async def test_a_bulk_import_is_indexed_from_its_default_graph_only(tmp_path):
    async with ingest_stack(tmp_path) as (api, stack):
        async with RequestClient(stack.backend, KEYWORD_REQUEST, KEYWORD_RESPONSE, KeywordQueryRequest,
                                 KeywordQueryResponse, timeout=10) as keywords:
            await until_serving(keywords)
            await api.request("flow/default/import/triples-bulk", {
                "metadata": {"id": "urn:bulk", "root": "urn:bulk", "collection": "imports"},
                "nquads": BULK, "count": 3})

            async def matches(query: str) -> list:
                return (await keywords.request(KeywordQueryRequest(query=query, collection="imports"))).matches

            found = await wait_until_async(lambda: matches("cooled"), timeout=30, what="the bulk fact")
            assert [m.text for m in found] == ["Reactor Seven is cooled by glacier river"]
            assert await matches("lake mist") == [], "a named graph's quad is not a fact of the graph"


async def _with(pending, fact: Triple) -> list:
    """The matches, when `fact` is among them."""
    found = await pending
    return found if fact in [m.triple for m in found] else []


async def _gone(pending) -> bool:
    return not await pending
