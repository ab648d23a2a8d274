"""Staleness: evidence weighs 0.5 + 0.5·2^(−age/half-life), halved for a value since superseded, its
score multiplied before ranking, the weight recorded per item and the half-life on the Question; a
collection without history pays no query for it, one with history one query per answer."""

from __future__ import annotations

import doctest

import pytest

from tracegraph.base.provenance.vocab import TG
from tracegraph.base.retrieval import staleness, timeline as timeline_module
from tracegraph.base.retrieval.rerank import EmbeddingReranker
from tracegraph.base.retrieval.staleness import age_days, staleness_weight
from tracegraph.base.retrieval.timeline import EdgeWeight, Timeline
from tracegraph.flow.document_rag.pipeline import DocumentRagPipeline
from tracegraph.flow.document_rag.pipeline import Limits as DocumentRagLimits
from tracegraph.flow.graph_rag.focus import Edge, Scored, weighed
from tracegraph.flow.graph_rag.pipeline import Explain, GraphRagPipeline, Limits
from tracegraph.flow.search.pipeline import SearchPipeline
from tracegraph.flow.search.strategies import Limits as SearchLimits
from tracegraph.schemas.rdf import TripleTerm, fact_key

from support.dated_graph import ALPHA, BETA, LEDGER, NEW_CHUNK, OLD_CHUNK, dated_tools

QUESTION = "Who owns the Payments API?"
TODAY = "2026-03-01T00:00:00Z"


@pytest.mark.parametrize("module", [staleness, timeline_module])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def test_the_weight_falls_with_age_to_a_half_and_halves_again_when_superseded():
    assert staleness_weight("2026-03-01T01:00:00Z", "2026-03-01T23:00:00Z", 365) == 1.0
    assert staleness_weight("2025-03-01T00:00:00Z", TODAY, 365) == 0.75
    assert staleness_weight("1815-12-10T00:00:00Z", TODAY, 365) == pytest.approx(0.5)
    assert staleness_weight("2025-03-01T00:00:00Z", TODAY, 30) < staleness_weight("2025-03-01T00:00:00Z", TODAY, 365)
    assert staleness_weight("2025-03-01T00:00:00Z", TODAY, 365, superseded=True) == 0.375


def test_evidence_recorded_on_one_day_weighs_the_same_whatever_the_hour():
    assert age_days("2026-01-10T00:00:01Z", TODAY) == age_days("2026-01-10T23:59:59Z", TODAY)
    assert staleness_weight("2026-01-10T00:00:01Z", TODAY, 365) == staleness_weight("2026-01-10T23:59:59Z", TODAY, 365)


def scored(name: str, score: float) -> Scored:
    fact = {"alpha": ALPHA, "beta": BETA, "ledger": LEDGER}[name]
    return Scored(Edge(fact, (name, "p", "o"), 0), score, score, None)


def test_weighing_reorders_equal_scores_and_keeps_an_equally_weighed_order():
    older, newer = scored("ledger", 0.8), scored("beta", 0.8)
    weights = {fact_key(LEDGER): EdgeWeight(0.6), fact_key(BETA): EdgeWeight(0.9)}
    assert [s.edge.triple for s in weighed([older, newer], weights)] == [BETA, LEDGER]
    same = {fact_key(LEDGER): EdgeWeight(1.0), fact_key(BETA): EdgeWeight(1.0)}
    assert [s.edge.triple for s in weighed([older, newer], same)] == [LEDGER, BETA]
    assert weighed([older, newer], {}) == [older, newer]


async def test_newer_evidence_weighs_more_and_a_superseded_value_half_again(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder) as tools:
        timeline = Timeline(tools, today=TODAY)
        await timeline.prepare()
        weights = await timeline.edge_weights([ALPHA, BETA, LEDGER])
    beta, ledger, alpha = (weights[fact_key(f)] for f in (BETA, LEDGER, ALPHA))
    assert beta.weight > ledger.weight > alpha.weight
    assert alpha.weight == pytest.approx(ledger.weight / 2, abs=1e-4)  # stated the same day, since superseded
    assert beta.superseded and not ledger.superseded


def selections(focus: Explain) -> dict:
    """edge -> its EdgeSelection's staleness weight."""
    node_of = {t.o.triple: t.s.iri for t in focus.triples if t.p == TG.edge and isinstance(t.o, TripleTerm)}
    weight = {t.s.iri: float(t.o.value) for t in focus.triples if t.p == TG.stalenessWeight}
    return {edge: weight.get(node) for edge, node in node_of.items()}


async def test_graph_rag_records_each_weight_and_the_half_life(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder) as tools:
        steps = [s async for s in GraphRagPipeline(tools, Limits(), half_life_days=90).run(QUESTION)]
    explains = {s.uri.split(":")[-2]: s for s in steps if isinstance(s, Explain)}
    question = explains["question"]
    assert [t.o.value for t in question.triples if t.p == TG.halfLifeDays] == ["90"]
    weights = selections(explains["focus"])
    assert None not in weights.values()
    assert weights[BETA] > weights[LEDGER]


async def test_document_rag_ranks_the_newer_passage_first_and_records_the_weights(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder, with_passages=True) as tools:
        steps = [s async for s in DocumentRagPipeline(tools, DocumentRagLimits()).run(QUESTION)]
    exploration = next(s for s in steps if isinstance(s, Explain) and s.uri.endswith("/exploration"))
    chunk_of = {t.s.iri: t.o.iri for t in exploration.triples if t.p == TG.chunk}
    rank = {chunk_of[t.s.iri]: int(t.o.value) for t in exploration.triples if t.p == TG.rank}
    weight = {chunk_of[t.s.iri]: float(t.o.value) for t in exploration.triples if t.p == TG.stalenessWeight}
    assert rank == {NEW_CHUNK: 1, OLD_CHUNK: 2}
    assert weight[NEW_CHUNK] > 0.5 >= weight[OLD_CHUNK]  # the old ADR stated an owner since superseded


@pytest.mark.parametrize("with_history, per_answer", [(False, 0), (True, 1)])
async def test_the_history_costs_at_most_one_query_per_answer(tmp_path, embedder, with_history, per_answer):
    async with dated_tools(tmp_path, embedder, with_history=with_history, with_passages=True) as tools:
        async def cost(answer) -> int:
            before = tools.history_queries
            [_ async for _ in answer.run(QUESTION)]
            return tools.history_queries - before
        first = await cost(GraphRagPipeline(tools, Limits()))  # also learns whether there is history
        assert first == 1 + per_answer
        assert await cost(GraphRagPipeline(tools, Limits())) == per_answer
        assert await cost(DocumentRagPipeline(tools, DocumentRagLimits())) == per_answer
        # The hybrid strategies (named: an ownership question would otherwise be answered from the ownership
        # records, which cost their own few history queries, whatever the graph's size).
        search = SearchPipeline(tools, SearchLimits(), reranker=EmbeddingReranker(tools.embed), scope=("d", "d"),
                                strategies=("graph", "ppr", "sparql", "bm25", "vector"))
        assert await cost(search) == per_answer
        records = SearchPipeline(tools, SearchLimits(), reranker=EmbeddingReranker(tools.embed), scope=("d", "d"))
        # The ownership records read the owner history (earlier owners, document dates): a fixed few queries.
        assert await cost(records) <= 3
