"""The search service through the gateway on the whole in-process stack: REST and WebSocket answers
with their confidence block and evidence, tg-search, user SPARQL that may only read, and a cache
that a graph update invalidates — in process, and in Redis."""

from __future__ import annotations

import json
import os
import uuid

import pytest

from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.cli.socket_client import SocketClient

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.procs import tg_async
from support.stack import wait_until_async

QUESTION = "What does Helios Grid depend on?"
TG = "https://trustgraph.ai/ns/"
REDIS_URL = os.environ.get("TG_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
REQUIRE_REDIS = os.environ.get("TG_REQUIRE_REDIS") == "1"


def objects(event: dict, predicate: str, subject: str | None = None) -> list[str]:
    subject = subject or event["explain_id"]
    return [t["o"].get("v", t["o"].get("i")) for t in event["explain_triples"]
            if t["s"].get("i") == subject and t["p"].get("i") == TG + predicate]


def cache_hits(events: list[dict]) -> dict[str, str]:
    exploration = next(e for e in events if ":exploration:" in e["explain_id"])
    return {objects(exploration, "strategy", run)[0]: objects(exploration, "cacheHit", run)[0]
            for run in objects(exploration, "strategyRun")}


async def stream(api, **request) -> tuple[list[dict], dict]:
    events, final = [], {}
    async for message in api.stream("default", "search", {"query": QUESTION, **request}):
        if message.get("message_type") == "explain":
            events.append(message)
        if message.get("end_of_session"):
            final = message
    return events, final


@pytest.fixture
async def stack(tmp_path):
    async with ingest_stack(tmp_path) as (api, running):
        for name in ("helios-grid.md", "corvid-analytics.md"):
            await load_and_wait(api, CORPUS / name)
        yield api, running


async def test_rest_search_answers_with_confidence_and_evidence(stack):
    api, _ = stack
    reply = await api.request("search", {"query": QUESTION})
    assert reply["query_type"] == "dependency"
    block = reply["confidence"]
    assert 0 < block["confidence"] <= 1 and block["source_density"] >= 1
    assert set(block) == {"confidence", "evidence_nodes", "source_density", "retrieval_strategies_used",
                          "low_confidence_warning", "warning_reasons"}
    assert block["low_confidence_warning"] == (block["confidence"] < 0.3) == bool(block["warning_reasons"])
    assert entity_uri("Helios Grid") in block["evidence_nodes"]
    assert {"graph", "bm25", "vector"} <= set(block["retrieval_strategies_used"])
    texts = [e["text"] for e in reply["evidence"]]
    assert any("Helios Grid" in t and "Corvid Analytics" in t for t in texts[:3])
    assert reply["evidence"][0]["sources"], "evidence traces back to its documents"
    assert reply["response"].startswith("Offline answer")


async def test_websocket_streams_the_trace_then_the_confidence_block(stack):
    api, running = stack
    async with SocketClient(api.url) as socket:
        messages = [m async for m in socket.stream("search", {"query": QUESTION, "streaming": True}, flow="default")]
    explains = [m["explain_id"].split(":")[-2] for m in messages if m.get("message_type") == "explain"]
    assert explains == ["question", "grounding", "exploration", "focus", "synthesis"]
    last = messages[-1]
    assert last["end_of_session"] and last["message_type"] == "end" and last["confidence"]
    synthesis = next(m for m in messages if ":synthesis:" in (m.get("explain_id") or ""))
    assert objects(synthesis, "confidence") == [f"{last['confidence']['confidence']:.2f}"]
    async def stored():  # the explainability writer stores the events as they go by, not before the reply
        return (await api.flow_service("default", "sparql", {"query": (
            "SELECT ?c WHERE { GRAPH <urn:graph:retrieval> { ?s a <https://trustgraph.ai/ns/SearchQuestion> . "
            "?syn <https://trustgraph.ai/ns/confidence> ?c } }")}))["bindings"]
    await wait_until_async(stored, timeout=10, what="the trace, confidence included, stored for audit")


async def test_tg_search_prints_the_answer_confidence_and_evidence(stack):
    api, _ = stack
    code, out, err = await tg_async("tg-search", "-u", api.url, "-q", QUESTION, "--sources")
    assert code == 0, err
    assert "Confidence:" in out and "query type dependency" in out
    assert "Helios Grid" in out and "Sources:" in out
    code, out, err = await tg_async("tg-search", "-u", api.url, "-q", QUESTION, "--json", "--strategy", "bm25",
                                    "--no-cache")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["confidence"]["retrieval_strategies_used"] == ["bm25"]
    code, _, err = await tg_async("tg-search", "-u", api.url, "-q", QUESTION, "--strategy", "nonsense")
    assert code == 2 and "invalid choice" in err


async def test_user_sparql_reads_and_never_writes(stack):
    api, _ = stack
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    before = (await api.request("sparql", {"query": count}))["bindings"][0]["n"]["v"]
    for update in ("DELETE WHERE { ?s ?p ?o }", "INSERT DATA { <urn:a> <urn:b> <urn:c> }",
                   "SELECT * WHERE { ?s ?p ?o } ; DROP ALL", "SELECT * WHERE { SERVICE <http://x/> { ?s ?p ?o } }"):
        with pytest.raises(Exception) as refused:
            await api.request("sparql", {"query": update})
        assert "update" in str(refused.value).lower() or "service" in str(refused.value).lower() \
            or "syntax" in str(refused.value).lower()
    with pytest.raises(Exception, match="(?i)syntax|parse|expected"):
        await api.request("sparql", {"query": "SELECT WHERE {"})
    assert (await api.request("sparql", {"query": count}))["bindings"][0]["n"]["v"] == before
    assert (await api.request("search", {"query": QUESTION}))["evidence"], "the service still answers"


async def test_a_graph_update_invalidates_exactly_the_cached_walks_it_touches(stack):
    api, _ = stack
    first, _ = await stream(api)
    assert cache_hits(first)["graph"] == "false"
    again, _ = await stream(api)
    assert cache_hits(again)["graph"] == "true"
    elsewhere = (f"<{entity_uri('Unrelated Thing')}> <{relation_uri('depends on')}> "
                 f"<{entity_uri('Other Thing')}> .\n")
    await api.request("flow/default/import/triples-bulk", {"nquads": elsewhere, "metadata": {
        "id": "urn:test:unrelated", "root": "", "user": "default", "collection": "default"}})
    await _settle(api)
    assert cache_hits((await stream(api))[0])["graph"] == "true", "an update elsewhere keeps the entry"
    touching = (f"<{entity_uri('Helios Grid')}> <{relation_uri('depends on')}> <{entity_uri('Vale Weather')}> .\n"
                f"<{entity_uri('Vale Weather')}> <http://www.w3.org/2000/01/rdf-schema#label> \"Vale Weather\" .\n")
    await api.request("flow/default/import/triples-bulk", {"nquads": touching, "metadata": {
        "id": "urn:test:touching", "root": "", "user": "default", "collection": "default"}})
    await _settle(api)
    events, final = await stream(api)
    assert cache_hits(events)["graph"] == "false"
    assert any("Vale Weather" in e["text"] for e in final["evidence"]), "the new fact is found at once"


async def test_a_graph_update_drops_the_cached_labels_of_the_nodes_it_touched(stack):
    """Labels are cached per collection in each answering service; a label's graph update drops
    the cached one, so the next question reads the new label (not one up to max_age old)."""
    import asyncio
    api, running = stack
    labels = running["search"].label_cache
    nameless, scope = "https://trustgraph.ai/e/x-17", ("default", "default")
    await api.request("flow/default/import/triples-bulk", {"nquads": (
        f"<{entity_uri('Helios Grid')}> <{relation_uri('depends on')}> <{nameless}> .\n"), "metadata": {
        "id": "urn:test:nameless", "root": "", "user": "default", "collection": "default"}})
    for _ in range(150):  # until a question has read the new fact and cached that its node has no label (≤ 30 s)
        await stream(api, **{"use-cache": False})
        if (scope, nameless) in labels._labels:
            break
        await asyncio.sleep(0.2)
    assert labels._labels[(scope, nameless)][0] == "", "cached as having no label"
    await api.request("flow/default/import/triples-bulk", {"nquads": (
        f"<{nameless}> <http://www.w3.org/2000/01/rdf-schema#label> \"Xylo Power\" .\n"), "metadata": {
        "id": "urn:test:named", "root": "", "user": "default", "collection": "default"}})
    for _ in range(300):  # up to 30 s: the graph update goes round the bus, slower on a loaded machine
        if (scope, nameless) not in labels._labels:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("the cached label outlived the graph update that changed it")
    await stream(api, **{"use-cache": False})
    assert labels._labels[(scope, nameless)][0] == "Xylo Power"


async def _settle(api) -> None:
    """Until the bulk write is stored and its graph update has gone round (a keyword query sees it)."""
    import asyncio
    for _ in range(100):
        found = await api.flow_service("default", "keyword-query", {"query": "Vale Weather Unrelated Thing"})
        if len(found.get("matches", [])) >= 1:
            await asyncio.sleep(0.3)
            return
        await asyncio.sleep(0.1)


async def test_the_cache_lives_in_redis_when_configured(tmp_path):
    import redis.asyncio as redis
    client = redis.from_url(REDIS_URL)
    try:
        await client.ping()
    except Exception:
        if REQUIRE_REDIS:
            raise
        pytest.skip(f"no Redis at {REDIS_URL}")
    collection = f"redis-{uuid.uuid4().hex[:8]}"
    try:
        async with ingest_stack(tmp_path, redis_url=REDIS_URL) as (api, _):
            await load_and_wait(api, CORPUS / "helios-grid.md", collection=collection)
            first, _ = await stream(api, collection=collection)
            second, _ = await stream(api, collection=collection)
            assert cache_hits(first)["graph"] == "false" and cache_hits(second)["graph"] == "true"
            exploration = next(e for e in second if ":exploration:" in e["explain_id"])
            notes = [t["o"].get("v") for t in exploration["explain_triples"]
                     if t["p"].get("i") == "http://www.w3.org/2000/01/rdf-schema#comment"]
            assert "served from the redis cache" in notes
            keys = [k async for k in client.scan_iter(match=f"tg:search:*{collection}*")]
            assert keys, "entries are stored in Redis"
    finally:
        async for key in client.scan_iter(match=f"tg:search:*{collection}*"):
            await client.delete(key)
        await client.aclose()
