"""Global questions on the whole in-process stack: the community and raptor processors build their
structures from the sample corpus as it is ingested, keep them current when a document is added or
removed, and the search service answers strategic questions by map-reduce over community reports
(or by walking the RAPTOR tree), with a trace that resolves from the answer to the documents."""

from __future__ import annotations

import json

import pytest

from tracegraph.cli.socket_client import SocketClient

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.procs import tg_async
from support.stack import wait_until_async

TG = "https://trustgraph.ai/ns/"
PROV = "http://www.w3.org/ns/prov#"
STRATEGIC = "What are the top risks across the platform?"
PREFIXES = f"PREFIX tg: <{TG}> PREFIX prov: <{PROV}> "


async def status(api, service: str = "community") -> dict:
    return await api.flow_service("default", service, {"operation": "status"})


async def settled(api, service: str, key: str, at_least: int = 1) -> dict:
    async def ready():
        found = await status(api, service)
        return found if found["counts"].get(key, 0) >= at_least else None
    return await wait_until_async(ready, timeout=30, what=f"{service} built ({key})")


async def sparql(api, query: str) -> list[dict]:
    return (await api.flow_service("default", "sparql", {"query": PREFIXES + query}))["bindings"]


async def ask(api, **request) -> tuple[list[dict], dict]:
    events, final = [], {}
    async for message in api.stream("default", "search", request):
        if message.get("message_type") == "explain":
            events.append(message)
        if message.get("end_of_session"):
            final = message
    return events, final


def objects(event: dict, predicate: str) -> list[str]:
    return [t["o"].get("v", t["o"].get("i")) for t in event["explain_triples"]
            if t["s"].get("i") == event["explain_id"] and t["p"].get("i") == TG + predicate]


@pytest.fixture
async def stack(tmp_path):
    async with ingest_stack(tmp_path, derived_settle=0.1) as (api, running):
        documents = [await load_and_wait(api, CORPUS / name) for name in ("helios-grid.md", "corvid-analytics.md")]
        await settled(api, "community", "reports")
        await settled(api, "raptor", "passages")
        yield api, documents


async def test_a_strategic_question_is_answered_from_community_reports_and_traced_to_documents(stack):
    api, _ = stack
    events, final = await ask(api, query=STRATEGIC)
    assert [e["explain_id"].split(":")[-2] for e in events] == ["question", "grounding", "exploration", "focus",
                                                               "synthesis"]
    assert final["query_type"] == "strategic", "the router sent the question to global search"
    assert final["confidence"]["retrieval_strategies_used"] == ["global"]
    assert final["response"].startswith("Offline answer (no LLM configured), from the community reports")
    assert {s["title"] for s in final["sources"]} == {"helios-grid", "corvid-analytics"}
    exploration, focus = events[2], events[3]
    assert objects(exploration, "reportScore"), "the map step's scores are in the trace"
    kept = objects(focus, "selectedReport")
    assert kept
    scores = [t["o"]["v"] for t in exploration["explain_triples"] if t["p"]["i"] == TG + "mapScore"]
    assert all("offline: similarity" in t["o"]["v"] for t in exploration["explain_triples"]
               if t["p"]["i"] == TG + "reasoning"), "offline scores say they are offline"
    assert scores == sorted(scores, key=float, reverse=True)

    async def traced():  # one query: stored global Question → kept report → its facts → chunk → document
        return await sparql(api, """SELECT DISTINCT ?title WHERE {
            GRAPH <urn:graph:retrieval> { ?q a tg:GlobalQuestion . ?e prov:wasGeneratedBy ?q .
                                          ?f prov:wasDerivedFrom ?e ; tg:selectedReport ?sel . ?sel tg:report ?r }
            GRAPH <urn:graph:community> { ?r prov:wasDerivedFrom ?fact }
            GRAPH <urn:graph:source> { ?sg tg:contains ?fact ; prov:wasDerivedFrom ?chunk .
                                       ?chunk prov:wasDerivedFrom+ ?doc }
            ?doc a tg:Document ; <http://purl.org/dc/elements/1.1/title> ?title }""")
    found = await wait_until_async(traced, timeout=10, what="the stored trace resolving to documents")
    assert {row["title"]["v"] for row in found} <= {"helios-grid", "corvid-analytics"}


async def test_global_and_raptor_on_request_over_rest_websocket_and_cli(stack):
    api, _ = stack
    _, final = await ask(api, query="What does Helios Grid depend on?", **{"global": True})
    assert final["confidence"]["retrieval_strategies_used"] == ["global"]
    _, final = await ask(api, query=STRATEGIC, **{"global": False})
    assert "global" not in final["confidence"]["retrieval_strategies_used"], "`global: false` keeps the hybrid path"
    events, final = await ask(api, query="What does Helios Grid depend on?", strategies=["raptor"])
    assert final["confidence"]["retrieval_strategies_used"] == ["raptor"]
    assert objects(events[2], "treeVisit") and objects(events[3], "chunkSelection")
    assert final["response"].startswith("Offline answer (no LLM configured), from the RAPTOR tree")
    async with SocketClient(api.url) as socket:
        messages = [m async for m in socket.stream("search", {"query": STRATEGIC, "strategies": ["global"],
                                                              "streaming": True}, flow="default")]
    assert messages[-1]["end_of_session"] and messages[-1]["confidence"]["retrieval_strategies_used"] == ["global"]
    with pytest.raises(Exception, match="answers on its own"):
        await api.request("search", {"query": STRATEGIC, "strategies": ["global", "bm25"]})

    code, out, err = await tg_async("tg-search", "-u", api.url, "-q", STRATEGIC, "--strategy", "global", "-x")
    assert code == 0, err
    assert "[exploration]" in out and "Reason: offline: similarity" in out and "Report:" in out
    assert "Source:" in out and "Confidence:" in out
    code, out, err = await tg_async("tg-rebuild-communities", "-u", api.url)
    assert code == 0, err
    assert "detected communities over" in out and "stored" in out and "reports" in out
    code, out, err = await tg_async("tg-rebuild-communities", "-u", api.url, "--raptor", "--status")
    assert code == 0, err
    assert "RAPTOR tree" in out and "passages" in out


async def test_adding_and_removing_a_document_updates_communities_without_dangling_members(stack):
    api, documents = stack
    dangling = """SELECT ?c ?e WHERE { GRAPH <urn:graph:community> { ?c tg:member ?e }
                  FILTER NOT EXISTS { { ?e ?p ?o } UNION { ?s ?p2 ?e } } }"""
    members = "SELECT (COUNT(?e) AS ?n) WHERE { GRAPH <urn:graph:community> { ?c tg:member ?e } }"
    before = int((await sparql(api, members))[0]["n"]["v"])
    orbis = await load_and_wait(api, CORPUS / "orbis-systems.md")

    async def grew():
        found = await status(api)
        return found if found["mode"] == "incremental" and int((await sparql(api, members))[0]["n"]["v"]) > before \
            else None
    await wait_until_async(grew, timeout=30, what="the new document's entities in communities")
    assert not await sparql(api, dangling)

    await api.request("librarian", {"operation": "remove-document", "document-id": orbis})

    async def shrank():
        return int((await sparql(api, members))[0]["n"]["v"]) <= before + 2 or None
    await wait_until_async(shrank, timeout=30, what="the removed document's entities leaving their communities")
    assert not await sparql(api, dangling), "no community keeps a member that is gone"
    parents = """SELECT ?c WHERE { GRAPH <urn:graph:community> { ?c tg:parentCommunity ?p
                 FILTER NOT EXISTS { ?p a tg:Community } } }"""
    assert not await sparql(api, parents), "no community points at a parent that is gone"
    reports = """SELECT ?r WHERE { GRAPH <urn:graph:community> { ?r tg:reportOf ?c
                 FILTER NOT EXISTS { ?c a tg:Community } } }"""
    assert not await sparql(api, reports)
    chunks = """SELECT ?n ?chunk WHERE { GRAPH <urn:graph:raptor> { ?n tg:childNode ?chunk
                FILTER(STRSTARTS(STR(?chunk), "urn:chunk:")) }
                FILTER NOT EXISTS { GRAPH <urn:graph:source> { ?chunk a tg:Chunk } } }"""

    async def tree_followed():
        return not await sparql(api, chunks) or None
    await wait_until_async(tree_followed, timeout=30, what="the RAPTOR tree dropping the removed chunks")


async def test_communities_reports_tree_and_global_traces_pass_the_shapes(stack):
    import asyncio

    from tracegraph.base.provenance.shacl import validate_trace
    from tracegraph.schemas.rdf import Triple

    api, _ = stack
    for request in ({"query": STRATEGIC}, {"query": STRATEGIC, "strategies": ["raptor"]}):
        await ask(api, **request)

    async def both_stored():
        rows = await sparql(api, "SELECT ?q WHERE { GRAPH <urn:graph:retrieval> { ?q a tg:Question . "
                                 "?s a tg:Synthesis } }")
        kinds = await sparql(api, "SELECT ?k WHERE { GRAPH <urn:graph:retrieval> { ?q a ?k . "
                                  "VALUES ?k { tg:GlobalQuestion tg:RaptorQuestion } } }")
        return rows and len({k["k"]["i"] for k in kinds}) == 2
    await wait_until_async(both_stored, timeout=10, what="both traces stored")
    code, out, err = await tg_async("tg-list-explain-traces", "-u", api.url, "--json")
    assert code == 0, err
    listed = {t["kind"]: t["id"] for t in json.loads(out)}
    assert {"Global", "RAPTOR"} <= set(listed), listed
    code, out, err = await tg_async("tg-show-explain-trace", "-u", api.url, listed["Global"])
    assert code == 0, err
    assert "Report:" in out and "Reason: offline: similarity" in out and "Source:" in out
    code, out, err = await tg_async("tg-show-explain-trace", "-u", api.url, listed["RAPTOR"])
    assert code == 0, err
    assert "Tree walk" in out and "Chunk:" in out
    from tracegraph.base.provenance.shacl import validate_nquads

    code, exported, err = await tg_async("tg-export-explain-trace", "-u", api.url, listed["RAPTOR"], "--format",
                                         "nquads")
    assert code == 0, err
    assert "urn:graph:raptor" in exported and TG + "RaptorBuild" in exported, "the kept summaries come along"
    alone = await asyncio.to_thread(validate_nquads, exported)
    assert alone.conforms, "\n".join(alone.messages)
    everything = (await api.flow_service("default", "triples", {"g": "*", "limit": 200000}))["response"]
    triples = [Triple.model_validate(t) for t in everything]
    assert any(t.g == "urn:graph:community" for t in triples) and any(t.g == "urn:graph:raptor" for t in triples)
    report = await asyncio.to_thread(validate_trace, triples)
    assert report.conforms, "\n".join(report.messages)
    broken = [t for t in triples if not (t.g == "urn:graph:community" and t.p.iri == TG + "reportOf")]
    report = await asyncio.to_thread(validate_trace, broken)
    assert not report.conforms and any("reports on exactly one" in m for m in report.messages)


def scripted_llm(body: dict) -> str:
    """The scripted model, answering by the system prompt it is given: a community report, a tree
    summary, the router, the map step's ratings (the second report's malformed) and the reduce step."""
    from tracegraph.base.communities.reports import REPORT_SYSTEM
    from tracegraph.base.retrieval.global_map import MAP_SYSTEM, REDUCE_SYSTEM
    from tracegraph.base.retrieval.router import ROUTER_SYSTEM

    system = body["messages"][0]["content"]
    if system == REPORT_SYSTEM:
        return json.dumps({"title": "Scripted community", "summary": "A community the scripted model summarised.",
                           "key_entities": [], "key_relations": [], "rating": 7, "rating_reason": "scripted"})
    if system == ROUTER_SYSTEM:
        return "strategic"
    if system == MAP_SYSTEM:
        return '[{"id": 1, "score": 9, "reason": "names the risks"}, {"id": 2, "score": "high"}]'
    if system == REDUCE_SYSTEM:
        return "The scripted model's answer from the reports."
    return "A scripted summary of the passages."  # the RAPTOR tree's


async def test_with_an_llm_reports_map_and_reduce_are_the_models_and_a_bad_rating_falls_back(tmp_path):
    from support.openai_stub import OpenAIStub

    async with OpenAIStub() as stub:
        stub.script(*[scripted_llm] * 1000)
        async with ingest_stack(tmp_path, llm_url=stub.base_url, llm_model="stub-llm", extractor="offline",
                                derived_settle=0.1) as (api, _):
            for name in ("helios-grid.md", "corvid-analytics.md"):
                await load_and_wait(api, CORPUS / name)
            built = await settled(api, "community", "reports")
            assert built["method"] == "LLM (stub-llm)"
            methods = await sparql(api, "SELECT DISTINCT ?m ?t WHERE { GRAPH <urn:graph:community> { ?r a "
                                        "tg:CommunityReport ; tg:method ?m ; <http://www.w3.org/2000/01/rdf-schema#label> ?t } }")
            assert {(m["m"]["v"], m["t"]["v"]) for m in methods} == {("LLM (stub-llm)", "Scripted community")}

            events, final = await ask(api, query=STRATEGIC)
            assert final["response"] == "The scripted model's answer from the reports."
            reasons = [t["o"]["v"] for t in events[2]["explain_triples"] if t["p"]["i"] == TG + "reasoning"]
            assert reasons[0] == "LLM (stub-llm) rated 9/10: names the risks"
            assert any(r.startswith("the LLM's rating was missing or unreadable; offline: similarity") for r in reasons)
            synthesis = events[-1]
            assert any(t["p"]["i"].endswith("#comment") and t["o"].get("v") == "LLM (stub-llm)"
                       for t in synthesis["explain_triples"])
            maps = [r for r in stub.requests_to("/v1/chat/completions")
                    if r.body["messages"][0]["content"].startswith("You judge how useful community reports")]
            assert maps and all(r.body["messages"][1]["content"].count("\n[") <= 8 for r in maps)
