"""Document RAG on the real stack: RabbitMQ and the real `openai` client talking HTTP to a scripted
OpenAI-compatible server, then offline (no LLM), an empty collection, and the CLI run as a user would."""

from __future__ import annotations

import asyncio
import base64
import re

import pytest

from tracegraph.base.bus.rabbitmq import RabbitMQBackend
from tracegraph.base.retrieval.offline_answer import SPAN_HEADER
from tracegraph.flow.document_rag.pipeline import NOTHING_FOUND

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.openai_stub import Fail, OpenAIStub, Reply
from support.procs import launched, tg
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(300)

QUESTION = "What does Helios Grid depend on for load forecasting?"
TG = "https://trustgraph.ai/ns/"
RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"

# From the stored Synthesis to the document title of every chunk the answer was grounded in.
CHUNK_TITLES = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
SELECT ?chunk ?title WHERE {
  GRAPH <urn:graph:retrieval> { <%s> prov:wasDerivedFrom ?exploration . ?exploration tg:selectedChunk ?chunk }
  GRAPH <urn:graph:source> { ?chunk a tg:Chunk ; prov:wasDerivedFrom+ ?document }
  ?document a tg:Document ; dc:title ?title .
}"""


def kind(message: dict) -> tuple[str, str]:
    """(message_type, step) for explain events, else (message_type, text|end|final)."""
    if message["message_type"] == "explain":
        uri = message["explain_id"]
        return "explain", uri.rsplit("/", 1)[1] if "/" in uri else "question"
    return message["message_type"], ("final" if message["end_of_session"] else
                                     "end" if message["end_of_stream"] else "text")


def objects(event: dict, predicate: str) -> list[str]:
    return [t["o"].get("v") or t["o"].get("i") for t in event["explain_triples"]
            if t["s"]["i"] == event["explain_id"] and t["p"]["i"] == predicate]


async def import_fact(api, collection: str) -> None:
    """One fact imported straight into a collection's graph (no library document, no chunks), once stored."""
    await api.request("flow/default/import/triples-bulk", {
        "metadata": {"id": "urn:test:fact", "root": "urn:test:fact", "collection": collection},
        "nquads": "<https://trustgraph.ai/e/helios-grid> <https://trustgraph.ai/r/depends-on> "
                  "<https://trustgraph.ai/e/corvid-analytics> .\n", "count": 1})

    async def stored_fact():
        return (await api.flow_service("default", "triples", {"collection": collection, "limit": 1}))["response"]
    await wait_until_async(stored_fact, what="the imported fact stored")


async def load_corpus(api) -> None:
    await asyncio.gather(*(load_and_wait(api, path) for path in sorted(CORPUS.glob("*.md"))))


async def stored(api, query: str, want: int, timeout: float = 10) -> list[dict]:
    """SPARQL bindings, polled until `want` rows are there (the writer stores events asynchronously)."""
    for _ in range(int(timeout / 0.2)):
        rows = (await api.flow_service("default", "sparql", {"query": query}))["bindings"]
        if len(rows) >= want:
            return rows
        await asyncio.sleep(0.2)
    return rows


def excerpts_prompt(body: dict) -> Reply:
    """The synthesis call: the question and the numbered excerpts, the Helios chunk first."""
    prompt = body["messages"][-1]["content"]
    assert prompt.startswith(f"Question: {QUESTION}\n\nDocument excerpts:\n\n[1] helios-grid:\n")
    assert "[2] " in prompt and "[3] " not in prompt
    return Reply("Helios Grid depends on Corvid Analytics [1].", chunks=["Helios Grid ", "depends on ",
                 "Corvid Analytics [1]."], usage={"prompt_tokens": 30, "completion_tokens": 7, "total_tokens": 37})


async def test_streaming_sequence_stored_trace_answer_document_and_llm_failure(tmp_path, rabbitmq_url):
    async with OpenAIStub() as stub:
        bus = await RabbitMQBackend(rabbitmq_url).connect()
        async with ingest_stack(tmp_path, backend=bus, llm_url=stub.base_url, llm_model="stub-llm",
                                extractor="offline") as (api, _):
            await load_corpus(api)
            stub.script(excerpts_prompt)
            events = [m async for m in api.stream("default", "document-rag", {
                "query": QUESTION, "streaming": True, "doc-limit": 2})]

            assert [kind(m) for m in events] == [
                ("explain", "question"), ("explain", "grounding"), ("explain", "exploration"), ("chunk", "text"),
                ("chunk", "text"), ("chunk", "text"), ("chunk", "end"), ("explain", "synthesis"), ("end", "final")]
            question, grounding, exploration, synthesis = (m for m in events if m["message_type"] == "explain")
            sid = question["explain_id"].removeprefix("urn:trustgraph:docrag:")
            assert [e["explain_id"] for e in (grounding, exploration, synthesis)] == [
                f"urn:trustgraph:docrag:{sid}/{step}" for step in ("grounding", "exploration", "synthesis")]
            graphs = {m["explain_graph"] for m in (question, grounding, exploration, synthesis)}
            assert graphs == {"urn:graph:retrieval"}
            answer = "".join(m["response"] for m in events[3:7])
            assert answer == "Helios Grid depends on Corvid Analytics [1]."
            final = events[-1]
            assert (final["response"], final["in_token"], final["out_token"], final["model"]) == ("", 30, 7, "stub-llm")
            assert [s["title"] for s in final["sources"]][0] == "helios-grid"

            chunks = objects(exploration, TG + "selectedChunk")
            assert objects(exploration, TG + "chunkCount") == ["2"] and all(c.startswith("urn:chunk:") for c in chunks)
            assert objects(synthesis, TG + "content") == [answer]
            assert objects(synthesis, RDFS_COMMENT) == ["LLM (stub-llm)"]
            rows = await stored(api, CHUNK_TITLES % synthesis["explain_id"], len(chunks))
            assert sorted(r["chunk"]["i"] for r in rows) == sorted(chunks)
            assert {r["title"]["v"] for r in rows} == {s["title"] for s in final["sources"]}

            [document] = objects(synthesis, TG + "document")
            assert document == f"urn:trustgraph:docrag:{sid}/answer"
            saved = await api.request("librarian", {"operation": "get-document-content", "document-id": document})
            assert base64.b64decode(saved["content"]).decode() == answer
            assert saved["document-metadata"]["document-type"] == "answer"

            stub.fail("/v1/chat/completions", *[Fail(503)] * 10)
            seen = []
            with pytest.raises(Exception, match="document-rag-error"):
                async for m in api.stream("default", "document-rag", {"query": QUESTION}):
                    seen.append(m)
            assert [kind(m) for m in seen] == [("explain", s) for s in ("question", "grounding", "exploration",
                                                                       "question")]
            assert any(c.startswith("failed: ") for c in objects(seen[-1], RDFS_COMMENT))


async def test_offline_answer_empty_collection_and_explain_off(tmp_path):
    async with ingest_stack(tmp_path) as (api, _):
        await load_corpus(api)
        events = [m async for m in api.stream("default", "document-rag", {"query": QUESTION})]
        assert [kind(m) for m in events] == [("explain", "question"), ("explain", "grounding"),
                                             ("explain", "exploration"), ("explain", "synthesis"), ("chunk", "final")]
        answer = events[-1]["response"]
        assert answer.startswith(SPAN_HEADER + "\n")  # the sentence that answers, with its document and line
        assert answer.splitlines()[1] == \
            '"Helios Grid depends on Corvid Analytics for load forecasting." (helios-grid, line 9)'
        assert "in_token" not in events[-1] and events[-1]["sources"]
        assert objects(events[3], RDFS_COMMENT)[0].startswith("offline (no LLM configured)")

        # A collection known by an imported fact, holding no document chunks: the trace says nothing was found.
        await import_fact(api, "empty")
        empty = [m async for m in api.stream("default", "document-rag", {"query": QUESTION, "collection": "empty",
                                                                         "streaming": True})]
        assert [kind(m) for m in empty] == [("explain", "question"), ("explain", "grounding"),
                                            ("explain", "exploration"), ("chunk", "end"), ("explain", "synthesis"),
                                            ("end", "final")]
        assert empty[3]["response"] == NOTHING_FOUND and empty[-1].get("sources") is None
        assert objects(empty[2], TG + "chunkCount") == ["0"]
        assert TG + "NothingFound" in objects(empty[2], "http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
        assert any(c.startswith("nothing found: ") for c in objects(empty[2], RDFS_COMMENT))

        quiet = [m async for m in api.stream("default", "document-rag", {"query": QUESTION, "explain": False})]
        assert [kind(m) for m in quiet] == [("chunk", "final")] and quiet[0]["response"] == answer

        from tracegraph.base.provenance.shacl import validate_trace
        from tracegraph.schemas.rdf import Triple

        synthesis = events[3]["explain_id"]
        await stored(api, CHUNK_TITLES % synthesis, len(objects(events[2], TG + "selectedChunk")))
        everything = (await api.flow_service("default", "triples", {"g": "*", "limit": 100000}))["response"]
        sessions = {t["s"]["i"] for t in everything if t.get("g") == "urn:graph:retrieval"
                    and t["s"]["i"].startswith("urn:trustgraph:docrag:") and "/" not in t["s"]["i"]}
        assert sessions == {events[0]["explain_id"]}, "the empty collection's trace is kept in that collection"
        report = await asyncio.to_thread(validate_trace, [Triple.model_validate(t) for t in everything])
        assert report.conforms, "\n".join(report.messages)

        async def empty_trace_stored():
            found = (await api.flow_service("default", "triples", {"g": "urn:graph:retrieval", "collection": "empty",
                                                                   "limit": 100000}))["response"]
            return found if {t["s"]["i"] for t in found} >= {m["explain_id"] for m in empty if "explain_id" in m} \
                else None
        nothing = [Triple.model_validate(t) for t in await wait_until_async(empty_trace_stored, what="the trace")]
        report = await asyncio.to_thread(validate_trace, nothing)
        assert report.conforms, "\n".join(report.messages)
        unmarked = [t for t in nothing if getattr(t.o, "iri", None) != TG + "NothingFound"]
        report = await asyncio.to_thread(validate_trace, unmarked)
        assert not report.conforms and any("tg:NothingFound" in m for m in report.messages)


def test_cli_prints_the_explained_answer(tmp_path):
    with launched(tmp_path / "data") as url:
        loaded = tg("tg-load-text", "-u", url, *(str(p) for p in sorted(CORPUS.glob("*.md"))), "--wait", timeout=120)
        assert loaded.returncode == 0, loaded.stderr
        result = tg("tg-invoke-document-rag", "-u", url, "-q", QUESTION, "-x", "--sources", "-d", "3", timeout=120)
        assert result.returncode == 0, result.stderr
        out = result.stdout
        steps = [m.group(1) for m in re.finditer(r"^\[(\w+)\] urn:trustgraph:docrag:", out, re.M)]
        assert steps == ["question", "grounding", "exploration", "synthesis"]
        assert f"Query: {QUESTION}" in out
        assert SPAN_HEADER in out and "Helios Grid depends on Corvid Analytics for load forecasting." in out
        assert "Sources:\n  helios-grid" in out
        empty = tg("tg-invoke-document-rag", "-u", url, "-q", "  ")
        assert empty.returncode == 1 and "empty question" in empty.stderr
