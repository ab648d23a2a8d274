"""The ReAct agent on the real stack: every processor, the gateway over HTTP, and the real `openai`
client talking to a scripted OpenAI-compatible server. Replies are chosen by the system prompt, so the
agent's own calls and those of the GraphRAG it asks may interleave in any order."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import uuid
from collections import deque

import pytest

from tracegraph.base.bus.rabbitmq import RabbitMQBackend
from tracegraph.base.errors import RemoteError
from tracegraph.cli.agent_output import REPEATED_OBSERVATION
from tracegraph.cli.library_upload import add_document
from tracegraph.flow.agent.react import OFFLINE_NOTE
from tracegraph.flow.graph_rag.focus import FOCUS_SYSTEM, edge_id

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.openai_stub import Fail, OpenAIStub, Reply
from support.procs import launched, tg
from support.upstream import needs_upstream, upstream

pytestmark = pytest.mark.timeout(300)

QUESTION = "What does Helios Grid depend on?"
GRAPH_ANSWER = "Helios Grid depends on Corvid Analytics."
TG_NS = "https://trustgraph.ai/ns/"

SUBTRACE_TO_SOURCE = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
SELECT DISTINCT ?action ?title WHERE {
  GRAPH <urn:graph:retrieval> {
    <%s> prov:wasDerivedFrom+ ?analysis .
    ?analysis a tg:Analysis ; tg:action ?action ; tg:subTrace ?question .
    ?focus prov:wasDerivedFrom+ ?question ; tg:selectedEdge/tg:edge ?edge .
  }
  GRAPH <urn:graph:source> { ?subgraph tg:contains ?edge ; prov:wasDerivedFrom/prov:wasDerivedFrom+ ?document }
  ?document a tg:Document ; dc:title ?title .
}"""


def ask(tool: str, **arguments: str) -> str:
    return f"Thought: I should use {tool}.\nAction: {tool}\nAction Input: {json.dumps(arguments)}"


class ScriptedLlm:
    """Answers each chat request by its system prompt: the agent's from `agent`, in order; GraphRAG's
    grounding, focus and synthesis with fixed replies that pick the Helios → Corvid edge."""

    def __init__(self, *agent: str) -> None:
        self.agent = deque(agent)

    def __call__(self, body: dict) -> Reply | str:
        system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
        if system.startswith("You answer the user's question step by step"):
            return Reply(self.agent.popleft(), usage={"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70})
        if system.startswith("List the key concepts"):
            return "Helios Grid"
        if system == FOCUS_SYSTEM:
            wanted = edge_id("Helios Grid", "depends on", "Corvid Analytics")
            return json.dumps({"id": wanted, "reasoning": "It answers the question directly."})
        return Reply(GRAPH_ANSWER, chunks=["Helios Grid ", "depends on ", "Corvid Analytics."])

    def script(self, stub: OpenAIStub) -> "ScriptedLlm":
        stub.script(*[self] * 50)
        return self


def shape(message: dict) -> str:
    """`explain agent:final`, `explain grounding`, `thought`, …: what a message is, without ids."""
    kind = message["message_type"]
    if kind != "explain":
        return kind + (" (end)" if message.get("end_of_dialog") else "")
    uri = message["explain_id"]
    if uri.startswith("urn:trustgraph:agent:"):
        return "explain agent" + (":" + uri.rsplit("/", 1)[1] if "/" in uri else "")
    return "explain " + uri.split(":")[-2]


def objects(message: dict, predicate: str) -> list[str]:
    return [t["o"].get("v") or t["o"].get("i") for t in message["explain_triples"]
            if t["s"].get("i") == message["explain_id"] and t["p"]["i"] == predicate]


def explain_of(messages: list[dict], suffix: str) -> dict:
    return next(m for m in messages if m["message_type"] == "explain" and m["explain_id"].endswith(suffix)
                and m["explain_id"].startswith("urn:trustgraph:agent:"))


async def stored(api, uri: str) -> list[dict]:
    for _ in range(50):  # the explainability writer stores events shortly after they are sent
        found = (await api.flow_service("default", "triples", {"s": {"t": "i", "i": uri}, "g": "urn:graph:retrieval",
                                                                "limit": 1000}))["response"]
        if found:
            return found
        await asyncio.sleep(0.1)
    return []


async def ask_agent(api, **request) -> list[dict]:
    return [m async for m in api.stream("default", "agent", {"question": QUESTION, "streaming": True, **request})]


@pytest.mark.parametrize("bus", ["inproc", pytest.param("rabbitmq", marks=pytest.mark.rabbitmq)])
async def test_two_iterations_relay_the_graph_rag_trace_and_one_query_walks_to_the_source(tmp_path, bus, request):
    backend = await RabbitMQBackend(request.getfixturevalue("rabbitmq_url")).connect() if bus == "rabbitmq" else None
    sid = f"two-steps-{uuid.uuid4().hex[:8]}"
    async with OpenAIStub() as stub:
        async with ingest_stack(tmp_path, backend=backend, llm_url=stub.base_url, llm_model="stub-llm",
                                extractor="offline") as (api, _):
            await load_and_wait(api, CORPUS / "helios-grid.md")
            ScriptedLlm(ask("knowledge-query", question=QUESTION),
                        "Thought: The knowledge graph answered it.\nFinal Answer: Helios Grid depends on Corvid Analytics."
                        ).script(stub)
            messages = await ask_agent(api, session_id=sid)

            assert [shape(m) for m in messages] == [
                "explain agent", "thought", "action",
                "explain question", "explain grounding", "explain exploration", "explain focus", "explain synthesis",
                "observation", "explain agent:i1", "thought", "answer", "explain agent:final", "answer (end)"]
            assert messages[2]["content"] == f'knowledge-query {{"question": "{QUESTION}"}}'
            assert messages[8]["content"] == GRAPH_ANSWER and messages[11]["content"] == GRAPH_ANSWER
            final = messages[-1]
            assert final["end_of_dialog"] and final["model"] == "stub-llm"
            assert final["in_token"] >= 100 and final["out_token"] >= 40  # the agent's two calls and GraphRAG's

            session = f"urn:trustgraph:agent:{sid}"
            i1 = f"{session}/i1"
            sub_question = messages[3]["explain_id"]
            assert objects(messages[3], "http://www.w3.org/ns/prov#wasDerivedFrom") == [i1]
            analysis = explain_of(messages, "/i1")
            assert objects(analysis, TG_NS + "subTrace") == [sub_question]
            assert objects(analysis, TG_NS + "observation") == [GRAPH_ANSWER]
            assert objects(analysis, TG_NS + "thought") == ["I should use knowledge-query."]

            # Every explain event is also the provenance spec's reference event: the nodes its step made.
            explains = [m for m in messages if m["message_type"] == "explain"]
            assert all(m["chunk_type"] == "provenance" and m["explain_id"] in m["provenance_refs"] for m in explains)
            assert not any("chunk_type" in m or "provenance_refs" in m for m in messages if m not in explains)
            thought, observation = f"{i1}/thought", f"{i1}/observation"
            assert analysis["provenance_refs"] == [i1, thought, observation]
            focus = next(m for m in explains if m["explain_id"].startswith("urn:trustgraph:prov:focus:"))
            assert f"{focus['explain_id'].replace(':focus:', ':edge:')}:0" in focus["provenance_refs"]
            conclusion = explain_of(messages, "/final")
            assert objects(conclusion, TG_NS + "terminationReason") == ["final-answer"]
            document = objects(conclusion, TG_NS + "document")[0]
            assert document == f"{session}/answer"

            inline = {json.dumps(t, sort_keys=True) for m in messages if m["message_type"] == "explain"
                      and m["explain_id"].startswith("urn:trustgraph:agent:") for t in m["explain_triples"]}
            kept = {json.dumps(t, sort_keys=True) for uri in (session, i1, f"{session}/final")
                    for t in await stored(api, uri)}
            assert inline <= kept

            # Upstream's Thought and Observation entities, stored beside the step (referenced, not inline),
            # each derived from it and holding its text in the librarian under its own IRI.
            for node, kind, text in ((thought, "Thought", "I should use knowledge-query."),
                                     (observation, "Observation", GRAPH_ANSWER)):
                entity = {"explain_id": node, "explain_triples": await stored(api, node)}
                assert TG_NS + kind in objects(entity, "http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
                assert objects(entity, "http://www.w3.org/ns/prov#wasDerivedFrom") == [i1]
                assert objects(entity, TG_NS + "document") == [node]
                saved = await api.request("librarian", {"operation": "get-document-content", "document-id": node})
                assert base64.b64decode(saved["content"]).decode() == text
                assert saved["document-metadata"]["document-type"] == "explain-text", "not listed as an answer"
            assert await stored(api, sub_question), "GraphRAG stored its own trace"

            result = await api.flow_service("default", "sparql",
                                            {"query": SUBTRACE_TO_SOURCE % f"{session}/final"})
            assert [(b["action"]["v"], b["title"]["v"]) for b in result["bindings"]] == [("knowledge-query", "helios-grid")]

            saved = await api.request("librarian", {"operation": "get-document-content", "document-id": document})
            assert saved["document-metadata"]["document-type"] == "answer"


async def test_failures_become_observations_and_the_bound_ends_the_loop(tmp_path):
    async with OpenAIStub() as stub:
        async with ingest_stack(tmp_path, llm_url=stub.base_url, extractor="offline") as (api, _):
            # A document added, not processed: the librarian's record makes the collection known.
            await add_document(api, CORPUS / "helios-grid.md", collection="default")
            ScriptedLlm(ask("knowledge-query", question="   "), ask("calculator", expression="1/0"),
                        "Thought: Neither worked.\nFinal Answer: I cannot tell.",
                        ask("web-search", query="Helios"), ask("calculator", expression="6*7"),
                        "Thought: done\nFinal Answer: 42",
                        ask("calculator", expression="1+1"), ask("calculator", expression="2+2")).script(stub)

            raising = await ask_agent(api)
            observations = [m["content"] for m in raising if m["message_type"] == "observation"]
            assert observations == ["Error: knowledge-query failed: graph-rag-error: empty question",
                                    "Error: calculator failed: division by zero"]
            for step in ("/i1", "/i2"):
                analysis = explain_of(raising, step)
                assert TG_NS + "Error" in objects(analysis, "http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
                assert objects(analysis, TG_NS + "toolError")
            assert [m["content"] for m in raising if m["message_type"] == "answer"] == ["I cannot tell.", ""]

            unknown = await ask_agent(api)
            observations = [m["content"] for m in unknown if m["message_type"] == "observation"]
            assert observations[0].startswith("Error: unknown tool 'web-search'; the tools are: calculator, ")
            assert observations[1] == "42"
            assert objects(explain_of(unknown, "/i2"), "http://www.w3.org/ns/prov#wasDerivedFrom")[0].endswith("/i1")

            bounded = await ask_agent(api, **{"max-iterations": 2})
            assert [shape(m) for m in bounded if m["message_type"] == "explain"] == [
                "explain agent", "explain agent:i1", "explain agent:i2", "explain agent:final"]
            conclusion = explain_of(bounded, "/final")
            assert objects(conclusion, TG_NS + "answer") == ["Stopped after 2 iterations without a final answer."]
            assert objects(conclusion, TG_NS + "terminationReason") == ["max-iterations"]

            stub.fail("/v1/chat/completions", *[Fail(503)] * 3)  # the openai client's three attempts
            failed: list[dict] = []
            with pytest.raises(RemoteError, match="agent-error: .*llm-error"):
                async for message in api.stream("default", "agent", {"question": QUESTION}):
                    failed.append(message)
            closing = failed[-1]
            assert closing["explain_id"].startswith("urn:trustgraph:agent:") and "/" not in closing["explain_id"]
            assert any(t["o"].get("v", "").startswith("failed: ") for t in closing["explain_triples"])


async def test_offline_strategy_and_explain_off(tmp_path):
    async with ingest_stack(tmp_path) as (api, _):
        await load_and_wait(api, CORPUS / "helios-grid.md")
        messages = await ask_agent(api, session_id="offline")
        thoughts = [m["content"] for m in messages if m["message_type"] == "thought"]
        assert thoughts[0].startswith(f"{OFFLINE_NOTE}: there is no model to plan with, so asking the knowledge graph")
        answer = next(m["content"] for m in messages if m["message_type"] == "answer")
        # The graph's answer states what Helios Grid depends on, so the documents are not asked.
        assert re.match(r"Offline answer \(no LLM configured\): Helios Grid depends on [^\n]*Corvid Analytics[^\n]*\n"
                        r"Supporting facts:\n- Helios Grid depends on Corvid Analytics \(helios-grid, line 9\)", answer)
        analysis = explain_of(messages, "/i1")
        assert objects(analysis, "http://www.w3.org/2000/01/rdf-schema#comment") == [OFFLINE_NOTE]
        assert objects(analysis, TG_NS + "subTrace")[0].startswith("urn:trustgraph:question:")
        assert [m["content"].split()[0] for m in messages if m["message_type"] == "action"] == ["knowledge-query"]

        # The graph knows nothing of Mongolia (its answer has no evidence, or does not state a capital of it):
        # the documents are asked next.
        unknown = await ask_agent(api, question="What is the capital of Mongolia?", session_id="unknown")
        actions = [m["content"].split()[0] for m in unknown if m["message_type"] == "action"]
        assert actions == ["knowledge-query", "document-query"]
        thought = [m["content"] for m in unknown if m["message_type"] == "thought"][1]
        assert re.match(re.escape(OFFLINE_NOTE) + ": the graph's answer was weak: it (has no evidence|does not state "
                        "what the question asks: 'capital' of Mongolia)", thought)
        documents = explain_of(unknown, "/i2")
        assert objects(documents, TG_NS + "thought") == [thought]
        assert objects(documents, "http://www.w3.org/2000/01/rdf-schema#comment") == [OFFLINE_NOTE]
        assert objects(documents, TG_NS + "subTrace")[0].startswith("urn:trustgraph:docrag:")
        assert objects(explain_of(unknown, "/final"), "http://www.w3.org/ns/prov#wasDerivedFrom")[0].endswith("/i2")

        quiet = await ask_agent(api, session_id="quiet", explain=False)
        assert [m["message_type"] for m in quiet] == ["thought", "action", "observation", "answer", "answer"]
        await asyncio.sleep(0.5)
        assert not (await api.flow_service("default", "triples", {"s": {"t": "i", "i": "urn:trustgraph:agent:quiet"},
                                                                  "g": "urn:graph:retrieval"}))["response"]
        documents = (await api.request("librarian", {"operation": "list-documents"}))["document-metadatas"]
        assert not [d for d in documents if d["id"].startswith("urn:trustgraph:agent:quiet/i")], "no step texts kept"
        assert [d for d in documents if d["id"] == "urn:trustgraph:agent:offline/i1/observation"]


def test_invoke_agent_explained_and_verbose_against_tg_launch(tmp_path):
    with launched(tmp_path / "data") as url:
        loaded = tg("tg-load-text", "-u", url, str(CORPUS / "helios-grid.md"), "--wait", timeout=120)
        assert loaded.returncode == 0, loaded.stderr
        result = tg("tg-invoke-agent", "-u", url, "-q", QUESTION, "-x", "-v", timeout=120)
        assert result.returncode == 0, result.stderr
        out = result.stdout
        assert f"Thought: {OFFLINE_NOTE}: there is no model to plan with" in out
        assert f'Action: knowledge-query {{"question": "{QUESTION}"}}' in out
        # The graph's answer is the agent's answer: printed once, its observation naming it.
        assert f"\n{REPEATED_OBSERVATION}\n" in out
        assert len(re.findall(r"^Offline answer \(no LLM configured\): Helios Grid depends on [^\n]*Corvid Analytics"
                              r"[^\n]*\nSupporting facts:\n- Helios Grid depends on Corvid Analytics \(",
                              out, re.M)) == 1
        explained = re.findall(r"^\[[\w -]+\] (urn:trustgraph:\S+)", out, re.M)
        assert explained[0].startswith("urn:trustgraph:agent:") and explained[-1].endswith("/final")
        assert any(uri.startswith("urn:trustgraph:prov:focus:") for uri in explained), "the sub-trace is relayed"
        # The answer, on stdout after the last Analysis, then its Conclusion step.
        assert re.search(r"\n\n" + re.escape(REPEATED_OBSERVATION) +
                         r"\nOffline answer \(no LLM configured\)[^\[]*\n\[conclusion\] .*Ended: final-answer", out, re.S)

        refused = tg("tg-invoke-agent", "-u", url, "-q", QUESTION, "--max-iterations", "0")
        assert refused.returncode == 1 and "max-iterations" in refused.stderr


@needs_upstream
async def test_upstream_cli_invokes_the_agent_and_shows_its_trace(tmp_path):
    async with OpenAIStub() as stub:
        async with ingest_stack(tmp_path, llm_url=stub.base_url, extractor="offline") as (api, stack):
            url = f"http://127.0.0.1:{stack['gateway'].port}/"
            await load_and_wait(api, CORPUS / "helios-grid.md")
            ScriptedLlm(ask("knowledge-query", question=QUESTION),
                        f"Thought: The graph answered.\nFinal Answer: {GRAPH_ANSWER}",
                        ask("calculator", expression="6*7"), "Thought: Done.\nFinal Answer: 42").script(stub)

            status, out, err = await upstream("tg-invoke-agent", "-u", url, "-q", QUESTION, "-x", "-v")
            assert status == 0 and "Exception" not in out, (out, err)
            assert GRAPH_ANSWER in out
            assert "[analysis: knowledge-query]" in err and "[conclusion]" in err, err
            session = re.search(r"urn:trustgraph:agent:[0-9a-f-]+", err).group(0)

            status, out, err = await upstream("tg-show-explain-trace", "-u", url, session)
            assert status == 0, err
            assert f"=== Agent Session: {session} ===" in out and f"Question: {QUESTION}" in out
            assert "Action: knowledge-query" in out and "--- Conclusion ---" in out
            sections = dict(re.findall(r"^--- (\w+) ---\n(.*?)(?=^--- |\Z)", out, re.M | re.S))
            assert GRAPH_ANSWER in sections["Conclusion"]  # the answer, read back from the librarian
            assert GRAPH_ANSWER in sections["Observation"]  # the step's Observation entity, its text likewise

            # Its JSON form fails on a trace with a sub-trace, whatever the data: `fetch_agent_trace` adds
            # the sub-trace as a dict, which its own `trace_to_dict` cannot serialise (upstream's bug).
            status, out, err = await upstream("tg-show-explain-trace", "-u", url, session, "--format", "json")
            assert status != 0 and "'dict' object has no attribute 'entity_type'" in err, (out, err)

            status, out, err = await upstream("tg-invoke-agent", "-u", url, "-q", "What is six times seven?", "-x")
            assert status == 0 and "42" in out, (out, err)
            session = re.search(r"urn:trustgraph:agent:[0-9a-f-]+", err).group(0)
            status, out, err = await upstream("tg-show-explain-trace", "-u", url, session, "--format", "json")
            assert status == 0, err
            steps = {step["type"]: step for step in json.loads(out)["steps"]}
            assert steps["analysis"]["thought"] == "I should use calculator."
            assert steps["observation"]["document"] == f"{session}/i1/observation"
