"""The ReAct loop without a bus: a scripted LLM and scripted GraphRAG / Document RAG answers behind the
real tool runner. Event order, the explained steps, failures that become observations, the iteration
bound, and the offline strategy."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tracegraph.base.errors import LlmUnavailable, RemoteError
from tracegraph.base.llm.completion import Completion
from tracegraph.base.provenance import query as graph_prov
from tracegraph.base.provenance.query import Usage, retrieval_triple
from tracegraph.base.provenance.vocab import PROV, RDF, RDFS, TG
from tracegraph.flow.agent.react import Finished, ReactAgent, Say
from tracegraph.flow.agent.tool_config import tools_from_config
from tracegraph.flow.agent.tools import Relayed, ToolRunner
from tracegraph.flow.graph_rag.pipeline import OFFLINE_NOTE, Explain
from tracegraph.launch.registry import packaged_tools
from tracegraph.schemas.rdf import iri
from tracegraph.schemas.retrieval import DocumentRagResponse, GraphRagRequest, GraphRagResponse, Source

QUESTION = "What does Helios Grid depend on?"
GRAPH_ANSWER = "Helios Grid depends on Corvid Analytics."
TOOLS = tools_from_config({"tool": packaged_tools()})


def ask(tool: str, **arguments: str) -> str:
    return f"Thought: I will use {tool}.\nAction: {tool}\nAction Input: {json.dumps(arguments)}"


def retrieval(answer: str, found: bool = True, kind: type = GraphRagResponse, sid: str = "sub") -> Callable:
    """A scripted GraphRAG (or Document RAG) session: Question and Focus explain events, the answer, the end."""
    def answer_request(request: GraphRagRequest) -> list:
        question, focus = graph_prov.question_uri(sid), graph_prov.step_uri("focus", sid)
        selected = [retrieval_triple(focus, TG.selectedEdge, iri(graph_prov.edge_selection_uri(sid, 0)))] if found else []
        return [kind(message_type="explain", explain_id=question, explain_graph="urn:graph:retrieval",
                     explain_triples=graph_prov.question_triples(question, request.query, "now", request.parent_uri)),
                kind(message_type="explain", explain_id=focus, explain_graph="urn:graph:retrieval",
                     explain_triples=[retrieval_triple(focus, RDF.type, TG.Focus), *selected]),
                kind(response=answer),
                kind(end_of_session=True, in_token=7, out_token=3, model="rag-llm",
                     sources=[Source(uri="urn:doc:1", title="helios-grid")] if found else None)]
    return answer_request


def failing(error: Exception) -> Callable:
    def answer_request(request: GraphRagRequest) -> list:
        return [retrieval("")(request)[0], error]
    return answer_request


class FakeServices:
    """The loop's and the tools' services: LLM replies from a script (None = no LLM configured),
    GraphRAG and Document RAG from functions of the request, answers kept in a dict."""

    def __init__(self, replies: list[str | Exception] | None, *, graph: Callable = retrieval(GRAPH_ANSWER),
                 documents: Callable = retrieval("", found=False, kind=DocumentRagResponse), explain: bool = True):
        self.replies, self.graph, self.documents = replies, graph, documents
        self.prompts: list[str] = []
        self.requests: list = []
        self.saved: dict[str, tuple[str, str]] = {}
        self.runner = ToolRunner(self, "alice", "research", explain)

    async def complete(self, system: str, prompt: str) -> Completion:
        if self.replies is None:
            raise LlmUnavailable("no LLM endpoint configured")
        self.prompts.append(prompt)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return Completion(reply, "fake-llm", 100, 10)

    async def _answers(self, script: Callable, request):
        self.requests.append(request)
        for item in script(request):
            if isinstance(item, Exception):
                raise item
            yield item

    def graph_rag(self, request):
        return self._answers(self.graph, request)

    def document_rag(self, request):
        return self._answers(self.documents, request)

    def run_tool(self, tool, arguments, parent_uri):
        return self.runner.run(tool, arguments, parent_uri)

    async def save_answer(self, document_id: str, title: str, text: str) -> bool:
        self.saved[document_id] = (title, text)
        return True


async def run(services: FakeServices, **kwargs) -> list:
    return [e async for e in ReactAgent(services, kwargs.pop("tools", TOOLS), **kwargs).run(QUESTION, session_id="s1")]


def shape(event) -> str:
    if isinstance(event, Say):
        return event.kind
    if isinstance(event, Explain):
        return "explain " + (event.uri.removeprefix("urn:trustgraph:agent:s1").lstrip("/") or "question")
    if isinstance(event, Relayed):
        return "relayed " + event.uri.split(":")[-2]
    return "finished"


def explained(events: list, uri: str) -> Explain:
    return next(e for e in events if isinstance(e, Explain) and e.uri == uri and len(e.triples) > 1)


def values(event: Explain, predicate) -> list[str]:
    return [getattr(t.o, "value", None) or getattr(t.o, "iri", None)
            for t in event.triples if t.s.iri == event.uri and t.p == predicate]


def said(events: list, kind: str) -> list[str]:
    return [e.text for e in events if isinstance(e, Say) and e.kind == kind]


async def test_two_iterations_stream_each_step_and_explain_a_dag_down_to_the_graph_rag_trace():
    services = FakeServices([ask("knowledge-query", question=QUESTION), "Thought: The graph says so.\nFinal Answer: Corvid Analytics."])
    events = await run(services)
    assert [shape(e) for e in events] == [
        "explain question", "thought", "action", "relayed question", "relayed focus", "observation", "explain i1",
        "thought", "answer", "explain final", "finished"]
    q, i1, final = "urn:trustgraph:agent:s1", "urn:trustgraph:agent:s1/i1", "urn:trustgraph:agent:s1/final"

    question = explained(events, q)
    assert {TG.Question.iri, TG.AgentQuestion.iri, PROV.Activity.iri} <= set(values(question, RDF.type))
    assert values(question, TG.query) == [QUESTION] and values(question, RDFS.label) == ["Agent Question"]

    (request,) = services.requests
    assert (request.parent_uri, request.user, request.collection, request.streaming) == (i1, "alice", "research", True)
    analysis = explained(events, i1)
    assert {TG.Analysis.iri, TG.ToolUse.iri, PROV.Entity.iri} <= set(values(analysis, RDF.type))
    assert TG.Error.iri not in values(analysis, RDF.type)
    assert values(analysis, PROV.wasDerivedFrom) == [q]
    assert values(analysis, TG.thought) == ["I will use knowledge-query."]
    assert values(analysis, TG.action) == ["knowledge-query"] and values(analysis, RDFS.label) == ["Analysis: knowledge-query"]
    assert json.loads(values(analysis, TG.arguments)[0]) == {"question": QUESTION}
    assert values(analysis, TG.observation) == [GRAPH_ANSWER] == said(events, "observation")
    assert values(analysis, TG.subTrace) == ["urn:trustgraph:question:sub"]
    assert values(analysis, TG.stepNumber) == ["1"] and values(analysis, TG.inToken) == ["100"]
    assert values(analysis, TG.llmDurationMs) and values(analysis, TG.toolDurationMs)
    relayed_question = next(e for e in events if isinstance(e, Relayed))
    assert any(t.p == PROV.wasDerivedFrom and t.o == iri(i1) for t in relayed_question.triples)

    assert f"Observation: {GRAPH_ANSWER}" in services.prompts[1]
    conclusion = explained(events, final)
    assert {TG.Conclusion.iri, TG.Answer.iri} <= set(values(conclusion, RDF.type))
    assert values(conclusion, PROV.wasDerivedFrom) == [i1]
    assert values(conclusion, TG.answer) == ["Corvid Analytics."] == said(events, "answer")
    assert values(conclusion, TG.terminationReason) == ["final-answer"]
    assert values(conclusion, TG.document) == ["urn:trustgraph:agent:s1/answer"]
    assert services.saved["urn:trustgraph:agent:s1/answer"][1] == "Corvid Analytics."
    assert events[-1] == Finished("Corvid Analytics.", Usage(207, 23, "fake-llm"))
    assert [e.message_id for e in events if isinstance(e, Say)] == [
        f"{i1}/thought", f"{i1}/action", f"{i1}/observation", "urn:trustgraph:agent:s1/i2/thought", final]


async def test_the_bound_ends_the_loop_with_a_clear_conclusion():
    services = FakeServices([ask("calculator", expression="1+1")] * 3)
    events = await run(services, max_iterations=3)
    assert [shape(e) for e in events if isinstance(e, Explain)] == [
        "explain question", "explain i1", "explain i2", "explain i3", "explain final"]
    assert said(events, "observation") == ["2", "2", "2"]
    conclusion = explained(events, "urn:trustgraph:agent:s1/final")
    assert said(events, "answer") == ["Stopped after 3 iterations without a final answer."]
    assert values(conclusion, TG.terminationReason) == ["max-iterations"]
    assert values(conclusion, PROV.wasDerivedFrom) == ["urn:trustgraph:agent:s1/i3"]


@pytest.mark.parametrize("graph, observation", [
    (failing(RemoteError("graph-rag-error", "store down")), "Error: knowledge-query failed: graph-rag-error: store down"),
    (failing(RuntimeError("boom")), "Error: knowledge-query failed: boom"),
])
async def test_a_tool_that_raises_becomes_an_error_observation_and_the_loop_goes_on(graph, observation):
    services = FakeServices([ask("knowledge-query", question=QUESTION), "Thought: no luck\nFinal Answer: I could not find out."],
                            graph=graph)
    events = await run(services)
    assert said(events, "observation") == [observation]
    analysis = explained(events, "urn:trustgraph:agent:s1/i1")
    assert TG.Error.iri in values(analysis, RDF.type) and values(analysis, TG.toolError) == [observation.removeprefix("Error: ")]
    assert values(analysis, TG.subTrace) == ["urn:trustgraph:question:sub"]  # its Question was announced before it failed
    assert said(events, "answer") == ["I could not find out."]
    assert f"Observation: {observation}" in services.prompts[1]


async def test_an_unknown_tool_then_a_correct_one():
    services = FakeServices([ask("web-search", query="Helios"), ask("calculator", expression="6*7"),
                             "Thought: done\nFinal Answer: 42"])
    events = await run(services)
    first, second = explained(events, "urn:trustgraph:agent:s1/i1"), explained(events, "urn:trustgraph:agent:s1/i2")
    assert said(events, "observation")[0].startswith("Error: unknown tool 'web-search'; the tools are: calculator, ")
    assert TG.Error.iri in values(first, RDF.type) and values(first, TG.action) == ["web-search"]
    assert said(events, "observation")[1] == "42" and TG.Error.iri not in values(second, RDF.type)
    assert values(second, PROV.wasDerivedFrom) == ["urn:trustgraph:agent:s1/i1"] and not values(second, TG.subTrace)


async def test_an_unreadable_reply_is_observed_as_an_error_without_an_action():
    services = FakeServices(["I think it is Corvid.", "Thought: ok\nFinal Answer: Corvid."])
    events = await run(services)
    assert [shape(e) for e in events][:4] == ["explain question", "thought", "observation", "explain i1"]
    analysis = explained(events, "urn:trustgraph:agent:s1/i1")
    assert values(analysis, TG.thought) == ["I think it is Corvid."] and not values(analysis, TG.action)
    assert TG.ToolUse.iri not in values(analysis, RDF.type) and TG.Error.iri in values(analysis, RDF.type)
    assert "neither 'Action:' nor 'Final Answer:'" in said(events, "observation")[0]


async def test_a_failing_llm_fails_the_request_after_closing_the_question():
    services = FakeServices([RemoteError("llm-error", "endpoint down")])
    with pytest.raises(RemoteError):
        events = []
        async for event in ReactAgent(services, TOOLS).run(QUESTION, session_id="s1"):
            events.append(event)
    closing = events[-1]
    assert closing.uri == "urn:trustgraph:agent:s1" and TG.Error.iri in values(closing, RDF.type)
    assert values(closing, RDFS.comment) == ["failed: llm-error: endpoint down"]


async def test_offline_the_knowledge_graph_answers():
    services = FakeServices(None, graph=retrieval("Offline answer (no LLM configured), quoting: Helios depends on Corvid."))
    events = await run(services)
    assert [shape(e) for e in events] == [
        "explain question", "thought", "action", "relayed question", "relayed focus", "observation", "explain i1",
        "answer", "explain final", "finished"]
    assert said(events, "thought")[0].startswith(f"{OFFLINE_NOTE}: there is no model to plan with, so asking the "
                                                 "knowledge graph (tool knowledge-query)")
    assert said(events, "answer") == ["Offline answer (no LLM configured), quoting: Helios depends on Corvid."]
    analysis = explained(events, "urn:trustgraph:agent:s1/i1")
    assert values(analysis, RDFS.comment) == [OFFLINE_NOTE] and not values(analysis, TG.llmDurationMs)
    conclusion = explained(events, "urn:trustgraph:agent:s1/final")
    assert values(conclusion, RDFS.comment) == [OFFLINE_NOTE]


async def test_offline_the_documents_are_asked_when_the_graph_has_nothing():
    services = FakeServices(None, graph=retrieval("nothing", found=False),
                            documents=retrieval("The report says Corvid.", kind=DocumentRagResponse, sid="doc"))
    events = await run(services)
    assert [type(r).__name__ for r in services.requests] == ["GraphRagRequest", "DocumentRagRequest"]
    assert "the knowledge graph had nothing on it, so asking the documents" in said(events, "thought")[1]
    assert said(events, "answer") == ["The report says Corvid."]
    assert values(explained(events, "urn:trustgraph:agent:s1/final"), PROV.wasDerivedFrom) == ["urn:trustgraph:agent:s1/i2"]


async def test_offline_nothing_found_is_said_plainly():
    services = FakeServices(None, graph=retrieval("nothing", found=False), documents=failing(RemoteError("x", "down")))
    events = await run(services)
    assert said(events, "answer") == ["Offline answer (no LLM configured): nothing related to the question was found "
                                      "in the knowledge graph or the documents."]
    assert values(explained(events, "urn:trustgraph:agent:s1/final"), TG.terminationReason) == ["nothing-found"]
    tools = {name: tool for name, tool in TOOLS.items() if tool.type == "calculator"}
    events = await run(FakeServices(None), tools=tools)
    assert "no knowledge-query or document-query tool is configured" in said(events, "answer")[0]


async def test_explain_off_reaches_the_tools():
    services = FakeServices([ask("knowledge-query", question=QUESTION), "Thought: t\nFinal Answer: Corvid."], explain=False)
    await run(services)
    assert services.requests[0].explain is False
