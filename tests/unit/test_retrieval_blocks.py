"""The pure parts of hardened retrieval: fusion, routing, confidence and the rerank endpoint client."""

import pytest
from aiohttp import web

from tracegraph.base.errors import RemoteError, TransientError
from tracegraph.base.retrieval.confidence import Support, assess
from tracegraph.base.retrieval.fusion import reciprocal_rank_fusion
from tracegraph.base.retrieval.rerank import EndpointReranker
from tracegraph.base.retrieval.router import parse_route, route_by_rules
from support.local_http import served


def test_rrf_rewards_agreement_over_one_top_rank():
    fused = reciprocal_rank_fusion({"vector": ["a", "b", "c"], "bm25": ["c", "b"], "graph": ["b"]}, k=60)
    assert [f.key for f in fused] == ["b", "c", "a"]
    assert fused[0].ranks == {"vector": 2, "bm25": 2, "graph": 1}
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 62 + 1 / 61)


def test_rrf_k_changes_how_much_the_head_counts():
    rankings = {"x": ["a", "b"], "y": ["b", "z1", "z2", "z3", "a"]}
    assert reciprocal_rank_fusion(rankings, k=1)[0].key == "b"
    with pytest.raises(ValueError):
        reciprocal_rank_fusion(rankings, k=0)


@pytest.mark.parametrize("question, kind", [
    ("What does the Payment Gateway depend on?", "dependency"),
    ("Which services call Ledger Store?", "dependency"),
    ("Who owns the checkout service?", "ownership"),
    ("Who is the chief executive of Helios Grid?", "ownership"),
    ("How is the data platform structured?", "strategic"),
    ("What are our top 3 architectural risks?", "strategic"),
    ("Where is Helios Grid based?", "factual"),
    ("grid?", "vague"),
])
def test_rules_route_each_kind_of_question(question, kind):
    route = route_by_rules(question)
    assert route.query_type == kind
    assert route.method.startswith("rules:")
    assert 1 <= route.hops <= 3 and route.strategies


def test_dependency_questions_walk_the_graph_further_than_overviews():
    assert route_by_rules("What does X depend on?").hops == 3
    assert "graph" in route_by_rules("What does X depend on?").strategies
    assert "sparql" not in route_by_rules("grid?").strategies


def test_an_llm_reply_is_read_for_its_query_type():
    assert parse_route("Ownership.") == "ownership"
    assert parse_route("I think this is about dependency") == "dependency"
    assert parse_route("no idea") is None


def test_confidence_falls_with_a_fallback_and_warns_on_one_source():
    facts = [Support(0.9, 3, frozenset({"d1"}), ("e:a",)), Support(0.7, 1, frozenset({"d1"}), ("e:b",))]
    block = assess(facts, ["graph", "bm25", "graph"])
    assert block.source_density == 1 and block.low_confidence_warning
    assert block.retrieval_strategies_used == ["graph", "bm25"]
    assert block.evidence_nodes == ["e:a", "e:b"]
    assert assess(facts, ["graph"], fell_back=True).confidence == pytest.approx(block.confidence / 2, abs=0.01)


async def test_endpoint_reranker_reads_a_rerank_reply_in_the_callers_order():
    seen = {}

    async def rerank(request: web.Request) -> web.Response:
        seen.update(await request.json())
        return web.json_response({"results": [{"index": 1, "relevance_score": 0.9},
                                              {"index": 0, "relevance_score": 0.1}]})

    async def broken(request: web.Request) -> web.Response:
        return web.Response(status=503)

    app = web.Application()
    app.router.add_post("/rerank", rerank)
    app.router.add_post("/broken", broken)
    async with served(app) as url:
        reranker = EndpointReranker(f"{url}/rerank", "bge-reranker-v2-m3")
        assert await reranker.scores("q", ["a", "b"]) == [0.1, 0.9]
        assert seen["query"] == "q" and seen["documents"] == ["a", "b"] and seen["model"] == "bge-reranker-v2-m3"
        assert "cross-encoder bge-reranker-v2-m3" in reranker.name
        with pytest.raises(TransientError):
            await EndpointReranker(f"{url}/broken", "m").scores("q", ["a"])
        with pytest.raises((RemoteError, TransientError)):
            await EndpointReranker(f"{url}/missing", "m").scores("q", ["a"])
