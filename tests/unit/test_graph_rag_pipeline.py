"""The GraphRAG pipeline without a bus: a real on-disk store, the bundled embedding model and a
scripted LLM. Each stage's explain triples are checked, offline and with the LLM."""

from __future__ import annotations

import json

import pytest

from tracegraph.base.errors import ConfigError, TransientError
from tracegraph.base.provenance.vocab import PROV, RDF, RDFS, TG
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.flow.graph_rag.focus import edge_id
from tracegraph.flow.graph_rag.pipeline import Explain, Finished, GraphRagPipeline, Limits
from tracegraph.schemas.rdf import TripleTerm

from tracegraph.base.provenance.extraction import chunk_triples, document_triples
from tracegraph.base.retrieval.tools import RetrievedChunk

from support.graph_rag import COMPONENT, DOC, REF, StoreTools, knowledge_store

QUESTION = "What does Helios Grid depend on?"


@pytest.fixture
async def store(tmp_path):
    async with knowledge_store(tmp_path) as opened:
        yield opened


async def run(tools, **kwargs):
    return [step async for step in GraphRagPipeline(tools, Limits(**kwargs)).run(QUESTION)]


def values(event: Explain, predicate) -> list[str]:
    return [getattr(t.o, "value", None) or getattr(t.o, "iri", None)
            for t in event.triples if t.s.iri == event.uri and t.p == predicate]


async def test_offline_session_explains_each_step_and_finds_the_source(store, embedder):
    steps = await run(StoreTools(store, embedder))
    explains = [s for s in steps if isinstance(s, Explain)]
    assert [e.uri.split(":")[-2] for e in explains] == ["question", "grounding", "exploration", "focus", "synthesis"]
    question, grounding, exploration, focus, synthesis = explains
    assert values(question, TG.query) == [QUESTION]
    assert {TG.Question.iri, TG.GraphRagQuestion.iri, PROV.Activity.iri} <= set(values(question, RDF.type))
    assert "Helios Grid" in values(grounding, TG.concept)
    assert "https://trustgraph.ai/e/helios-grid" in values(exploration, TG.entity)
    assert int(values(exploration, TG.edgeCount)[0]) >= 2
    assert values(exploration, PROV.wasDerivedFrom) == [grounding.uri]  # upstream's chain …
    assert values(exploration, PROV.wasGeneratedBy) == [question.uri]  # … and the spec's link to the session
    seeds = [t.o.iri for t in exploration.triples if t.p == TG.pprSeed]
    assert seeds, "the passage walk names where it restarted"
    assert any(t.p == TG.pprScore for t in focus.triples), "each selected edge carries its passage's PPR score"
    assert all(t.g == "urn:graph:retrieval" for e in explains for t in e.triples)
    edges = [t.o.triple for t in focus.triples if t.p == TG.edge and isinstance(t.o, TripleTerm)]
    assert any(e.p.iri.endswith("/depends-on") for e in edges)
    reasons = [t.o.value for t in focus.triples if t.p == TG.reasoning]
    assert reasons and all(r.startswith("offline selection: embedding similarity") for r in reasons)
    assert not any(t.p in (TG.inToken, TG.outToken, TG.llmModel) for e in explains for t in e.triples)
    assert values(synthesis, PROV.wasDerivedFrom) == [focus.uri]
    [finished] = [s for s in steps if isinstance(s, Finished)]
    # A question about a relation is answered by stating the relation's objects for the asked entity, then
    # the facts it rests on with their sources; the other selected facts stay in the Focus step.
    assert finished.answer == ("Offline answer (no LLM configured): Helios Grid depends on Corvid Analytics.\n"
                               "Supporting facts:\n"
                               "- Helios Grid depends on Corvid Analytics (Helios Grid annual report)")
    assert values(synthesis, RDFS.comment) == [
        "offline (no LLM configured): the question asks 'depend on' about Helios Grid (as its subject); "
        "stated 'depend on' for Helios Grid from 1 selected fact(s)"]
    assert finished.sources == [(DOC, "Helios Grid annual report")]


async def test_llm_focus_keeps_its_reasons_and_notes_unknown_ids_and_bad_lines(store, embedder):
    good = edge_id("Helios Grid", "depends on", "Corvid Analytics")
    focus_reply = "\n".join([json.dumps({"id": good, "reasoning": "Names what Helios Grid depends on."}),
                             json.dumps({"id": "ffffffff", "reasoning": "invented"}), "this is not json"])
    tools = StoreTools(store, embedder, ["Helios Grid\ndependency", focus_reply, "Corvid Analytics."])
    steps = await run(tools)
    focus = next(s for s in steps if isinstance(s, Explain) and ":focus:" in s.uri)
    assert [t.o.value for t in focus.triples if t.p == TG.reasoning] == ["Names what Helios Grid depends on."]
    notes = values(focus, RDFS.comment)
    assert any("not in the subgraph, dropped: ffffffff" in n for n in notes)
    assert any("1 line(s) that were not" in n for n in notes)
    grounding = next(s for s in steps if isinstance(s, Explain) and ":grounding:" in s.uri)
    assert values(grounding, TG.concept) == ["Helios Grid", "dependency"]
    for event in (grounding, focus):
        assert values(event, TG.inToken) == ["10"] and values(event, TG.llmModel) == ["scripted"]
    finished = steps[-1]
    assert finished.answer == "Corvid Analytics." and finished.usage.in_token == 30
    assert "Knowledge statements:\n- Helios Grid depends on Corvid Analytics" in tools.prompts[-1][1]


async def test_llm_failure_closes_the_question_with_an_error_note(store, embedder):
    tools = StoreTools(store, embedder, [TransientError("LLM endpoint unavailable")])
    pipeline = GraphRagPipeline(tools, Limits())
    seen = []
    with pytest.raises(TransientError):
        async for step in pipeline.run(QUESTION):
            seen.append(step)
    assert [s.uri.split(":")[-2] for s in seen] == ["question", "question"]
    assert TG.Error.iri in values(seen[-1], RDF.type)
    assert values(seen[-1], RDFS.comment) == ["failed: LLM endpoint unavailable"]


async def test_empty_question_is_refused_before_any_event(store, embedder):
    with pytest.raises(ConfigError, match="empty question"):
        async for _ in GraphRagPipeline(StoreTools(store, embedder), Limits()).run("   "):
            pass


async def test_limits_bound_the_exploration(store, embedder):
    wide = await run(StoreTools(store, embedder))
    narrow = await run(StoreTools(store, embedder), entity_limit=1, max_path_length=1, triple_limit=1, edge_limit=1)
    def count(steps):
        exploration = next(s for s in steps if isinstance(s, Explain) and ":exploration:" in s.uri)
        return int(values(exploration, TG.edgeCount)[0])
    assert count(narrow) < count(wide)
    focus = next(s for s in narrow if isinstance(s, Explain) and ":focus:" in s.uri)
    assert len(values(focus, TG.selectedEdge)) == 1


async def test_a_collection_without_a_graph_gets_an_honest_empty_answer(tmp_path, embedder):
    empty = OxigraphTripleStore(tmp_path / "empty")
    steps = await run(StoreTools(empty, embedder))
    await empty.aclose()
    assert steps[-1].answer == "No entity named Helios Grid in this collection."  # and nothing near it
    exploration = next(s for s in steps if isinstance(s, Explain) and ":exploration:" in s.uri)
    assert values(exploration, TG.edgeCount) == ["0"]


class NoSparqlTools(StoreTools):
    """A store that answers patterns but no SPARQL (as the Cassandra engine)."""

    async def sparql(self, query: str, *, limit: int, timeout: float):
        from tracegraph.base.errors import RemoteError
        raise RemoteError("bad-query", "this triple store engine does not run SPARQL")


async def test_without_sparql_graphrag_walks_from_entities_instead_of_failing(store, embedder):
    steps = await run(NoSparqlTools(store, embedder))
    exploration = next(s for s in steps if isinstance(s, Explain) and ":exploration:" in s.uri)
    assert not [t for t in exploration.triples if t.p == TG.pprSeed], "no passage graph, so no PageRank seeds"
    assert "https://trustgraph.ai/e/helios-grid" in values(exploration, TG.entity)
    [finished] = [s for s in steps if isinstance(s, Finished)]
    assert "Helios Grid depends on Corvid Analytics" in finished.answer


class CountingTools(StoreTools):
    """Records each neighbourhood request's nodes."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.around_calls: list[list[str]] = []

    async def around(self, nodes, limit):
        self.around_calls.append(list(nodes))
        return await super().around(nodes, limit)


async def test_the_walk_asks_for_a_hops_nodes_together_and_stops_at_the_subgraph_bound(tmp_path, embedder):
    from support.graph_rag import REF
    from tracegraph.schemas.rdf import Triple, iri

    def e(name: str):
        return iri(f"https://trustgraph.ai/e/{name}")

    links = iri("https://trustgraph.ai/r/links-to")
    facts = [Triple(s=e("hub"), p=links, o=e(f"n{i}")) for i in range(40)]
    facts += [Triple(s=e(f"n{i}"), p=links, o=e(f"m{i}-{j}")) for i in range(40) for j in range(10)]
    store = OxigraphTripleStore(tmp_path / "star")
    await store.add(REF, facts)
    tools = CountingTools(store, embedder)
    pipeline = GraphRagPipeline(tools, Limits(max_subgraph_size=60, triple_limit=30, max_path_length=2))
    from tracegraph.flow.graph_rag.pipeline import _Session
    edges = await pipeline._explore(_Session("s"), [e("hub").iri])
    await store.aclose()
    assert len(edges) == 60 and len({edge.triple for edge in edges}) == 60
    assert [edge.hops for edge in edges].count(0) == 30, "the hub's first 30 links, then its neighbours' links"
    assert tools.around_calls[0] == [e("hub").iri]
    assert len(tools.around_calls) == 2, "one request per hop while the room left is small"
    assert len(tools.around_calls[1]) < 10, "the second hop reads only as many nodes as the room needs"


TABLE_DOC, TABLE_CHUNK = "urn:trustgraph:doc:reservoirs", "urn:chunk:reservoirs-1"
TABLE_TEXT = ("Reservoir Capacity Opened\nMeridian Dam 4.2 GL 1974\nSable Weir 0.8 GL 1991\n\n"
              "The Meridian Dam holds 4.2 gigalitres of water.")


class TableTools(StoreTools):
    """The GraphRAG tools plus one passage, a table, from which extraction took no fact."""

    async def nearest_chunks(self, vector, limit):
        return [RetrievedChunk(TABLE_CHUNK, 0.9, TABLE_TEXT, TABLE_DOC)][:limit]

    async def chunks(self, uris):
        return [RetrievedChunk(TABLE_CHUNK, 0.0, TABLE_TEXT, TABLE_DOC)] if TABLE_CHUNK in uris else []


async def test_a_ranked_passage_with_no_fact_is_read_as_text_quoted_and_traced(store, embedder):
    await store.add(REF, [*document_triples(TABLE_DOC, title="Reservoirs", mime_type="text/plain",
                                            date="2026-01-01T00:00:00Z"),
                          *chunk_triples(TABLE_CHUNK, TABLE_DOC, index=1, char_offset=0, char_length=len(TABLE_TEXT),
                                         chunk_size=1000, chunk_overlap=100, component=COMPONENT,
                                         timestamp="2026-01-01T00:00:00Z")])
    steps = [s async for s in GraphRagPipeline(TableTools(store, embedder), Limits()).run(
        "How much water does the Meridian Dam hold?")]
    focus = next(s for s in steps if isinstance(s, Explain) and ":focus:" in s.uri)
    [selection] = [t.o.iri for t in focus.triples if t.s.iri == focus.uri and t.p == TG.chunkSelection]
    chosen = {t.p: getattr(t.o, "iri", None) or t.o.value for t in focus.triples if t.s.iri == selection}
    assert chosen[TG.chunk] == TABLE_CHUNK and "read as text" in chosen[TG.reasoning]
    finished = steps[-1]
    # The question asks no relation of a named entity, so the answer is the passage sentence that answers
    # it (it names a quantity, what "how much" asks for), quoted with its document and line.
    assert finished.answer.splitlines()[:2] == [
        "Offline answer (no LLM configured), the sentence of the best passages that best answers the question:",
        '"The Meridian Dam holds 4.2 gigalitres of water." (Reservoirs, line 5)']
    assert (TABLE_DOC, "Reservoirs") in finished.sources

    # With an LLM, the passage's text is in the synthesis prompt beside the facts.
    tools = TableTools(store, embedder, ["Meridian Dam", "", "4.2 gigalitres."])
    steps = [s async for s in GraphRagPipeline(tools, Limits()).run("How much water does the Meridian Dam hold?")]
    assert "Passages:\n- (Reservoirs) Reservoir Capacity Opened" in tools.prompts[-1][1]
    assert steps[-1].answer == "4.2 gigalitres."
