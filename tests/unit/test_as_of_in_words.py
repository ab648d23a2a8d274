"""Answers as of the date a question's words give, on real stores holding the Payments API's two owners
(Team Alpha from 2023, Team Beta from 2025) and a post-mortem of a Payments outage dated 2024-09-01:
GraphRAG, Document RAG and search stand at the phrase's date and say where it came from, an explicit
as-of wins over the words, the trace records the phrase and conforms; and the architecture service
answers ownership, dependencies and memory as of a date."""

from __future__ import annotations

import asyncio

import pytest

from tracegraph.base.architecture.memory_docs import MemoryRecord
from tracegraph.base.architecture.rules import CodeOwnersShelf
from tracegraph.base.architecture.triples import memory_facts
from tracegraph.base.provenance.shacl import validate_trace
from tracegraph.base.provenance.uris import memory_uri
from tracegraph.base.provenance.vocab import RDFS, TG
from tracegraph.base.retrieval.rerank import EmbeddingReranker
from tracegraph.base.retrieval.timeline import NO_HISTORY, UNDATED
from tracegraph.flow.document_rag.pipeline import DocumentRagPipeline
from tracegraph.flow.document_rag.pipeline import Limits as DocumentRagLimits
from tracegraph.flow.graph_rag.pipeline import Explain, GraphRagPipeline, Limits
from tracegraph.flow.search.architecture import architecture_answer
from tracegraph.flow.search.pipeline import SearchPipeline
from tracegraph.flow.search.strategies import Limits as SearchLimits
from tracegraph.schemas.architecture import ArchitectureRequest
from tracegraph.schemas.dates import now
from tracegraph.schemas.rdf import TripleTerm

from support.dated_graph import ALPHA, BETA, NEW_CHUNK, OLD_CHUNK, REF, dated_tools

IN_2024 = "Who owned the Payments API in 2024?"
FROM_WORDS = "As of 2024-12-31 (from 'in 2024' in the question):\n"
OUTAGE_DOC = "urn:trustgraph:doc:postmortem-payments-outage"
OUTAGE = MemoryRecord(kind="failure-pattern", title="Post-mortem: Payments outage", text="The Payments API was down.",
                      line=3, date="2024-09-01", relations={"affected": ("Payments API",)})
OUTAGE_NODE = memory_uri(OUTAGE_DOC, "failure-pattern", 3, OUTAGE.title)


async def with_outage(tools) -> None:
    await tools.triples.add(REF, [t for facts in memory_facts(OUTAGE_DOC, [OUTAGE]).values() for t in facts])


def events(steps) -> dict[str, Explain]:
    return {s.uri.split(":")[-2]: s for s in steps if isinstance(s, Explain)}


def selected(focus: Explain) -> list:
    return [t.o.triple for t in focus.triples if t.p == TG.edge and isinstance(t.o, TripleTerm)]


def values(event: Explain, predicate) -> list[str]:
    return [getattr(t.o, "value", None) or t.o.iri for t in event.triples if t.p == predicate]


async def test_graph_rag_stands_at_the_year_the_question_names(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder) as tools:
        steps = [s async for s in GraphRagPipeline(tools, Limits()).run(IN_2024)]
    explains, answer = events(steps), steps[-1].answer
    assert answer.startswith(FROM_WORDS) and "Team Alpha" in answer and "Team Beta" not in answer, answer
    assert ALPHA in selected(explains["focus"]) and BETA not in selected(explains["focus"])
    question = explains["question"]
    assert values(question, TG.asOf) == ["2024-12-31T23:59:59Z"]
    assert values(question, TG.phraseText) == ["in 2024"] and values(question, TG.resolvedBy) == ["year"]
    assert values(question, TG.appliedAsOf) == ["true"]
    report = await asyncio.to_thread(validate_trace, [t for e in explains.values() for t in e.triples])
    assert report.conforms, report.messages


async def test_an_explicit_as_of_wins_over_the_words_and_the_answer_says_which(tmp_path, embedder):
    asked = now()
    async with dated_tools(tmp_path, embedder) as tools:
        steps = [s async for s in GraphRagPipeline(tools, Limits(), as_of=asked).run(IN_2024)]
    question, answer = events(steps)["question"], steps[-1].answer
    assert answer.startswith(f"As of {asked[:10]} ") and "(--as-of):\n" in answer and "Team Beta" in answer, answer
    assert values(question, TG.appliedAsOf) == ["false"] and values(question, TG.asOf) == [asked]
    assert any("wins over the question's words" in c for c in values(question, RDFS.comment))


async def test_in_a_collection_without_dated_documents_the_words_are_only_words(tmp_path, embedder):
    # Encyclopedia passages carry no dates of their own: "in 2024" is something to look for there.
    async with dated_tools(tmp_path, embedder, with_history=False) as tools:
        steps = [s async for s in GraphRagPipeline(tools, Limits()).run(IN_2024)]
    question, answer = events(steps)["question"], steps[-1].answer
    assert not answer.startswith("As of") and values(question, TG.asOf) == []
    assert values(question, TG.appliedAsOf) == ["false"] and UNDATED in values(question, RDFS.comment)


async def test_three_days_before_a_named_incident(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder) as tools:
        await with_outage(tools)
        steps = [s async for s in GraphRagPipeline(tools, Limits()).run(
            "Who owned the Payments API three days before the payments outage?")]
    question, answer = events(steps)["question"], steps[-1].answer
    assert answer.startswith("As of 2024-08-29 (from 'three days before the payments outage' in the question):\n")
    assert "Team Alpha" in answer and "Team Beta" not in answer, answer
    assert values(question, TG.anchorRecord) == [OUTAGE_NODE]
    assert values(question, TG.resolvedBy) == [
        f"the date of incident 'Post-mortem: Payments outage' (document {OUTAGE_DOC})"]


async def test_document_rag_leaves_out_the_documents_dated_after_the_words(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder, with_passages=True) as tools:
        steps = [s async for s in DocumentRagPipeline(tools, DocumentRagLimits()).run(IN_2024)]
    exploration = next(s for s in steps if isinstance(s, Explain) and s.uri.endswith("/exploration"))
    chunks = values(exploration, TG.selectedChunk)
    assert OLD_CHUNK in chunks and NEW_CHUNK not in chunks
    assert steps[-1].answer.startswith(FROM_WORDS)
    question = next(s for s in steps if isinstance(s, Explain) and "/" not in s.uri)
    assert values(question, TG.phraseText) == ["in 2024"]


async def test_search_answers_who_owned_it_then_from_the_ownership_records(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder) as tools:
        pipeline = SearchPipeline(tools, SearchLimits(), reranker=EmbeddingReranker(tools.embed),
                                  scope=("default", "dated"))
        steps = [s async for s in pipeline.run(IN_2024)]
        today = [s async for s in SearchPipeline(tools, SearchLimits(), reranker=EmbeddingReranker(tools.embed),
                                                 scope=("default", "dated")).run("Who owns the Payments API?")]
    answer = steps[-1].answer
    assert answer.startswith(FROM_WORDS) and "Team Alpha" in answer and "Team Beta" not in answer, answer
    assert steps[-1].confidence.retrieval_strategies_used == ["ownership"]
    assert "Team Beta" in today[-1].answer and not today[-1].answer.startswith("As of")


def test_the_whole_answer_strategies_cannot_stand_at_the_words_date():
    for asked in ({"strategies": ["raptor"]}, {"global_search": True}):
        pipeline = SearchPipeline(None, SearchLimits(), reranker=None, **asked)
        assert "summaries of the current graph" in pipeline.cannot_stand_at_a_date()
    assert SearchPipeline(None, SearchLimits(), reranker=None).cannot_stand_at_a_date() == ""


# ---------------------------------------------------------------- the architecture service as of a date

def ask(operation: str, **fields) -> ArchitectureRequest:
    return ArchitectureRequest.model_validate({"operation": operation, "entity": "Payments API", **fields})


async def answer(tools, req: ArchitectureRequest):
    return await architecture_answer(req, tools, CodeOwnersShelf(), half_life_days=365)


async def test_ownership_as_of_a_date_names_the_owner_who_held_then(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder) as tools:
        then = await answer(tools, ask("ownership", **{"as-of": "2024-06-01"}))
        today = await answer(tools, ask("ownership"))
    assert then.as_of == "2024-06-01T00:00:00Z" and then.notes == []
    assert [o.label for o in then.ownership.owners] == ["Team Alpha"]
    assert today.as_of is None and "Team Beta" in [o.label for o in today.ownership.owners]


async def test_dependencies_and_memory_as_of_a_date(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder) as tools:
        await with_outage(tools)
        before = await answer(tools, ask("dependencies", **{"as-of": "2000-01-01"}))
        held = await answer(tools, ask("dependencies", **{"as-of": "2024-06-01"}))
        early = await answer(tools, ask("memory", **{"as-of": "2024-06-01"}))
        late = await answer(tools, ask("memory", **{"as-of": "2024-12-01"}))
    assert before.dependencies.edges == []
    assert [e.target_label for e in held.dependencies.edges] == ["Ledger Service"]
    assert early.memory.items == [] and [i.node for i in late.memory.items] == [OUTAGE_NODE]
    assert late.memory.items[0].recency > 0.8  # counted to the as-of date, three months after it


async def test_without_history_the_service_answers_now_and_says_so(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder, with_history=False) as tools:
        done = await answer(tools, ask("ownership", **{"as-of": "2024-06-01"}))
    assert done.as_of is None and done.notes == [NO_HISTORY]
    assert [o.label for o in done.ownership.owners] == ["Team Beta"]


def test_a_bad_as_of_is_refused_naming_the_field():
    with pytest.raises(ValueError, match="as-of: 'soon' is not a date"):
        ask("ownership", **{"as-of": "soon"})


class _Counted:
    """SPARQL tools whose collection holds `every` documents, `dated` of them with a date of their own."""

    def __init__(self, every: int, dated: int) -> None:
        self.every, self.dated = every, dated

    async def sparql(self, query: str, limit: int, timeout: float):
        from types import SimpleNamespace
        from tracegraph.schemas.rdf import literal
        return SimpleNamespace(bindings=[{"all": literal(str(self.every)), "dated": literal(str(self.dated))}])


@pytest.mark.parametrize(("every", "dated", "reads_dates"), [(1890, 1, False), (9, 5, True), (40, 4, True), (0, 0, False)])
async def test_dates_in_words_say_when_only_where_enough_documents_are_dated(every, dated, reads_dates):
    # One dated page among 1,890 encyclopedia passages (the MuSiQue sample) does not make "in 1930" a when.
    from tracegraph.base.retrieval.history import has_dated_documents
    assert await has_dated_documents(_Counted(every, dated)) is reads_dates
