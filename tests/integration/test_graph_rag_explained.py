"""GraphRAG through a real broker (RabbitMQ) with the real `openai` client talking HTTP to a scripted
OpenAI-compatible server: the exact event sequence, the triples, the stored trace, and the source chain."""

from __future__ import annotations

import json

import pytest

from tracegraph.base.bus.rabbitmq import RabbitMQBackend
from tracegraph.flow.graph_rag.focus import edge_id

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.openai_stub import Reply, OpenAIStub
from support.stack import wait_until_async

pytestmark = [pytest.mark.rabbitmq, pytest.mark.timeout(300)]

TG = "https://trustgraph.ai/ns/"
PROV = "http://www.w3.org/ns/prov#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"

SOURCE_CHAIN = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
SELECT DISTINCT ?title WHERE {
  GRAPH <urn:graph:retrieval> {
    <%s> prov:wasDerivedFrom ?focus .
    ?focus tg:selectedEdge/tg:edge ?edge .
  }
  GRAPH <urn:graph:source> { ?subgraph tg:contains ?edge ; prov:wasDerivedFrom/prov:wasDerivedFrom+ ?document }
  ?document a tg:Document ; dc:title ?title .
}"""


def pick_dependency(body: dict) -> Reply:
    """The focus step's reply: the edge whose predicate is 'depends on', by the id the prompt shows."""
    prompt = body["messages"][-1]["content"]
    edges = [json.loads(line) for line in prompt.splitlines() if line.startswith("{")]
    chosen = [e for e in edges if e["p"] == "depends on" and e["s"] == "Helios Grid"]
    assert chosen and chosen[0]["id"] == edge_id("Helios Grid", "depends on", "Corvid Analytics")
    return Reply("\n".join(json.dumps({"id": e["id"], "reasoning": "It answers the question directly."})
                           for e in chosen), usage={"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52})


async def test_streaming_graph_rag_event_sequence_trace_and_sources(tmp_path, rabbitmq_url):
    async with OpenAIStub() as stub:
        bus = await RabbitMQBackend(rabbitmq_url).connect()
        async with ingest_stack(tmp_path, backend=bus, llm_url=stub.base_url, llm_model="stub-llm",
                                extractor="offline") as (api, _):
            await load_and_wait(api, CORPUS / "helios-grid.md")
            stub.script(Reply("Helios Grid", usage={"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}),
                        pick_dependency,
                        Reply("Helios Grid depends on Corvid Analytics.", chunks=["Helios Grid ", "depends on ",
                              "Corvid Analytics."], usage={"prompt_tokens": 30, "completion_tokens": 7,
                                                           "total_tokens": 37}))
            events = [m async for m in api.stream("default", "graph-rag", {
                "query": "What does Helios Grid depend on?", "streaming": True})]

            kinds = [(m["message_type"], m.get("explain_id", "").split(":")[-2] if m.get("explain_id") else
                      ("final" if m["end_of_session"] else "end" if m["end_of_stream"] else "text")) for m in events]
            assert kinds == [("explain", "question"), ("explain", "grounding"), ("explain", "exploration"),
                             ("explain", "focus"), ("chunk", "text"), ("chunk", "text"), ("chunk", "text"),
                             ("chunk", "end"), ("explain", "synthesis"), ("chunk", "final")]
            assert "".join(m["response"] for m in events[4:8]) == "Helios Grid depends on Corvid Analytics."
            final = events[-1]
            assert (final["in_token"], final["out_token"], final["model"]) == (9 + 40 + 30, 2 + 12 + 7, "stub-llm")
            assert [s["title"] for s in final["sources"]] == ["helios-grid"]
            assert all(m["explain_graph"] == "urn:graph:retrieval" for m in events if m["message_type"] == "explain")

            focus = next(m for m in events if m.get("explain_id", "").startswith("urn:trustgraph:prov:focus:"))
            edge = next(t["o"] for t in focus["explain_triples"] if t["p"]["i"] == "https://trustgraph.ai/ns/edge")
            assert edge["t"] == "t" and edge["tr"]["s"]["i"] == "https://trustgraph.ai/e/helios-grid"
            edge_selections = {t["s"]["i"] for t in focus["explain_triples"]
                               if t["p"]["i"] == "https://trustgraph.ai/ns/edge"}
            reasoning = [t["o"]["v"] for t in focus["explain_triples"]
                         if t["p"]["i"] == "https://trustgraph.ai/ns/reasoning" and t["s"]["i"] in edge_selections]
            assert reasoning == ["It answers the question directly."]
            grounding = events[1]["explain_triples"]
            assert {"https://trustgraph.ai/ns/inToken", "https://trustgraph.ai/ns/llmModel"} <= \
                {t["p"]["i"] for t in grounding}

            synthesis = events[-2]["explain_id"]
            async def source_chain():  # the writer stores the last event shortly after it is streamed
                return (await api.flow_service("default", "sparql", {"query": SOURCE_CHAIN % synthesis}))["bindings"]
            stored = await wait_until_async(source_chain, what="the stored synthesis to reach its source")
            assert [b["title"]["v"] for b in stored] == ["helios-grid"]
            answer_id = next(t["o"]["i"] for t in events[-2]["explain_triples"]
                             if t["p"]["i"] == "https://trustgraph.ai/ns/document")
            saved = await api.request("librarian", {"operation": "get-document-content", "document-id": answer_id})
            assert saved["document-metadata"]["document-type"] == "answer"


async def test_non_streaming_upstream_order_and_llm_down_closes_the_question(tmp_path):
    async with OpenAIStub() as stub:
        async with ingest_stack(tmp_path, llm_url=stub.base_url, extractor="offline") as (api, _):
            await load_and_wait(api, CORPUS / "helios-grid.md")
            stub.script("Helios Grid", pick_dependency, "Corvid Analytics.")
            events = [m async for m in api.stream("default", "graph-rag", {"query": "What does Helios Grid depend on?"})]
            assert [m["message_type"] for m in events] == ["explain"] * 5 + ["chunk"]
            assert events[-1]["response"] == "Corvid Analytics." and events[-1]["end_of_session"]

            from support.openai_stub import Fail
            stub.fail("/v1/chat/completions", *[Fail(503)] * 10)
            with pytest.raises(Exception, match="graph-rag-error"):
                async for m in api.stream("default", "graph-rag", {"query": "What does Helios Grid depend on?"}):
                    events.append(m)
            closing = events[-1]
            assert closing["explain_id"].startswith("urn:trustgraph:question:")
            assert any(t["o"].get("v", "").startswith("failed: ") for t in closing["explain_triples"])


async def test_stored_traces_and_their_extraction_provenance_pass_shacl(tmp_path):
    import asyncio

    from tracegraph.base.provenance.shacl import validate_trace
    from tracegraph.schemas.rdf import Triple

    async with ingest_stack(tmp_path) as (api, _):
        for name in ("helios-grid.md", "corvid-analytics.md"):
            await load_and_wait(api, CORPUS / name)
        events = [m async for m in api.stream("default", "graph-rag", {"query": "Who acquired Corvid Analytics?"})]
        inline = {json.dumps(t, sort_keys=True) for m in events if m["message_type"] == "explain"
                  for t in m["explain_triples"]}

        async def everything_once_stored():  # the writer stores the last event shortly after it is streamed
            stored = (await api.flow_service("default", "triples", {"g": "*", "limit": 100000}))["response"]
            retrieval = {json.dumps(t, sort_keys=True) for t in stored if t.get("g") == "urn:graph:retrieval"}
            return stored if inline <= retrieval else None

        everything = await wait_until_async(everything_once_stored, what="every streamed explain event stored")

        report = await asyncio.to_thread(validate_trace, [Triple.model_validate(t) for t in everything])
        assert report.conforms, "\n".join(report.messages)

        broken = [Triple.model_validate(t) for t in everything
                  if not (t["p"]["i"] == "https://trustgraph.ai/ns/query")]
        report = await asyncio.to_thread(validate_trace, broken)
        assert not report.conforms and any("tg:query" in m for m in report.messages)


async def test_each_exploration_comes_from_its_question_and_an_empty_result_says_nothing_was_found(tmp_path):
    import asyncio

    from tracegraph.base.provenance.shacl import validate_trace
    from tracegraph.cli.library_upload import add_document
    from tracegraph.schemas.rdf import Triple

    def objects(event: dict, predicate: str) -> list[str]:
        return [t["o"].get("v") or t["o"].get("i") for t in event["explain_triples"]
                if t["s"]["i"] == event["explain_id"] and t["p"]["i"] == predicate]

    def step(events: list[dict], name: str) -> dict:
        return next(m for m in events if m.get("explain_id", "").startswith(f"urn:trustgraph:prov:{name}:"))

    async with ingest_stack(tmp_path) as (api, _):
        await load_and_wait(api, CORPUS / "helios-grid.md")
        for service in ("graph-rag", "search"):  # search answers with GraphRAG's chain
            events = [m async for m in api.stream("default", service, {"query": "What does Helios Grid depend on?"})]
            exploration = step(events, "exploration")
            assert objects(exploration, PROV + "wasDerivedFrom") == [step(events, "grounding")["explain_id"]]
            assert objects(exploration, PROV + "wasGeneratedBy") == [events[0]["explain_id"]], service

        # A document added but not processed: the collection is known, and holds no fact to answer from.
        await add_document(api, CORPUS / "corvid-analytics.md", collection="unprocessed")
        events = [m async for m in api.stream("default", "graph-rag", {"query": "Who acquired Corvid Analytics?",
                                                                       "collection": "unprocessed"})]
        focus, exploration = step(events, "focus"), step(events, "exploration")
        for empty in (exploration, focus):
            assert TG + "NothingFound" in objects(empty, RDF_TYPE)
            assert any(c.startswith("nothing found: ") for c in objects(empty, RDFS + "comment"))
        assert objects(exploration, TG + "edgeCount") == ["0"] and not objects(focus, TG + "selectedEdge")

        async def trace_stored():
            found = (await api.flow_service("default", "triples", {"g": "urn:graph:retrieval", "limit": 100000,
                                                                   "collection": "unprocessed"}))["response"]
            return found if len({t["s"]["i"] for t in found}) >= 5 else None
        stored = [Triple.model_validate(t) for t in await wait_until_async(trace_stored, what="the trace stored")]
        report = await asyncio.to_thread(validate_trace, stored)
        assert report.conforms, "\n".join(report.messages)
        selected = Triple.model_validate({"s": {"t": "i", "i": focus["explain_id"]},
                                          "p": {"t": "i", "i": TG + "selectedEdge"},
                                          "o": {"t": "i", "i": "urn:trustgraph:prov:edge:x:0"}})
        report = await asyncio.to_thread(validate_trace, [*stored, selected])
        assert any("tg:NothingFound step selects no edge" in m for m in report.messages), report.messages
