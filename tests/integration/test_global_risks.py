"""Global questions answered from what the graph knows, on the whole in-process stack over the sample
corpus's architecture documents (CODEOWNERS, ADRs 0007 and 0012, the Skyline post-mortem, the two
Skyline reviews): the top risks come back ranked by severity with their evidence and sources, each
risk traced in the stored explain trace to its facts and the documents they were read from; the
platform's structure comes back as groups and the dependencies between them."""

from __future__ import annotations

import asyncio
import json

import pytest

from tracegraph.base.provenance.shacl import validate_nquads, validate_trace
from tracegraph.schemas.rdf import Triple

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.procs import tg_async
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(300)

TG = "https://trustgraph.ai/ns/"
PREFIXES = f"PREFIX tg: <{TG}> PREFIX prov: <http://www.w3.org/ns/prov#> "
FILES = ("CODEOWNERS", "adr-0007-skyline-storage-gateway.md", "adr-0012-skyline-two-regions.md",
         "postmortem-2024-06-skyline-outage.md", "skyline-review-2024.md", "skyline-review-2025.md")
RISKS = "What are our top 3 architectural risks?"
STRUCTURE = "How is the platform structured?"


async def ask(api, query: str) -> tuple[list[dict], dict]:
    events, final = [], {}
    async for message in api.stream("default", "search", {"query": query}):
        if message.get("message_type") == "explain":
            events.append(message)
        if message.get("end_of_session"):
            final = message
    return events, final


def objects(event: dict, subject: str, predicate: str) -> list[str]:
    return [t["o"].get("v", t["o"].get("i")) for t in event["explain_triples"]
            if t["s"].get("i") == subject and t["p"].get("i") == TG + predicate]


async def sparql(api, query: str) -> list[dict]:
    return (await api.flow_service("default", "sparql", {"query": PREFIXES + query}))["bindings"]


@pytest.fixture
async def stack(tmp_path):
    async with ingest_stack(tmp_path, derived_settle=0.1) as (api, _):
        await load_with_reports(api)
        yield api


async def load_with_reports(api) -> None:
    """The corpus files loaded and extracted, then the community reports written."""
    for name in FILES:
        await load_and_wait(api, CORPUS / name)

    async def reported():
        found = await api.flow_service("default", "community", {"operation": "status"})
        return found if found["counts"].get("reports", 0) else None
    await wait_until_async(reported, timeout=60, what="community reports")


async def test_the_top_risks_come_ranked_with_evidence_and_sources_and_trace_to_their_documents(stack):
    api = stack
    events, final = await ask(api, RISKS)
    assert final["query_type"] == "strategic" and final["confidence"]["retrieval_strategies_used"] == ["global"]
    answer = final["response"]
    assert answer.startswith("Offline answer (no LLM configured): the 3 most severe of"), answer
    assert "1. Orbis Cloud is a single point of failure" in answer, answer
    assert "Dependency cycle: Skyline → Demand Feed → Storage Gateway → Skyline" in answer, answer
    assert "Ownership of Skyline is disputed" in answer and "so CODEOWNERS looks out of date" in answer, answer
    assert "Evidence: " in answer and "adr-0007-skyline-storage-gateway line" in answer
    scores = [e["score"] for e in final["evidence"]]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 3, "ranked by each risk's severity"
    titles = {s["title"] for s in final["sources"]}
    assert {"adr-0007-skyline-storage-gateway", "postmortem-2024-06-skyline-outage", "CODEOWNERS"} <= titles, titles

    focus = events[3]
    risks = objects(focus, focus["explain_id"], "selectedRisk")
    assert len(risks) == 3
    assert objects(focus, risks[0], "riskKind") == ["single-point-of-failure"]
    assert all(objects(focus, r, "evidence") for r in risks), "every risk names its evidence edges"

    async def traced():  # stored RiskSelection → evidence edge → quoted fact → subgraph → … → document
        return await sparql(api, """SELECT DISTINCT ?kind ?title WHERE {
            GRAPH <urn:graph:retrieval> { ?r a tg:RiskSelection ; tg:riskKind ?kind ; tg:evidence ?sel .
                                          ?sel tg:edge ?fact }
            GRAPH <urn:graph:source> { ?sg tg:contains ?fact ; prov:wasDerivedFrom ?parent .
                                       ?parent prov:wasDerivedFrom* ?doc }
            ?doc a tg:Document ; <http://purl.org/dc/elements/1.1/title> ?title }""")
    found = await wait_until_async(traced, timeout=10, what="the stored risks resolving to documents")
    by_kind: dict[str, set[str]] = {}
    for row in found:
        by_kind.setdefault(row["kind"]["v"], set()).add(row["title"]["v"])
    assert "adr-0007-skyline-storage-gateway" in by_kind["single-point-of-failure"], by_kind
    assert "CODEOWNERS" in by_kind["disputed-ownership"] and "skyline-review-2025" in by_kind["disputed-ownership"]

    _, lower = await ask(api, RISKS.lower())
    assert lower["response"] == answer, "the same answer whatever the case"
    code, out, err = await tg_async("tg-search", "-u", api.url, "-q", RISKS, "-x")
    assert code == 0, err
    assert "Risk #1 [severity 0." in out and "Orbis Cloud is a single point of failure (single-point-of-failure" in out
    assert "Severity: 0.3 + 0.6 × √(" in out and "Source:" in out, out

    code, exported, err = await tg_async("tg-export-explain-trace", "-u", api.url, events[0]["explain_id"],
                                         "--format", "nquads")
    assert code == 0, err
    alone = await asyncio.to_thread(validate_nquads, exported)
    assert alone.conforms, "\n".join(alone.messages)  # the rules and records its facts are about come along

    everything = (await api.flow_service("default", "triples", {"g": "urn:graph:retrieval", "limit": 200000}))
    report = await asyncio.to_thread(validate_trace, [Triple.model_validate(t) for t in everything["response"]])
    assert report.conforms, "\n".join(report.messages)


async def test_the_structure_is_told_as_groups_and_the_dependencies_between_them(stack):
    events, final = await ask(stack, STRUCTURE)
    answer = final["response"]
    assert answer.startswith("Offline answer (no LLM configured), from the graph's communities and its dependencies: "
                             "the platform falls into"), answer
    assert "1. " in answer and "Skyline" in answer.splitlines()[1], answer
    focus = events[3]
    assert objects(focus, focus["explain_id"], "selectedReport"), "each group is a kept community report"
    scores = [e["score"] for e in final["evidence"]]
    assert scores and scores == sorted(scores, reverse=True)
    assert final["sources"], "the documents behind the dependencies"


def scripted_llm(body: dict) -> str:
    """The scripted model, answering by its system prompt: reports, the router, the risk answer."""
    from tracegraph.base.communities.reports import REPORT_SYSTEM
    from tracegraph.base.retrieval.global_answers import RISK_SYSTEM
    from tracegraph.base.retrieval.router import ROUTER_SYSTEM

    system = body["messages"][0]["content"]
    if system == REPORT_SYSTEM:
        return json.dumps({"title": "Scripted community", "summary": "A community.", "rating": 5})
    if system == ROUTER_SYSTEM:
        return "strategic"
    if system == RISK_SYSTEM:
        return "The scripted model ranks Orbis Cloud first."
    return "Something else."


async def test_with_an_llm_the_risks_are_written_up_by_it_from_the_computed_risks(tmp_path):
    from support.openai_stub import OpenAIStub

    async with OpenAIStub() as stub:
        stub.script(*[scripted_llm] * 1000)
        async with ingest_stack(tmp_path, llm_url=stub.base_url, llm_model="stub-llm", extractor="offline",
                                derived_settle=0.1) as (api, _):
            await load_with_reports(api)
            before = len(stub.requests_to("/v1/chat/completions"))
            events, final = await ask(api, RISKS)
            assert final["response"] == "The scripted model ranks Orbis Cloud first."
            asked = [r.body for r in stub.requests_to("/v1/chat/completions")[before:]]
            systems = [b["messages"][0]["content"] for b in asked]
            from tracegraph.base.retrieval.global_answers import RISK_SYSTEM
            from tracegraph.base.retrieval.global_map import MAP_SYSTEM
            assert MAP_SYSTEM not in systems, "the reports are not rated for a question the risks answer"
            (prompt,) = [b["messages"][1]["content"] for b in asked if b["messages"][0]["content"] == RISK_SYSTEM]
            assert "[1] Orbis Cloud is a single point of failure (single point of failure, severity 0." in prompt
            assert any(t["p"]["i"].endswith("#comment") and t["o"].get("v") == "LLM (stub-llm)"
                       for t in events[-1]["explain_triples"]), "the Synthesis says the LLM wrote it"
            assert final["evidence"] and final["evidence"][0]["score"] > final["evidence"][-1]["score"]
