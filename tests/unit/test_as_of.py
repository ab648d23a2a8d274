"""Answers as of a date, on real stores holding two dated records of a single-valued fact (the
Payments API owned by Team Alpha from 2023, by Team Beta from 2025): the walk sees the old owner as of
2024 and the new one today, keyword hits and passages of later documents are left out, the trace
says when the answer stands, and a bad `as-of` is refused naming the field."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from tracegraph.base.provenance.shacl import validate_trace
from tracegraph.base.provenance.vocab import RDF, RDFS, TG, XSD
from tracegraph.base.retrieval.as_of import passage_graph_as_of
from tracegraph.base.retrieval.passage_graph import build
from tracegraph.base.retrieval.rerank import EmbeddingReranker
from tracegraph.base.retrieval.timeline import NO_HISTORY, Timeline
from tracegraph.flow.document_rag.pipeline import DocumentRagPipeline
from tracegraph.flow.document_rag.pipeline import Limits as DocumentRagLimits
from tracegraph.flow.gateway.dispatch import validation_message
from tracegraph.flow.graph_rag.pipeline import Explain, Finished, GraphRagPipeline, Limits
from tracegraph.flow.search.pipeline import SearchPipeline
from tracegraph.flow.search.strategies import Limits as SearchLimits
from tracegraph.schemas.dates import now
from tracegraph.schemas.rdf import TripleTerm
from tracegraph.schemas.retrieval import DocumentRagRequest, GraphRagRequest
from tracegraph.schemas.search import SearchRequest

from support.dated_graph import (
    ALPHA, BETA, BETWEEN, LEDGER, NEW_CHUNK, OLD_CHUNK, OLD_DOC, OLD_RECORD, dated_tools,
)

QUESTION = "Who owns the Payments API?"


async def graph_rag(tools, **time) -> tuple[dict[str, Explain], Finished]:
    steps = [s async for s in GraphRagPipeline(tools, Limits(), **time).run(QUESTION)]
    return {s.uri.split(":")[-2]: s for s in steps if isinstance(s, Explain)}, steps[-1]


def selected_edges(focus: Explain) -> list:
    return [t.o.triple for t in focus.triples if t.p == TG.edge and isinstance(t.o, TripleTerm)]


def objects(event: Explain, subject: str, predicate) -> list:
    return [t.o for t in event.triples if t.s.iri == subject and t.p == predicate]


# ---------------------------------------------------------------- GraphRAG: the walk

async def test_as_of_a_date_between_the_two_the_walk_sees_the_old_owner(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder) as tools:
        explains, done = await graph_rag(tools, as_of=BETWEEN)
    edges = selected_edges(explains["focus"])
    assert ALPHA in edges and LEDGER in edges and BETA not in edges
    assert done.answer.startswith("As of 2024-06-01 (--as-of):\n")
    assert "Team Alpha" in done.answer and "Team Beta" not in done.answer
    question = explains["question"]
    [as_of] = objects(question, question.uri, TG.asOf)
    assert (as_of.value, as_of.datatype) == (BETWEEN, XSD.dateTime.iri)
    assert [h.value for h in objects(question, question.uri, TG.halfLifeDays)] == ["365"]


@pytest.mark.parametrize("as_of", [None, "today"])
async def test_today_the_walk_sees_the_new_owner_and_what_it_superseded(tmp_path, embedder, as_of):
    async with dated_tools(tmp_path, embedder) as tools:
        explains, done = await graph_rag(tools, as_of=now() if as_of else None)
    focus = explains["focus"]
    assert BETA in selected_edges(focus) and ALPHA not in selected_edges(focus)
    assert "Team Beta" in done.answer and "Team Alpha" not in done.answer
    assert done.answer.startswith("As of ") == bool(as_of)
    [beta] = [t.s.iri for t in focus.triples if t.p == TG.edge and t.o.triple == BETA]
    assert [o.iri for o in objects(focus, beta, TG.supersededValue)] == [OLD_RECORD]
    question = explains["question"]
    assert bool(objects(question, question.uri, TG.asOf)) == bool(as_of)
    report = await asyncio.to_thread(validate_trace, [t for e in explains.values() for t in e.triples])
    assert report.conforms, report.messages


async def test_as_of_a_date_before_any_record_finds_nothing(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder) as tools:
        explains, done = await graph_rag(tools, as_of="2000-01-01T00:00:00Z")
    assert selected_edges(explains["focus"]) == []
    assert done.answer.startswith("As of 2000-01-01 (--as-of):\nOffline answer")
    assert TG.NothingFound.iri in [o.iri for o in objects(explains["focus"], explains["focus"].uri, RDF.type)]


async def test_without_history_the_answer_says_it_could_not_go_back(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder, with_history=False) as tools:
        explains, done = await graph_rag(tools, as_of=BETWEEN)
    assert "Team Beta" in done.answer  # the current graph, and the trace says so
    exploration = explains["exploration"]
    assert NO_HISTORY in [c.value for c in objects(exploration, exploration.uri, RDFS.comment)]
    question = explains["question"]
    assert objects(question, question.uri, TG.halfLifeDays) == []  # nothing was weighed


# ---------------------------------------------------------------- search: keyword hits and the walk

async def test_search_as_of_keeps_the_facts_that_held_then(tmp_path, embedder):
    # The hybrid strategies, named (unnamed, the ownership records answer: test_as_of_in_words.py).
    async with dated_tools(tmp_path, embedder) as tools:
        pipeline = SearchPipeline(tools, SearchLimits(), reranker=EmbeddingReranker(tools.embed),
                                  scope=("default", "dated"), as_of=BETWEEN,
                                  strategies=["graph", "ppr", "sparql", "bm25", "vector"])
        steps = [s async for s in pipeline.run(QUESTION)]
    evidence = [e.triple for e in steps[-1].evidence]
    assert ALPHA in evidence and BETA not in evidence  # BM25 found Beta in the current index: left out
    assert steps[-1].answer.startswith("As of 2024-06-01 (--as-of):")


# ---------------------------------------------------------------- Document RAG: passages

async def test_document_rag_as_of_leaves_out_documents_dated_later(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder, with_passages=True) as tools:
        steps = [s async for s in DocumentRagPipeline(tools, DocumentRagLimits(), as_of=BETWEEN).run(QUESTION)]
    exploration = next(s for s in steps if isinstance(s, Explain) and s.uri.endswith("/exploration"))
    chunks = [o.iri for o in objects(exploration, exploration.uri, TG.selectedChunk)]
    assert chunks == [OLD_CHUNK]
    assert steps[-1].answer.startswith("As of 2024-06-01 (--as-of):\n") and "Team Beta" not in steps[-1].answer


async def test_graph_rag_as_of_reads_passages_and_their_facts_as_they_held(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder, with_passages=True) as tools:
        then, _ = await graph_rag(tools, as_of=BETWEEN)
        today, _ = await graph_rag(tools)
    assert ALPHA in selected_edges(then["focus"]) and BETA not in selected_edges(then["focus"])
    assert BETA in selected_edges(today["focus"])


def test_the_passage_graph_as_of_a_date_drops_later_passages_and_keeps_entities():
    graph = build([(OLD_CHUNK, ALPHA), (NEW_CHUNK, BETA)], [(OLD_CHUNK, OLD_DOC, "ADR"), (NEW_CHUNK, "d2", "ADR")])
    then = passage_graph_as_of(graph, [True, False])
    assert then.passages == [OLD_CHUNK] and then.entities == graph.entities
    assert then.graph.vcount() == graph.graph.vcount() - 1
    assert then.entity_index[ALPHA.o.iri] == 1 + graph.entities.index(ALPHA.o.iri)
    assert then.graph.are_adjacent(0, then.entity_index[ALPHA.o.iri])


async def test_holding_keeps_only_facts_with_a_record_holding_then(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder) as tools:
        timeline = Timeline(tools, as_of=BETWEEN)
        await timeline.prepare()
        assert await timeline.holding([ALPHA, BETA, LEDGER]) == [ALPHA, LEDGER]
        assert await timeline.existed(OLD_DOC) and not await timeline.existed("urn:trustgraph:doc:adr-2025")


# ---------------------------------------------------------------- the request

@pytest.mark.parametrize("schema", [GraphRagRequest, DocumentRagRequest, SearchRequest])
def test_a_bad_as_of_is_refused_naming_the_field(schema):
    with pytest.raises(ValidationError) as refused:
        schema.model_validate({"query": "q", "as-of": "last tuesday"})
    assert validation_message(refused.value).startswith("as-of: 'last tuesday' is not a date")
    with pytest.raises(ValidationError, match="half-life-days"):
        schema.model_validate({"query": "q", "half-life-days": 0})
    request = schema.model_validate({"query": "q", "as-of": "2024-12", "half-life-days": 30})
    assert (request.as_of, request.half_life_days) == ("2024-12-01T00:00:00Z", 30)
    assert request.model_dump(by_alias=True, exclude_none=True)["as-of"] == "2024-12-01T00:00:00Z"


def test_search_as_of_refuses_the_whole_answer_strategies():
    with pytest.raises(ValidationError, match="as-of: raptor answers from summaries"):
        SearchRequest.model_validate({"query": "q", "as-of": "2024-12-01", "strategies": ["raptor"]})
    with pytest.raises(ValidationError, match="as-of: global"):
        SearchRequest.model_validate({"query": "q", "as-of": "2024-12-01", "global": True})
