"""Global search's map step and choices, with a fake pipeline: the LLM's ratings keep their reasons,
unreadable ratings fall back to the offline score and say so, no LLM means offline scores
throughout; the reduce step keeps distinct communities; the router sends strategic questions to
global search only when the collection has reports."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tracegraph.base.errors import LlmUnavailable
from tracegraph.base.llm.completion import Completion
from tracegraph.base.provenance.global_search import ScoredReport
from tracegraph.base.retrieval import global_map as gm
from tracegraph.base.retrieval.router import route_by_rules
from tracegraph.flow.search.global_search import GlobalAnswer, distinct
from tracegraph.flow.search.pipeline import SearchPipeline


def report(n: int, vector, rating: float = 5.0) -> gm.StoredReport:
    return gm.StoredReport(f"urn:r:{n}", f"urn:c:{n}", 0, f"Report {n}", f"Summary {n}.", rating,
                           "offline: extractive", vector)


class ScriptedTools:
    def __init__(self, replies) -> None:
        self.replies, self.prompts = list(replies), []

    async def complete(self, system: str, prompt: str) -> Completion:
        self.prompts.append(prompt)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return Completion(reply, "scripted-llm", 100, 20)


def answer_with(tools) -> GlobalAnswer:
    pipeline = SimpleNamespace(llm=True, tools=tools)
    return GlobalAnswer(pipeline, shelf=None)


async def test_the_llm_rates_reports_and_an_unreadable_rating_falls_back_with_the_reason_said():
    # The prompt lists the reports best offline score first: [1] is report 2, [2] is report 1.
    tools = ScriptedTools(['Here you go: [{"id": 2, "score": 9, "reason": "lists the outage risks"}, '
                           '{"id": 1, "score": "high", "reason": "?"}]'])
    reports = [report(1, [0.0, 1.0]), report(2, [1.0, 0.0])]
    session = SimpleNamespace(usage=gm_usage())
    scored = await answer_with(tools)._map(session, "What are the top risks?", [1.0, 0.0], reports)
    by_report = {s.report: s for s in scored}
    assert by_report["urn:r:1"].score == 0.9
    assert by_report["urn:r:1"].reason == "LLM (scripted-llm) rated 9/10: lists the outage risks"
    assert by_report["urn:r:2"].reason.startswith("the LLM's rating was missing or unreadable; offline: similarity")
    assert by_report["urn:r:2"].score == pytest.approx(0.75)  # offline: similarity 1 × rating weight 0.75
    assert [s.report for s in scored] == ["urn:r:1", "urn:r:2"], "best first, after the LLM's ratings"
    assert "[1] Report 2" in tools.prompts[0] and "[2] Report 1" in tools.prompts[0]
    assert session.usage.in_token == 100


async def test_without_an_llm_every_score_is_offline_and_labelled():
    tools = ScriptedTools([LlmUnavailable("no endpoint configured")])
    answer = answer_with(tools)
    scored = await answer._map(SimpleNamespace(usage=gm_usage()), "q", [1.0, 0.0],
                               [report(1, [0.6, 0.8], rating=8.0), report(2, None)])
    assert answer.p.llm is False
    assert [s.reason.startswith("offline: ") for s in scored] == [True, True]
    assert scored[0].score == pytest.approx(0.6 * 0.9) and scored[1].score == 0.0


async def test_map_batches_run_in_parallel_prompts_of_bounded_size():
    reports = [report(n, [1.0, 0.0]) for n in range(1, 20)]
    tools = ScriptedTools(["[]"] * 3)
    answer = answer_with(tools)
    await answer._map(SimpleNamespace(usage=gm_usage()), "q", [1.0, 0.0], reports)
    assert len(tools.prompts) == 3, "19 reports in batches of 8"
    assert max(p.count("\n[") + p.startswith("[") for p in tools.prompts) <= 8


def test_the_reduce_step_keeps_distinct_communities_and_leaves_out_the_whole_collection():
    parents = {"urn:c:root": None, "urn:c:a": "urn:c:root", "urn:c:a1": "urn:c:a", "urn:c:b": "urn:c:root"}
    scored = [ScoredReport(f"urn:r:{c}", c, 0, c, score, "why")
              for c, score in (("urn:c:root", 0.9), ("urn:c:a", 0.8), ("urn:c:a1", 0.7), ("urn:c:b", 0.6))]
    kept = distinct(scored, parents, keep=5, floor=0.1)
    assert [k.community for k in kept] == ["urn:c:a", "urn:c:b"]
    assert [k.community for k in distinct(scored, parents, keep=5, floor=0.75)] == ["urn:c:a"]


def test_unreadable_ratings_are_left_out():
    assert gm.parse_ratings('{"id": 1, "score": 5}', 2, "m") == {}
    assert gm.parse_ratings('[{"id": true, "score": 5}, {"id": 2, "score": 11}, "x", {"id": 1}]', 2, "m") == {}
    assert gm.parse_ratings("[not json]", 2, "m") == {}


@pytest.mark.parametrize("strategies, global_search, has_reports, expected", [
    (None, None, True, "global"),
    (None, None, False, None),
    (None, False, True, None),
    (["raptor"], None, True, "raptor"),
    (["global"], None, False, "global"),
    (["bm25"], None, True, None),
])
async def test_the_router_sends_strategic_questions_to_global_search(strategies, global_search, has_reports,
                                                                     expected):
    class Shelf:
        async def reports(self, scope, tools):
            return [report(1, [1.0])] if has_reports else []

    route = route_by_rules("What are the top risks across the platform?")
    assert route.query_type == "strategic"
    pipeline = SearchPipeline(None, SimpleNamespace(), reranker=None, strategies=strategies,
                              global_search=global_search, shelf=Shelf())
    assert await pipeline._answered_by(route) == expected


def gm_usage():
    from tracegraph.base.provenance.query import Usage
    return Usage()
