"""A trace stores the question once — its Question's tg:query — and refers to it everywhere else:
every answering service (GraphRAG, Document RAG, search, the agent) is asked a 50 kB question, and
the question's text must be in exactly one literal of its trace, while all the other literals of the
trace together stay the same size when the question doubles."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence

import pytest

from tracegraph.base.errors import LlmUnavailable
from tracegraph.base.llm.completion import Completion
from tracegraph.base.provenance.query import QUESTION_AS_CONCEPT
from tracegraph.base.provenance.shacl import validate_trace
from tracegraph.base.provenance.vocab import RDF, RDFS, TG
from tracegraph.base.retrieval.local import LocalRetrievalTools
from tracegraph.base.retrieval.names import MAX_NAMES
from tracegraph.base.retrieval.rerank import EmbeddingReranker
from tracegraph.base.retrieval.tools import RetrievedChunk
from tracegraph.flow.agent.prompting import MAX_OBSERVATION
from tracegraph.flow.agent.react import ReactAgent
from tracegraph.flow.agent.tool_config import tools_from_config
from tracegraph.flow.agent.tools import Relayed, ToolRunner
from tracegraph.flow.document_rag.pipeline import DocumentRagPipeline
from tracegraph.flow.document_rag.pipeline import Limits as DocumentRagLimits
from tracegraph.flow.graph_rag.pipeline import RETRIEVAL_TEXT_CHARS, Chunk, Explain, GraphRagPipeline, Limits
from tracegraph.flow.search.pipeline import RememberedEmbeddings, SearchPipeline
from tracegraph.flow.search.strategies import Limits as SearchLimits
from tracegraph.launch.registry import packaged_tools
from tracegraph.schemas.fields import QUESTION_BYTES_ENV
from tracegraph.schemas.rdf import LiteralTerm, Triple
from tracegraph.schemas.retrieval import DocumentRagResponse, GraphRagResponse, Source

from support.graph_rag import REF, StoreTools, cosine, knowledge_store, search_stores

FILLER = ("and which regional operators, suppliers and forecasting services does it rely on for load forecasts "
          "in the winter months, as the annual report and the fact sheets describe them? ")
NAMED = " Compare “Corvid Analytics” with Tarn Holdings and Orbis Systems of the Sable Water Authority."


def long_question(size: int, named: bool = False) -> str:
    """`size` characters: a real question, then text that goes on and on; `named` mixes in names and
    quoted titles every few hundred characters (the question itself is lower case)."""
    piece = FILLER + (NAMED if named else "")
    text = "what does helios grid depend on? "
    return (text + piece * (size // len(piece) + 1))[:size].rstrip() + " end of question."


def trace_of(events: Sequence[object]) -> list[Triple]:
    return [t for e in events if isinstance(e, Explain | Relayed) for t in e.triples]


def literals(triples: Sequence[Triple]) -> list[str]:
    return [t.o.value for t in triples if isinstance(t.o, LiteralTerm)]


def holding(triples: Sequence[Triple], question: str) -> list[Triple]:
    """The statements whose literal holds the whole question."""
    return [t for t in triples if isinstance(t.o, LiteralTerm) and question in t.o.value]


def beside_the_question(triples: Sequence[Triple], question: str) -> int:
    """Characters of all the literals of a trace but the question's own."""
    return sum(len(v) for v in literals(triples)) - len(question)


def assert_stored_once(triples: Sequence[Triple], question: str) -> None:
    [query] = holding(triples, question)
    assert query.p == TG.query and query.o.value == question, "only the Question's tg:query holds the text"
    assert not any(question[:1000] in value for value in literals(triples) if value is not query.o.value), \
        "and no other literal quotes a long part of it"


class CountingEmbedder:
    """The bundled model, keeping every text it is asked to embed."""

    def __init__(self, embedder) -> None:
        self.embedder, self.name = embedder, embedder.name
        self.seen: list[str] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen += texts
        return await self.embedder.embed(list(texts))


# ---------------------------------------------------------------- GraphRAG and Document RAG

@pytest.fixture
async def store(tmp_path):
    async with knowledge_store(tmp_path) as opened:
        yield opened


async def graph_rag(tools, question: str) -> list:
    return [step async for step in GraphRagPipeline(tools, Limits(relevance_floor=0.0)).run(question)]


@pytest.mark.parametrize("named", [False, True], ids=["no-names", "names"])
async def test_graph_rag_stores_a_long_question_once_offline(store, embedder, named):
    question = long_question(50_000, named)
    counting = CountingEmbedder(embedder)
    steps = await graph_rag(StoreTools(store, counting), question)
    trace = trace_of(steps)
    assert_stored_once(trace, question)
    assert max(map(len, counting.seen)) <= RETRIEVAL_TEXT_CHARS, "what is embedded of it is bounded"
    grounding = next(s for s in steps if isinstance(s, Explain) and ":grounding:" in s.uri)
    assert QUESTION_AS_CONCEPT in literals(grounding.triples), "the Grounding refers to the question instead"
    focus = next(s for s in steps if isinstance(s, Explain) and ":focus:" in s.uri)
    reasons = [t.o.value for t in focus.triples if t.p == TG.reasoning]
    assert reasons, "edges were selected"
    if not named:  # the question and the one name it holds in lower case ("helios grid"), each by reference
        assert all("to the question," in r or "to 'Helios Grid'," in r for r in reasons), reasons
        assert {t.o.value for t in focus.triples if t.p == TG.concept} <= {"Helios Grid"}
    seeds = [t.o.value for t in trace if t.p == RDFS.comment and "named in the question" in t.o.value]
    assert len(seeds) <= MAX_NAMES and all(len(s) < 300 for s in seeds)
    report = await asyncio.to_thread(validate_trace, trace)
    assert report.conforms, str(report)
    # What the trace holds beside the question does not grow with it.
    doubled = long_question(100_000, named)
    assert beside_the_question(trace_of(await graph_rag(StoreTools(store, embedder), doubled)), doubled) \
        == pytest.approx(beside_the_question(trace, question), abs=200)


async def test_graph_rag_with_an_llm_that_finds_no_concept_stores_the_question_once(store, embedder):
    question = long_question(50_000)
    tools = StoreTools(store, embedder, ["", "not json", "An answer."])  # no concept, no valid edge
    trace = trace_of(await graph_rag(tools, question))
    assert_stored_once(trace, question)
    assert QUESTION_AS_CONCEPT in literals(trace)


class ChunkTools(StoreTools):
    """The test graph's tools plus three chunks, nearest first by cosine similarity."""

    TEXTS = [("urn:chunk:h1", "urn:trustgraph:doc:helios", "Helios Grid depends on Corvid Analytics for load "
                                                              "forecasting. The forecast sets what it buys."),
             ("urn:chunk:m1", "urn:trustgraph:doc:meridian", "The Meridian Dam supplies water to the Sable Water "
                                                                "Authority. Droughts affect both.")]

    async def nearest_chunks(self, vector: Sequence[float], limit: int) -> list[RetrievedChunk]:
        vectors = await self.embed([text for _, _, text in self.TEXTS])
        return sorted((RetrievedChunk(uri, cosine(vector, v), text, doc)
                       for (uri, doc, text), v in zip(self.TEXTS, vectors)), key=lambda c: -c.score)[:limit]


async def document_rag(tools, question: str) -> list:
    return [step async for step in DocumentRagPipeline(tools, DocumentRagLimits()).run(question)]


@pytest.mark.parametrize("named", [False, True], ids=["no-names", "names"])
async def test_document_rag_stores_a_long_question_once(store, embedder, named):
    question = long_question(50_000, named)
    counting = CountingEmbedder(embedder)
    trace = trace_of(await document_rag(ChunkTools(store, counting), question))
    assert_stored_once(trace, question)
    assert max(map(len, counting.seen)) <= RETRIEVAL_TEXT_CHARS
    concepts = [t.o.value for t in trace if t.p == TG.concept]
    assert len(concepts) <= MAX_NAMES and (named or not concepts)
    doubled = long_question(100_000, named)
    assert beside_the_question(trace_of(await document_rag(ChunkTools(store, embedder), doubled)), doubled) \
        == pytest.approx(beside_the_question(trace, question), abs=200)


async def test_a_grounding_with_the_question_alone_conforms_to_the_shapes(store, embedder):
    steps = await document_rag(ChunkTools(store, embedder), long_question(2_000))
    grounding = next(s for s in steps if isinstance(s, Explain) and s.uri.endswith("/grounding"))
    question = steps[0]
    assert not any(t.p == TG.concept for t in grounding.triples)
    assert (await asyncio.to_thread(validate_trace, [*question.triples, *grounding.triples])).conforms
    bare = [t for t in grounding.triples if not (t.p == RDFS.comment and t.o.value == QUESTION_AS_CONCEPT)]
    assert not (await asyncio.to_thread(validate_trace, [*question.triples, *bare])).conforms


# ---------------------------------------------------------------- search

@pytest.fixture
async def search_tools(tmp_path, embedder):
    async with search_stores(tmp_path, embedder) as (triples, vectors, keywords):
        counting = CountingEmbedder(embedder)
        yield lambda: RememberedEmbeddings(LocalRetrievalTools(REF, triples, vectors, keywords, counting)), counting


async def search(tools, question: str) -> list:
    pipeline = SearchPipeline(tools, SearchLimits(), reranker=EmbeddingReranker(tools.embed), hyde=True)
    return [step async for step in pipeline.run(question)]


@pytest.mark.parametrize("named", [False, True], ids=["no-names", "names"])
async def test_search_stores_a_long_question_once_and_embeds_it_once(search_tools, named):
    make_tools, counting = search_tools
    question = long_question(50_000, named)
    trace = trace_of(await search(make_tools(), question))
    assert_stored_once(trace, question)
    searched = question[:RETRIEVAL_TEXT_CHARS]
    assert counting.seen.count(searched) == 1, "the context and the reranker share one embedding of it"
    assert all(len(text) < 5_000 for text in counting.seen if text != searched), "HyDE embeds a bounded text"
    doubled = long_question(100_000, named)
    assert beside_the_question(trace_of(await search(make_tools(), doubled)), doubled) \
        == pytest.approx(beside_the_question(trace, question), abs=500)


# ---------------------------------------------------------------- the agent, asking the real pipelines

TOOLS = tools_from_config({"tool": packaged_tools()})


class PipelineServices:
    """The agent's services over the GraphRAG and Document RAG pipelines themselves (offline, on the
    test store); the agent's own LLM is a script (None: no LLM, the offline plan)."""

    def __init__(self, store, embedder, replies: list[str] | None = None) -> None:
        self.store, self.embedder, self.replies = store, embedder, replies
        self.prompts: list[str] = []
        self.runner = ToolRunner(self, "alice", "default", True)

    async def complete(self, system: str, prompt: str) -> Completion:
        if self.replies is None:
            raise LlmUnavailable("no LLM configured")
        self.prompts.append(prompt)
        return Completion(self.replies.pop(0), "scripted", 10, 5)

    def graph_rag(self, request) -> AsyncIterator[GraphRagResponse]:
        steps = GraphRagPipeline(StoreTools(self.store, self.embedder), Limits()).run(
            request.query, streaming=True, parent_uri=request.parent_uri)
        return _responses(steps, GraphRagResponse)

    def document_rag(self, request) -> AsyncIterator[DocumentRagResponse]:
        steps = DocumentRagPipeline(ChunkTools(self.store, self.embedder), DocumentRagLimits()).run(
            request.query, streaming=True, parent_uri=request.parent_uri)
        return _responses(steps, DocumentRagResponse)

    def run_tool(self, tool, arguments, parent_uri):
        return self.runner.run(tool, arguments, parent_uri)

    async def save_answer(self, document_id: str, title: str, text: str, document_type: str = "answer") -> bool:
        return True


async def _responses(steps, kind):
    """A pipeline's steps as its processor sends them (flow/answering.py), streaming."""
    async for step in steps:
        if isinstance(step, Explain):
            yield kind(message_type="explain", explain_id=step.uri, explain_graph="urn:graph:retrieval",
                       explain_triples=step.triples)
        elif isinstance(step, Chunk):
            yield kind(response=step.text, end_of_stream=step.end_of_stream)
        else:
            yield kind(message_type="chunk", end_of_session=True,
                       sources=[Source(uri=u, title=t) for u, t in step.sources] or None)


def sub_traces(events: list) -> dict[str, list[Triple]]:
    """The triples of each tool's own trace, by the session its URIs end with."""
    traces: dict[str, list[Triple]] = {}
    for event in events:
        if isinstance(event, Relayed):
            traces.setdefault(event.uri.rsplit(":", 1)[-1].split("/")[0], []).extend(event.triples)
    return traces


@pytest.fixture
def long_questions_allowed(monkeypatch):
    """The tools' requests refuse questions over TG_MAX_QUESTION_BYTES: allow these."""
    monkeypatch.setenv(QUESTION_BYTES_ENV, "1000000")


async def test_the_offline_agent_stores_a_long_question_once_and_each_tool_trace_its_own_once(
        store, embedder, long_questions_allowed):
    question = long_question(50_000)
    events = [e async for e in ReactAgent(PipelineServices(store, embedder), TOOLS).run(question, session_id="s1")]
    own = [t for e in events if isinstance(e, Explain) for t in e.triples]
    assert_stored_once(own, question)
    arguments = [json.loads(t.o.value) for t in own if t.p == TG.arguments]
    assert arguments and all(len(v) <= 200 for a in arguments for v in a.values()), "tool inputs are excerpts"
    traces = sub_traces(events)
    assert traces, "the offline plan asked the knowledge graph"
    for triples in traces.values():  # a tool's trace is asked the question as it was put: its own Question holds it
        assert_stored_once(triples, question)
        assert any(t.p == RDF.type and t.o == TG.Question for t in triples)
    assert len(holding(trace_of(events), question)) == 1 + len(traces)
    report = await asyncio.to_thread(validate_trace, trace_of(events))  # with the sub-traces its steps point at
    assert report.conforms, str(report)


async def test_an_llm_agent_passing_the_question_on_keeps_its_prompts_and_trace_bounded(
        store, embedder, long_questions_allowed):
    question = long_question(50_000)
    act = "Thought: ask the graph.\nAction: knowledge-query\nAction Input: " + json.dumps({"question": question})
    services = PipelineServices(store, embedder, [act, act, act, "Thought: done.\nFinal Answer: Corvid Analytics."])
    events = [e async for e in ReactAgent(services, TOOLS).run(question, session_id="s2")]
    own = [t for e in events if isinstance(e, Explain) for t in e.triples]
    assert_stored_once(own, question)
    # Each prompt holds the question once, and each earlier step's input cut like an observation.
    assert len(services.prompts) == 4
    assert all(p.count(question) == 1 for p in services.prompts)
    assert len(services.prompts[-1]) < len(question) + 3 * 2 * (MAX_OBSERVATION + 100) + 2_000
