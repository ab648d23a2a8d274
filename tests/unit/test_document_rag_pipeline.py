"""The Document RAG pipeline without a bus: chunks searched with the bundled embedding model, titles
from a real on-disk store, and a scripted LLM. Event order, the trace of each step, offline answers."""

from __future__ import annotations

import doctest
from collections.abc import Sequence

import pytest

from tracegraph.base.errors import ConfigError, TransientError
from tracegraph.base.provenance.extraction import document_triples
from tracegraph.base.provenance.query import QUESTION_AS_CONCEPT
from tracegraph.base.provenance.vocab import PROV, RDF, RDFS, TG
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.flow.document_rag import excerpts
from tracegraph.flow.document_rag.pipeline import NOTHING_FOUND, DocumentRagPipeline, Limits, select_chunks
from tracegraph.base.retrieval.tools import RetrievedChunk
from tracegraph.flow.graph_rag.pipeline import Chunk, Explain

from support.graph_rag import REF, StoreTools, cosine

QUESTION = "What does Helios Grid depend on for load forecasting?"
HELIOS, MERIDIAN = "urn:trustgraph:doc:helios", "urn:trustgraph:doc:meridian"
TITLES = {HELIOS: "Helios Grid annual report", MERIDIAN: "Meridian Dam fact sheet"}
TEXTS = [
    ("urn:chunk:h1", HELIOS, "# Helios Grid\n\nHelios Grid is a regional energy operator in Northern Vale.\n"
                             "Helios Grid depends on Corvid Analytics for load forecasting. The forecast sets\n"
                             "how much power it buys for the next day."),
    ("urn:chunk:h2", HELIOS, "ning office. Mara Lindqvist is the chief executive of Helios Grid. She joined in"),
    ("urn:chunk:m1", MERIDIAN, "The Meridian Dam supplies water to the Sable Water Authority. Droughts affect both."),
]


class ChunkTools(StoreTools):
    """The GraphRAG test tools plus a brute-force chunk search over TEXTS."""

    def __init__(self, store, embedder, replies=None, texts=TEXTS) -> None:
        super().__init__(store, embedder, replies)
        self.texts = texts
        self.limits: list[int] = []

    async def nearest_chunks(self, vector: Sequence[float], limit: int) -> list[RetrievedChunk]:
        self.limits.append(limit)
        vectors = await self.embed([text for _, _, text in self.texts])
        ranked = sorted((RetrievedChunk(uri, cosine(vector, v), text, doc)
                         for (uri, doc, text), v in zip(self.texts, vectors)), key=lambda c: -c.score)
        return ranked[:limit]


@pytest.fixture
async def store(tmp_path):
    store = OxigraphTripleStore(tmp_path)
    await store.add(REF, [t for doc, title in TITLES.items()
                          for t in document_triples(doc, title=title, mime_type="text/plain", date="2026-01-01")])
    yield store
    await store.aclose()


async def run(tools, limits: Limits = Limits(), **kwargs) -> list:
    return [step async for step in DocumentRagPipeline(tools, limits).run(QUESTION, **kwargs)]


def kinds(steps: list) -> list[str]:
    """Explain steps by their URI's last part, answer chunks as `text`/`end`, then `finished`."""
    def kind(step) -> str:
        if isinstance(step, Explain):
            return step.uri.rsplit("/", 1)[-1] if "/" in step.uri else "question"
        if isinstance(step, Chunk):
            return "end" if step.end_of_stream else "text"
        return "finished"
    return [kind(s) for s in steps]


def values(event: Explain, predicate) -> list[str]:
    return [getattr(t.o, "value", None) or getattr(t.o, "iri", None)
            for t in event.triples if t.s.iri == event.uri and t.p == predicate]


def test_sentence_splitting_doctest():
    result = doctest.testmod(excerpts)
    assert result.attempted > 0 and result.failed == 0


async def test_offline_answer_quotes_the_nearest_sentences_and_is_explained(store, embedder):
    tools = ChunkTools(store, embedder)
    steps = await run(tools)
    assert kinds(steps) == ["question", "grounding", "exploration", "synthesis", "finished"]
    question, grounding, exploration, synthesis, finished = steps
    assert question.uri.startswith("urn:trustgraph:docrag:")
    assert {TG.Question.iri, TG.DocRagQuestion.iri, PROV.Activity.iri} == set(values(question, RDF.type))
    assert values(question, RDFS.label) == ["DocumentRAG Question"] and values(question, TG.query) == [QUESTION]
    # The names it mentions are concepts; the question itself, searched whole, is referred to, not copied.
    assert values(grounding, PROV.wasDerivedFrom) == [question.uri] and values(grounding, TG.concept) == ["Helios Grid"]
    assert QUESTION_AS_CONCEPT in values(grounding, RDFS.comment)
    assert values(exploration, PROV.wasDerivedFrom) == [grounding.uri]
    assert values(exploration, PROV.wasGeneratedBy) == [question.uri]
    assert values(exploration, TG.chunkCount) == ["3"]
    assert values(exploration, TG.selectedChunk)[0] == "urn:chunk:h1"
    assert values(synthesis, PROV.wasDerivedFrom) == [exploration.uri]
    assert {TG.Synthesis.iri, TG.Answer.iri, PROV.Entity.iri} == set(values(synthesis, RDF.type))
    assert values(synthesis, RDFS.comment)[0].startswith("offline (no LLM configured)")
    assert not any(t.p in (TG.inToken, TG.outToken, TG.llmModel) for t in synthesis.triples)
    assert all(t.g == "urn:graph:retrieval" for s in steps[:4] for t in s.triples)

    answer = finished.answer
    # The sentence that answers, quoted with its source; then the best sentence of another passage that
    # speaks of the same things ("Droughts affect both." speaks of nothing the question or answer does).
    assert answer == (
        "Offline answer (no LLM configured), the sentence of the best passages that best answers the question:\n"
        '"Helios Grid depends on Corvid Analytics for load forecasting." (Helios Grid annual report)\n'
        "Also from the best passages:\n"
        '- "Mara Lindqvist is the chief executive of Helios Grid." (Helios Grid annual report)')
    assert values(synthesis, RDFS.comment) == [
        "offline (no LLM configured): quoted the passage sentence that best answers the question"]
    assert "ning office" not in answer and "She joined in" not in answer, "cut-off sentence pieces are not quoted"
    assert values(synthesis, TG.content) == [answer]
    [document] = values(synthesis, TG.document)
    assert document == question.uri + "/answer" and tools.saved == {document: answer}
    assert finished.sources == [(HELIOS, TITLES[HELIOS]), (MERIDIAN, TITLES[MERIDIAN])]
    assert finished.usage.in_token is None


async def test_streaming_with_an_llm_sends_pieces_between_exploration_and_synthesis(store, embedder):
    tools = ChunkTools(store, embedder, ["Corvid Analytics [1]."])
    steps = await run(tools, streaming=True)
    assert kinds(steps) == ["question", "grounding", "exploration", "text", "text", "text", "end", "synthesis",
                            "finished"]
    assert "".join(s.text for s in steps if isinstance(s, Chunk)) == "Corvid Analytics [1]. "
    system, prompt = tools.prompts[0]
    assert system == excerpts.SYSTEM
    assert prompt.startswith(f"Question: {QUESTION}\n\nDocument excerpts:\n\n[1] Helios Grid annual report:\n# Helios")
    assert "[3] Meridian Dam fact sheet:" in prompt
    synthesis, finished = steps[-2:]
    assert values(synthesis, RDFS.comment) == ["LLM (scripted)"]
    assert values(synthesis, TG.inToken) == ["20"] and values(synthesis, TG.outToken) == ["8"]
    assert (finished.usage.in_token, finished.usage.out_token, finished.usage.model) == (20, 8, "scripted")


async def test_non_streaming_answer_arrives_only_in_finished_and_an_agent_parent_is_kept(store, embedder):
    steps = await run(ChunkTools(store, embedder, ["Corvid Analytics."]), parent_uri="urn:trustgraph:agent:a/i1")
    assert kinds(steps) == ["question", "grounding", "exploration", "synthesis", "finished"]
    assert values(steps[0], PROV.wasDerivedFrom) == ["urn:trustgraph:agent:a/i1"]
    assert steps[-1].answer == "Corvid Analytics." and steps[-1].usage.in_token == 10


async def test_an_empty_store_gets_a_clear_answer_and_a_trace_with_no_chunks(store, embedder):
    tools = ChunkTools(store, embedder, ["never asked"], texts=[])
    steps = await run(tools, streaming=True)
    assert kinds(steps) == ["question", "grounding", "exploration", "end", "synthesis", "finished"]
    exploration, synthesis, finished = steps[2], steps[-2], steps[-1]
    assert values(exploration, TG.chunkCount) == ["0"] and values(exploration, TG.selectedChunk) == []
    assert finished.answer == NOTHING_FOUND and finished.sources == []
    assert values(synthesis, RDFS.comment) == ["no chunks retrieved: nothing to answer from, no LLM call"]
    assert tools.prompts == [], "no LLM call without anything to answer from"


async def test_llm_failure_closes_the_question_with_an_error_note(store, embedder):
    pipeline = DocumentRagPipeline(ChunkTools(store, embedder, [TransientError("LLM endpoint unavailable")]), Limits())
    seen = []
    with pytest.raises(TransientError):
        async for step in pipeline.run(QUESTION, streaming=True):
            seen.append(step)
    assert kinds(seen) == ["question", "grounding", "exploration", "question"]
    assert TG.Error.iri in values(seen[-1], RDF.type)
    assert values(seen[-1], RDFS.comment) == ["failed: LLM endpoint unavailable"]


async def test_explain_off_sends_no_events_and_stores_nothing(store, embedder):
    tools = ChunkTools(store, embedder, ["Corvid Analytics."])
    steps = await run(tools, streaming=True, explain=False)
    assert kinds(steps) == ["text", "text", "end", "finished"]
    assert tools.saved == {}
    failing = ChunkTools(store, embedder, [TransientError("down")])
    seen = []
    with pytest.raises(TransientError):
        async for step in DocumentRagPipeline(failing, Limits()).run(QUESTION, explain=False):
            seen.append(step)
    assert seen == []


async def test_limits_fetch_more_candidates_than_they_keep(store, embedder):
    tools = ChunkTools(store, embedder)
    steps = await run(tools, Limits(doc_limit=1))
    assert tools.limits == [3]
    assert values(steps[2], TG.selectedChunk) == ["urn:chunk:h1"] and values(steps[2], TG.chunkCount) == ["1"]
    assert "3 candidate chunk(s) found by dense and BM25 search, the 1 best kept" in values(steps[2], RDFS.comment)[0]
    await run(tools, Limits(doc_limit=2, fetch_limit=7))
    assert tools.limits[-1] == 7


def test_repeated_texts_are_kept_once():
    a = RetrievedChunk("urn:chunk:a", 0.9, "Same  text.", "urn:d1")
    b = RetrievedChunk("urn:chunk:b", 0.8, "Same text.", "urn:d2")
    c = RetrievedChunk("urn:chunk:c", 0.7, "Other text.", "urn:d1")
    assert select_chunks([a, c, b], 2) == [a, c]


async def test_empty_question_is_refused_before_any_event(store, embedder):
    with pytest.raises(ConfigError, match="empty question"):
        async for _ in DocumentRagPipeline(ChunkTools(store, embedder), Limits()).run("   "):
            pass
