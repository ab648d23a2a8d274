"""The passage graph kept current from graph-update events: on a real (on-disk oxigraph) store holding
what the chunker and the extractor write, an added or removed chunk is applied by reading only that
chunk's rows, the result equals a full build, and a question is answered from the graph in hand while
a refresh is still running."""

from __future__ import annotations

import asyncio

import pytest

from tracegraph.base.provenance.extraction import Component, chunk_triples, document_triples, subgraph_triples
from tracegraph.base.provenance.uris import chunk_uri, entity_uri, relation_uri, subgraph_uri
from tracegraph.base.retrieval import passage_graph
from tracegraph.base.retrieval.local import LocalRetrievalTools
from tracegraph.base.retrieval.passage_graph import PassageGraph
from tracegraph.base.retrieval.passage_upkeep import PassageGraphCache, touched_chunks
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import CollectionRef
from tracegraph.schemas.ingest import Metadata
from tracegraph.schemas.rdf import Triple, iri
from tracegraph.schemas.search import GraphUpdate

REF = CollectionRef("alice", "upkeep")
SCOPE = (REF.user, REF.collection)
TIME = "2026-11-01T10:00:00Z"
COMPONENT = Component("test", "1")


def fact(s: str, p: str, o: str) -> Triple:
    return Triple(s=iri(entity_uri(s)), p=iri(relation_uri(p)), o=iri(entity_uri(o)))


DOCUMENTS = {  # document -> (title, facts, mentions), one chunk each
    "urn:doc:journal": ("Journal of Psychotherapy Integration",
                        [fact("Journal of Psychotherapy Integration", "published by", "American Psychological Association"),
                         fact("Journal of Psychotherapy Integration", "covers", "United States")], ["Psychotherapy"]),
    "urn:doc:hall": ("G. Stanley Hall", [fact("G. Stanley Hall", "first president of", "American Psychological Association")],
                     []),
    "urn:doc:bboy": ("B Boy (song)", [fact("B Boy", "released by", "Ruffhouse Records"),
                                      fact("B Boy", "recorded in", "United States")], []),
}


def chunk_of(document: str) -> str:
    return chunk_uri(document, 1, 1000, 100)


def record(document: str) -> list[Triple]:
    """What the chunker writes for a one-chunk document: the document and its chunk."""
    title = DOCUMENTS[document][0]
    return [*document_triples(document, title=title, mime_type="text/plain", date=TIME),
            *chunk_triples(chunk_of(document), document, index=1, char_offset=0, char_length=10, chunk_size=1000,
                           chunk_overlap=100, component=COMPONENT, timestamp=TIME)]


def extraction(document: str) -> list[Triple]:
    """What the extractor writes for the chunk: its facts, and its subgraph containing and mentioning them."""
    _, facts, mentions = DOCUMENTS[document]
    chunk = chunk_of(document)
    return [*facts, *subgraph_triples(subgraph_uri(chunk, "offline"), chunk, facts, component=COMPONENT,
                                      timestamp=TIME, extractor="offline", mentions=[entity_uri(m) for m in mentions])]


class CountingTools(LocalRetrievalTools):
    """Local tools over the store that keep the SPARQL they were asked, and can hold every query at a gate."""

    def __init__(self, store: OxigraphTripleStore) -> None:
        super().__init__(REF, store, None)
        self.queries: list[str] = []
        self.gate: asyncio.Event | None = None

    async def sparql(self, query: str, *, limit: int, timeout: float):
        self.queries.append(query)
        if self.gate is not None:
            await self.gate.wait()
        return await super().sparql(query, limit=limit, timeout=timeout)


def update(*, item: str, passages: list[str] = (), everything: bool = False) -> GraphUpdate:
    return GraphUpdate(metadata=Metadata(id=item, root=item, user=REF.user, collection=REF.collection),
                       passages=list(passages), everything=everything)


def signature(graph: PassageGraph) -> tuple:
    """What a graph says, whatever order its vertices are in: passages with their document, title and
    facts; entities with their passage counts; every edge with its weight."""
    g = graph.graph
    names = [*graph.passages, *graph.entities]
    edges = frozenset((names[e.source], names[e.target], round(e["weight"], 9)) for e in g.es)
    passages = frozenset((p, graph.documents[i], graph.titles[i], frozenset(graph.facts[i]))
                         for i, p in enumerate(graph.passages))
    return passages, frozenset(graph.mentions.items()), edges


@pytest.fixture
async def store(tmp_path):
    store = OxigraphTripleStore(tmp_path / "triples")
    for document in ("urn:doc:journal", "urn:doc:hall"):
        await store.add(REF, [*record(document), *extraction(document)])
    yield store
    await store.aclose()


async def full_build(store) -> PassageGraph:
    return await passage_graph.load(LocalRetrievalTools(REF, store, None))


async def test_an_added_document_is_applied_from_its_own_chunk_and_equals_a_full_build(store):
    cache, tools = PassageGraphCache(settle=0), CountingTools(store)
    before = await cache.get(SCOPE, tools)
    assert len(before.passages) == 2
    tools.queries.clear()
    # as the triples writer announces them: the chunk's record (passages), then its extraction (metadata.id)
    await store.add(REF, record("urn:doc:bboy"))
    cache.updated(SCOPE, update(item="urn:doc:bboy", passages=[chunk_of("urn:doc:bboy")]))
    await cache.settled(SCOPE)
    await store.add(REF, extraction("urn:doc:bboy"))
    cache.updated(SCOPE, update(item=chunk_of("urn:doc:bboy")))
    await cache.settled(SCOPE)
    after = await cache.get(SCOPE, tools)
    assert signature(after) == signature(await full_build(store))
    assert chunk_of("urn:doc:bboy") in after.passage_index and entity_uri("Ruffhouse Records") in after.entity_index
    assert after.mentions[entity_uri("United States")] == 2  # the shared entity's weight follows the new passage
    assert tools.queries and all("VALUES ?chunk" in q for q in tools.queries), "no full scan after the first build"
    assert all(chunk_of("urn:doc:journal") not in q for q in tools.queries), "untouched chunks are not read again"


async def test_a_removed_document_leaves_the_graph_as_a_full_build_would(store):
    await store.add(REF, [*record("urn:doc:bboy"), *extraction("urn:doc:bboy")])
    cache, tools = PassageGraphCache(settle=0), CountingTools(store)
    assert len((await cache.get(SCOPE, tools)).passages) == 3
    await store.remove(REF, [*record("urn:doc:bboy"), *extraction("urn:doc:bboy")])
    cache.updated(SCOPE, update(item="urn:doc:bboy", passages=[chunk_of("urn:doc:bboy")]))
    await cache.settled(SCOPE)
    after = await cache.get(SCOPE, tools)
    assert chunk_of("urn:doc:bboy") not in after.passage_index
    assert entity_uri("Ruffhouse Records") not in after.entity_index, "an entity no passage links to is gone"
    assert signature(after) == signature(await full_build(store))


async def test_a_question_is_answered_from_the_graph_in_hand_while_a_refresh_runs(store):
    cache, tools = PassageGraphCache(settle=0), CountingTools(store)
    before = await cache.get(SCOPE, tools)
    tools.gate = asyncio.Event()  # the store is slow: every refresh query waits here
    await store.add(REF, [*record("urn:doc:bboy"), *extraction("urn:doc:bboy")])
    cache.updated(SCOPE, update(item=chunk_of("urn:doc:bboy"), passages=[chunk_of("urn:doc:bboy")]))
    await asyncio.sleep(0)  # the refresh has started and is held at the gate
    served = await asyncio.wait_for(cache.get(SCOPE, tools), timeout=30)  # a bound on a hang, not a timing
    assert served is before and cache.kept(SCOPE).task is not None and not cache.kept(SCOPE).task.done()
    tools.gate.set()
    await cache.settled(SCOPE)
    assert chunk_of("urn:doc:bboy") in (await cache.get(SCOPE, tools)).passage_index


async def test_an_old_graph_is_re_read_in_the_background(store):
    cache, tools = PassageGraphCache(max_age=0.0, settle=0), CountingTools(store)
    before = await cache.get(SCOPE, tools)
    tools.gate = asyncio.Event()
    await store.add(REF, [*record("urn:doc:bboy"), *extraction("urn:doc:bboy")])  # an update this copy missed
    assert await asyncio.wait_for(cache.get(SCOPE, tools), timeout=30) is before
    tools.gate.set()
    await cache.settled(SCOPE)
    assert any("VALUES" not in q for q in tools.queries[-3:]), "past max_age every chunk is read again"
    assert chunk_of("urn:doc:bboy") in cache.kept(SCOPE).graph.passage_index


async def test_everything_falls_back_to_a_full_read_and_an_unasked_collection_is_left_alone(store):
    cache, tools = PassageGraphCache(settle=0), CountingTools(store)
    cache.updated(SCOPE, update(item="x", everything=True))
    assert cache.kept(SCOPE) is None  # nothing kept, nothing to refresh: the first question builds it
    await cache.get(SCOPE, tools)
    tools.queries.clear()
    cache.updated(SCOPE, update(item="urn:doc:hall", everything=True))
    await cache.settled(SCOPE)
    assert len(tools.queries) == 3 and not any("VALUES" in q for q in tools.queries)


async def test_a_failed_refresh_keeps_the_graph_and_the_change(store):
    cache, tools = PassageGraphCache(settle=0), CountingTools(store)
    before = await cache.get(SCOPE, tools)

    async def failing(query, *, limit, timeout):
        raise RuntimeError("store away")
    tools.sparql = failing
    cache.updated(SCOPE, update(item=chunk_of("urn:doc:bboy")))
    await cache.settled(SCOPE)
    assert cache.kept(SCOPE).graph is before and chunk_of("urn:doc:bboy") in cache.kept(SCOPE).dirty
    del tools.sparql  # the store is back: the next question retries the change, and is not held up by it
    await store.add(REF, [*record("urn:doc:bboy"), *extraction("urn:doc:bboy")])
    assert await cache.get(SCOPE, tools) is before
    await cache.settled(SCOPE)
    assert chunk_of("urn:doc:bboy") in cache.kept(SCOPE).graph.passage_index


def test_an_update_touches_its_passages_and_the_chunk_it_was_written_for():
    assert touched_chunks(update(item="urn:chunk:c9", passages=["urn:chunk:c1"])) == {"urn:chunk:c1", "urn:chunk:c9"}
    assert touched_chunks(update(item="urn:doc:1", passages=["urn:chunk:c1"])) == {"urn:chunk:c1"}  # the chunker's
    facts_of_a_document = update(item="urn:doc:codeowners").model_copy(update={"added": [fact("a", "owns", "b")]})
    assert touched_chunks(facts_of_a_document) is None, "subgraphs derived from no chunk: read everything"
    assert touched_chunks(update(item="urn:doc:1", everything=True)) is None
    assert touched_chunks(update(item="urn:doc:1")) == set(), "labels only: the passage graph is unchanged"
    description = update(item="urn:doc:1").model_copy(update={"added": record("urn:doc:bboy")[:6]})
    assert touched_chunks(description) == set(), "the librarian's description of a document changes no passage"


def test_incremental_and_full_builds_agree_row_for_row():
    """The same rows give the same graph whether assembled at once or chunk by chunk."""
    rows = [(chunk_of(d), f) for d, (_, facts, _) in DOCUMENTS.items() for f in facts]
    records = [(chunk_of(d), d, title) for d, (title, _, _) in DOCUMENTS.items()]
    whole = passage_graph.build(rows, records)
    parts = {**passage_graph.passages_from(rows[:2], records[:1]), **passage_graph.passages_from(rows[2:], records[1:])}
    assert signature(passage_graph.assemble(parts)) == signature(whole)
