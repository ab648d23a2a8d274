"""The ReAct loop without a bus: a scripted LLM and scripted GraphRAG / Document RAG answers behind the
real tool runner. Event order, the explained steps, failures that become observations, the iteration
bound, and the offline strategy."""

from __future__ import annotations

import doctest
import json
from collections.abc import Callable

import pytest

from tracegraph.base.errors import LlmUnavailable, RemoteError
from tracegraph.base.llm.completion import Completion
from tracegraph.base.provenance import query as graph_prov
from tracegraph.base.provenance.query import Usage, retrieval_triple
from tracegraph.base.provenance.vocab import PROV, RDF, RDFS, TG
from tracegraph.flow.agent import offline
from tracegraph.flow.agent.react import Finished, ReactAgent, Say
from tracegraph.flow.agent.tool_config import tools_from_config
from tracegraph.flow.agent.tools import Relayed, ToolRunner
from tracegraph.flow.graph_rag.pipeline import OFFLINE_NOTE, Explain
from tracegraph.launch.registry import packaged_tools
from tracegraph.schemas.rdf import iri, literal
from tracegraph.schemas.retrieval import DocumentRagResponse, GraphRagRequest, GraphRagResponse, Source
from tracegraph.schemas.search import Confidence, SearchResponse

QUESTION = "What does Helios Grid depend on?"
GRAPH_ANSWER = "Helios Grid depends on Corvid Analytics."
TOOLS = tools_from_config({"tool": packaged_tools()})


def ask(tool: str, **arguments: str) -> str:
    return f"Thought: I will use {tool}.\nAction: {tool}\nAction Input: {json.dumps(arguments)}"


def retrieval(answer: str, found: bool = True, kind: type = GraphRagResponse, sid: str = "sub",
              confidence: tuple[str, str] | None = None) -> Callable:
    """A scripted GraphRAG (or Document RAG) session: Question and Focus explain events, the answer, the end.
    `confidence` = (tg:confidence, tg:lowConfidenceWarning), written on the Focus as the search service does."""
    def answer_request(request: GraphRagRequest) -> list:
        question, focus = graph_prov.question_uri(sid), graph_prov.step_uri("focus", sid)
        selected = [retrieval_triple(focus, TG.selectedEdge, iri(graph_prov.edge_selection_uri(sid, 0)))] if found else []
        if confidence:
            selected += [retrieval_triple(focus, TG.confidence, literal(confidence[0])),
                         retrieval_triple(focus, TG.lowConfidenceWarning, literal(confidence[1]))]
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

    async def save_answer(self, document_id: str, title: str, text: str, document_type: str = "answer") -> bool:
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


RELATION_ANSWER = ("Offline answer (no LLM configured): Helios Grid depends on Corvid Analytics.\n"
                   "Supporting facts:\n- Helios Grid depends on Corvid Analytics (helios-grid, line 3)")


async def test_offline_the_knowledge_graph_answers():
    services = FakeServices(None, graph=retrieval(RELATION_ANSWER))
    events = await run(services)
    assert [type(r).__name__ for r in services.requests] == ["GraphRagRequest"]
    assert [shape(e) for e in events] == [
        "explain question", "thought", "action", "relayed question", "relayed focus", "observation", "explain i1",
        "answer", "explain final", "finished"]
    assert said(events, "thought")[0].startswith(f"{OFFLINE_NOTE}: there is no model to plan with, so asking the "
                                                 "knowledge graph (tool knowledge-query)")
    assert said(events, "answer") == [RELATION_ANSWER]
    analysis = explained(events, "urn:trustgraph:agent:s1/i1")
    assert values(analysis, RDFS.comment) == [OFFLINE_NOTE] and not values(analysis, TG.llmDurationMs)
    conclusion = explained(events, "urn:trustgraph:agent:s1/final")
    assert values(conclusion, RDFS.comment) == [OFFLINE_NOTE]


NO_FACTS = "Offline answer (no LLM configured): the knowledge graph holds no facts related to the question."
GRAPH_HEADER = ("Offline answer (no LLM configured): no fact or passage sentence states what the question asks; "
                "the facts nearest it:")
SPAN_HEADER = "Offline answer (no LLM configured), the sentence of the best passages that best answers the question:"
DOCS_ANSWER = f'{SPAN_HEADER}\n"Helios Grid depends on Corvid Analytics for load forecasting." (helios-grid)'
NOT_STATED = "it does not state what the question asks: 'depend on' for Helios Grid"
LOW = "the tool reported low confidence (confidence 0.21, with a low-confidence warning)"


@pytest.mark.parametrize("graph, weak", [
    # GraphRAG's own offline words, with and without an edge selected: the old loop stopped on the first.
    (retrieval(NO_FACTS), f"it has no evidence: it says “{NO_FACTS}”"),
    (retrieval(NO_FACTS, found=False), f"it has no evidence: it says “{NO_FACTS}”"),
    (retrieval("", found=False), "it has no evidence: the tool returned no text"),
    (retrieval(f"{GRAPH_HEADER}\n- Tarn Holdings is headquartered in Port Sable."), NOT_STATED),
    # It names Helios Grid and shares the question's words, but states nothing it depends on: the old check
    # (one content word in common) let the agent stop here.
    (retrieval(f'{SPAN_HEADER}\n"Helios Grid is a regional energy operator in Northern Vale." (helios-grid)'),
     NOT_STATED),
    (retrieval("Offline answer (no LLM configured): Meridian Dam depends on Sable Water.\nSupporting facts:"),
     NOT_STATED),
], ids=["says-no-facts", "no-evidence", "no-text", "unrelated-facts", "names-the-entity-only",
        "the-relation-of-another-entity"])
async def test_offline_a_weak_graph_answer_sends_the_agent_to_the_documents(graph, weak):
    services = FakeServices(None, graph=graph, documents=retrieval(DOCS_ANSWER, kind=DocumentRagResponse, sid="doc"))
    events = await run(services)
    assert [type(r).__name__ for r in services.requests] == ["GraphRagRequest", "DocumentRagRequest"]
    assert [shape(e) for e in events] == [
        "explain question", "thought", "action", "relayed question", "relayed focus", "observation", "explain i1",
        "thought", "action", "relayed question", "relayed focus", "observation", "explain i2",
        "answer", "explain final", "finished"]
    i1, i2 = "urn:trustgraph:agent:s1/i1", "urn:trustgraph:agent:s1/i2"
    thought = (f"{OFFLINE_NOTE}: the graph's answer was weak: {weak}; so asking the documents (tool document-query) "
               "the question as it was put.")
    assert said(events, "thought")[1] == thought
    assert said(events, "action")[1] == f'document-query {{"question": "{QUESTION}"}}'
    assert said(events, "answer") == [DOCS_ANSWER] and said(events, "observation")[1] == DOCS_ANSWER

    analysis = explained(events, i2)  # traced as the graph's step is: an offline Analysis, its sub-trace linked
    assert {TG.Analysis.iri, TG.ToolUse.iri} <= set(values(analysis, RDF.type)) and TG.Error.iri not in values(analysis, RDF.type)
    assert values(analysis, TG.thought) == [thought] and values(analysis, TG.action) == ["document-query"]
    assert json.loads(values(analysis, TG.arguments)[0]) == {"question": QUESTION}
    assert values(analysis, TG.observation) == [DOCS_ANSWER] and values(analysis, TG.stepNumber) == ["2"]
    assert values(analysis, TG.subTrace) == ["urn:trustgraph:question:doc"]
    assert values(analysis, RDFS.comment) == [OFFLINE_NOTE] and not values(analysis, TG.llmDurationMs)
    assert values(analysis, PROV.wasDerivedFrom) == [i1] and services.requests[1].parent_uri == i2
    conclusion = explained(events, "urn:trustgraph:agent:s1/final")
    assert values(conclusion, PROV.wasDerivedFrom) == [i2] and values(conclusion, TG.terminationReason) == ["final-answer"]
    assert values(conclusion, TG.answer) == [DOCS_ANSWER]
    assert set(values(conclusion, RDFS.comment)) == {OFFLINE_NOTE, f"the graph's answer was weak: {weak}"}


async def test_offline_a_low_confidence_graph_answer_is_quoted_beside_the_documents_labelled():
    graph = ("Offline answer (no LLM configured): Helios Grid depends on Corvid Analytics and Meridian Dam.\n"
             "Supporting facts:\n- Helios Grid depends on Corvid Analytics.\n- Helios Grid depends on Meridian Dam.")
    services = FakeServices(None, graph=retrieval(graph, confidence=("0.21", "true")),
                            documents=retrieval(DOCS_ANSWER, kind=DocumentRagResponse, sid="doc"))
    events = await run(services)
    assert f"the graph's answer was weak: {LOW}; so asking the documents" in said(events, "thought")[1]
    # The graph's first supporting fact is in the documents' sentence, so it is quoted once, not twice.
    assert said(events, "answer") == [
        "Offline answer (no LLM configured), quoting the documents and the knowledge graph:\n"
        "From the documents:\n"
        '"Helios Grid depends on Corvid Analytics for load forecasting." (helios-grid)\n'
        f"From the knowledge graph — weak: {LOW}:\n"
        "Helios Grid depends on Corvid Analytics and Meridian Dam.\n"
        "Supporting facts:\n"
        "- Helios Grid depends on Meridian Dam."]


async def test_a_confidence_block_on_the_final_message_is_read_as_low_confidence():
    def search_shaped(request: GraphRagRequest) -> list:
        block = Confidence(confidence=0.2, low_confidence_warning=True)
        return [SearchResponse(response=GRAPH_ANSWER), SearchResponse(end_of_session=True, confidence=block)]
    services = FakeServices(None, graph=search_shaped)
    *_, result = [item async for item in services.runner.run(TOOLS["knowledge-query"], {"question": QUESTION}, "urn:i1")]
    assert result.low_confidence == "confidence 0.20, with a low-confidence warning"
    trusted = [item async for item in FakeServices(None).runner.run(TOOLS["knowledge-query"], {"question": QUESTION}, "")]
    assert trusted[-1].low_confidence is None


async def test_offline_a_strong_graph_answer_ends_without_asking_the_documents_and_is_said_once():
    graph = (f"{GRAPH_HEADER}\n- Helios Grid depends on Corvid Analytics.\n- Helios Grid is a regional energy operator."
             "\n- Helios Grid is defined as Helios Grid is a regional energy operator that runs the network of Northern Vale."
             "\n- Helios Grid depends on Corvid Analytics.")
    services = FakeServices(None, graph=retrieval(graph), documents=retrieval(DOCS_ANSWER, kind=DocumentRagResponse))
    events = await run(services)
    assert [type(r).__name__ for r in services.requests] == ["GraphRagRequest"]
    assert len(said(events, "thought")) == 1 and said(events, "observation") == [graph]
    (answer,) = said(events, "answer")
    assert answer == (f"{GRAPH_HEADER}\n- Helios Grid depends on Corvid Analytics.\n- Helios Grid is defined as Helios "
                      "Grid is a regional energy operator that runs the network of Northern Vale.")
    assert values(explained(events, "urn:trustgraph:agent:s1/final"), RDFS.comment) == [OFFLINE_NOTE]


async def test_offline_when_both_answers_are_weak_the_closest_is_quoted_and_said_to_be_weak():
    unrelated = f"{GRAPH_HEADER}\n- Tarn Holdings is headquartered in Port Sable."
    documents = retrieval('Offline answer (no LLM configured), quoting the documents most related to the question:\n'
                          '- "Orbis Systems is owned by Tarn Holdings." (orbis-systems)', kind=DocumentRagResponse)
    words = NOT_STATED
    events = await run(FakeServices(None, graph=retrieval(unrelated), documents=documents))
    assert said(events, "answer") == [
        "Offline answer (no LLM configured): neither the knowledge graph nor the documents gave a strong answer, so "
        "this quotes the closest found:\n"
        f"From the documents — weak: {words}:\n"
        '- "Orbis Systems is owned by Tarn Holdings." (orbis-systems)']
    conclusion = explained(events, "urn:trustgraph:agent:s1/final")
    assert values(conclusion, TG.terminationReason) == ["final-answer"]
    assert set(values(conclusion, RDFS.comment)) == {OFFLINE_NOTE, f"the graph's answer was weak: {words}",
                                                     f"the documents' answer was weak: {words}"}

    # Only the documents are configured, and their answer is weak.
    only_documents = {name: tool for name, tool in TOOLS.items() if tool.type == "document-query"}
    events = await run(FakeServices(None, documents=documents), tools=only_documents)
    assert said(events, "answer")[0].startswith("Offline answer (no LLM configured): the documents gave no strong "
                                                "answer, so this quotes the closest found:\nFrom the documents — weak: ")

    # The documents fail: the graph's weak answer is all there is, and is quoted as such.
    events = await run(FakeServices(None, graph=retrieval(unrelated), documents=failing(RemoteError("x", "down"))))
    assert said(events, "thought")[1].startswith(f"{OFFLINE_NOTE}: the graph's answer was weak: {words}; so asking")
    assert said(events, "answer") == [
        "Offline answer (no LLM configured): neither the knowledge graph nor the documents gave a strong answer, so "
        f"this quotes the closest found:\nFrom the knowledge graph — weak: {words}:\n"
        "- Tarn Holdings is headquartered in Port Sable."]


async def test_with_an_llm_a_weak_graph_answer_is_left_to_the_model():
    services = FakeServices([ask("knowledge-query", question=QUESTION), "Thought: nothing there\nFinal Answer: Unknown."],
                            graph=retrieval(NO_FACTS, found=False))
    events = await run(services)
    assert [type(r).__name__ for r in services.requests] == ["GraphRagRequest"]
    assert said(events, "answer") == ["Unknown."]
    assert not values(explained(events, "urn:trustgraph:agent:s1/i1"), RDFS.comment)


def test_the_offline_strategy_doctests():
    result = doctest.testmod(offline)
    assert result.attempted > 0 and result.failed == 0


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
