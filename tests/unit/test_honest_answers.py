"""Honest answers: a question about a name the collection does not know says so (search and GraphRAG),
a lower-cased question is answered as its capitalised twin, the confidence and its warning agree and the
warning says why, and evidence comes in the order of the score it shows."""

from __future__ import annotations

import asyncio

import pytest

from tracegraph.base.provenance.vocab import RDF, RDFS, TG
from tracegraph.base.retrieval.confidence import HELD, WARN_BELOW, ConfidenceBlock, Support, assess
from tracegraph.base.retrieval.local import LocalRetrievalTools
from tracegraph.base.retrieval.rerank import EmbeddingReranker
from tracegraph.cli.search import print_confidence
from tracegraph.flow.graph_rag.pipeline import Explain, Finished, GraphRagPipeline, Limits as GraphRagLimits
from tracegraph.flow.search.pipeline import SearchFinished, SearchPipeline
from tracegraph.flow.search.strategies import Limits

from support.graph_rag import REF, fact, search_stores


@pytest.fixture
async def tools(tmp_path, embedder):
    async with search_stores(tmp_path, embedder) as (triples, vectors, keywords):
        yield LocalRetrievalTools(REF, triples, vectors, keywords, embedder)


async def search(tools, question: str) -> tuple[dict[str, Explain], SearchFinished]:
    pipeline = SearchPipeline(tools, Limits(), reranker=EmbeddingReranker(tools.embed))
    steps = [step async for step in pipeline.run(question)]
    return {e.uri.split(":")[-2]: e for e in steps if isinstance(e, Explain)}, steps[-1]


def values(event: Explain, predicate) -> list[str]:
    return [getattr(t.o, "value", None) or getattr(t.o, "iri", None)
            for t in event.triples if t.s.iri == event.uri and t.p == predicate]


@pytest.mark.parametrize("question", ["Who owns Quasar?", "who owns quasar?", "What does Quasar depend on?"])
async def test_search_says_a_name_is_unknown_instead_of_answering_with_other_facts(tools, question):
    explains, done = await search(tools, question)
    assert list(explains) == ["question", "grounding", "exploration", "focus", "synthesis"]
    name = "quasar" if question.islower() else "Quasar"
    assert done.answer.startswith(f"No entity named {name} in this collection; nearest: ")
    assert len(done.answer.split("nearest: ")[1].split(", ")) == 3  # three of the collection's entities
    assert done.evidence == () and done.sources == []
    block = done.confidence
    assert block.confidence == 0 and block.low_confidence_warning
    assert f"the question names {name}, which this collection does not know" in block.warning_reasons
    assert TG.NothingFound in [t.o for t in explains["exploration"].triples if t.p == RDF.type]
    assert values(explains["synthesis"], TG.lowConfidenceReason)[0].startswith("the question names")


async def test_the_unknown_name_trace_conforms_to_the_shapes(tools):
    from tracegraph.base.provenance.shacl import validate_trace
    explains, _ = await search(tools, "Who owns Quasar?")
    report = await asyncio.to_thread(validate_trace, [t for e in explains.values() for t in e.triples])
    assert report.conforms, str(report)


async def test_graph_rag_says_a_name_is_unknown(tools):
    pipeline = GraphRagPipeline(tools, GraphRagLimits())
    steps = [step async for step in pipeline.run("Who owns Quasar?")]
    assert isinstance(steps[-1], Finished) and steps[-1].answer.startswith("No entity named Quasar in this collection")
    focus = next(s for s in steps if isinstance(s, Explain) and ":focus:" in s.uri)
    assert not [t for t in focus.triples if t.p == TG.selectedEdge]


async def test_a_lower_cased_question_is_grounded_and_answered_as_written_with_capitals(tools):
    cased_explains, cased = await search(tools, "What does Helios Grid depend on?")
    lower_explains, lower = await search(tools, "what does helios grid depend on?")
    assert values(lower_explains["grounding"], TG.concept) == values(cased_explains["grounding"], TG.concept) \
        == ["Helios Grid"]
    assert any("'helios grid' names Helios Grid" in c for c in values(lower_explains["grounding"], RDFS.comment))
    assert lower.query_type == cased.query_type == "dependency"
    assert lower.evidence[0].triple == cased.evidence[0].triple == fact("Helios Grid", "depends on", "Corvid Analytics")


async def test_evidence_comes_in_the_order_of_its_scores(tools):
    _, done = await search(tools, "What does Helios Grid depend on?")
    scores = [e.score for e in done.evidence]
    assert len(scores) > 1 and scores == sorted(scores, reverse=True)


def test_a_reason_to_warn_holds_the_confidence_low_and_is_given():
    one_source = ConfidenceBlock(0.75, ["e:a"], 1, ["ownership"], False)
    assert one_source.low_confidence_warning and one_source.confidence == HELD < WARN_BELOW
    assert one_source.warning_reasons == ("it rests on one source document",
                                          "confidence held below 0.30 (0.75 from the evidence alone)")
    weak = ConfidenceBlock(0.12, ["e:a"], 3, ["graph"], False)
    assert weak.low_confidence_warning and "supports it weakly" in weak.warning_reasons[0]
    sound = ConfidenceBlock(0.8, ["e:a"], 3, ["graph"], False)
    assert not sound.low_confidence_warning and sound.confidence == 0.8 and sound.warning_reasons == ()
    fell_back = assess([Support(0.9, 2, frozenset({"d1", "d2", "d3"}), ("e:a",))], ["sparql", "vector"], True,
                       focus=0.9, question="Who leads Acme?", sentences=["Ada leads Acme"])
    assert fell_back.low_confidence_warning and fell_back.confidence < WARN_BELOW
    assert fell_back.warning_reasons[0] == "a retrieval strategy failed and another stood in for it"


@pytest.mark.parametrize("confidence,density", [(0.9, 1), (0.9, 3), (0.5, 0), (0.1, 5), (0.31, 2)])
def test_confidence_and_warning_never_contradict(confidence, density):
    block = ConfidenceBlock(confidence, [], density, [], False)
    assert block.low_confidence_warning == (block.confidence < WARN_BELOW) == bool(block.warning_reasons)


def test_tg_search_prints_the_reason_and_the_evidence_by_score(capsys):
    evidence = [{"text": f"fact {n}", "score": score, "ranks": {"bm25": n}} for n, score in ((1, 0.4), (2, 0.9))]
    print_confidence({"query_type": "dependency", "evidence": evidence, "confidence": {
        "confidence": 0.29, "source_density": 1, "retrieval_strategies_used": ["bm25"],
        "low_confidence_warning": True, "warning_reasons": ["it rests on one source document"]}})
    out = capsys.readouterr().out
    assert "WARNING: low confidence: it rests on one source document." in out
    assert out.index("fact 2") < out.index("fact 1")  # the 0.90 fact first
