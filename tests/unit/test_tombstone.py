"""Removal wins the race: the tombstone a removal writes first, the triples writer refusing late work for
the removed document, the sweep of what such work named, and re-adding lifting the tombstone."""

from __future__ import annotations

import asyncio

import pytest

from tracegraph.base.provenance.extraction import document_triples
from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import PROV, RDF, RDFS, TG
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import SOURCE_GRAPH, CollectionRef
from tracegraph.base.temporal.records import quoted_fact
from tracegraph.flow.triples.removal import remove_document
from tracegraph.flow.triples.tombstone import (
    WritesInFlight, mark_removed, refused, refused_entities, removed_at, removed_upstream,
)
from tracegraph.schemas.ingest import Metadata
from tracegraph.schemas.rdf import Triple, iri, literal
from tracegraph.schemas.triples import TriplesQueryRequest, TriplesQueryResponse

REF = CollectionRef("alice", "docs")
DOC, OTHER = "urn:doc:removed", "urn:doc:kept"
JSON, ENCODER = iri(entity_uri("json")), iri(entity_uri("JSONEncoder"))


def described(doc: str) -> list[Triple]:
    return document_triples(doc, title=doc, mime_type="text/plain", date="2026-11-01T10:00:00Z")


def chunk_record(doc: str) -> list[Triple]:
    chunk = iri(f"urn:chunk:{doc}/1")
    return [Triple(s=chunk, p=RDF.type, o=TG.Chunk, g=SOURCE_GRAPH),
            Triple(s=chunk, p=PROV.wasDerivedFrom, o=iri(doc), g=SOURCE_GRAPH)]


def extraction(doc: str) -> list[Triple]:
    """What kg-extract sends for the document's chunk: a fact, labels, and the subgraph holding them."""
    fact = Triple(s=JSON, p=iri(relation_uri("provides")), o=ENCODER)
    subgraph = iri(f"urn:graph:{doc}/1/sg")
    return [fact, Triple(s=JSON, p=RDFS.label, o=literal("json")),
            Triple(s=ENCODER, p=RDFS.label, o=literal("JSONEncoder")),
            Triple(s=subgraph, p=RDF.type, o=TG.Subgraph, g=SOURCE_GRAPH),
            Triple(s=subgraph, p=PROV.wasDerivedFrom, o=iri(f"urn:chunk:{doc}/1"), g=SOURCE_GRAPH),
            Triple(s=subgraph, p=TG.contains, o=quoted_fact(fact), g=SOURCE_GRAPH),
            Triple(s=subgraph, p=TG.mentions, o=JSON, g=SOURCE_GRAPH),
            Triple(s=subgraph, p=TG.mentions, o=ENCODER, g=SOURCE_GRAPH)]


@pytest.fixture
async def store(tmp_path):
    store = OxigraphTripleStore(tmp_path / "triples")
    await store.add(REF, described(DOC) + chunk_record(DOC))
    yield store
    await store.aclose()


async def test_work_for_a_live_document_is_written(store):
    assert not await refused(store, REF, DOC, extraction(DOC))
    assert await removed_at(store, REF, DOC) is None


async def test_the_first_removal_writes_the_tombstone_and_a_second_finds_it(store):
    assert await mark_removed(store, REF, DOC, "2026-11-02T10:00:00Z") is None
    assert await mark_removed(store, REF, DOC, "2026-11-03T10:00:00Z") == "2026-11-02T10:00:00Z"
    await remove_document(store, REF, DOC)
    assert await removed_at(store, REF, DOC) == "2026-11-02T10:00:00Z"  # the removal keeps its tombstone


async def test_late_extraction_for_a_removed_document_is_refused_and_its_entities_noted(store):
    await mark_removed(store, REF, DOC, "2026-11-02T10:00:00Z")
    await remove_document(store, REF, DOC)

    assert await refused(store, REF, DOC, extraction(DOC))

    assert await store.match(REF, s=JSON) == []  # no fact, no label
    assert await store.match(REF, p=TG.mentions, g=SOURCE_GRAPH) == []  # no subgraph
    assert sorted(await refused_entities(store, REF, DOC)) == sorted([JSON.iri, ENCODER.iri])


async def test_a_sweep_reports_the_refused_entities_nothing_else_supports(store):
    await store.add(REF, described(OTHER) + chunk_record(OTHER))
    kept = [t for t in extraction(OTHER) if ENCODER not in (t.s, t.o) and t.p != TG.contains]
    await store.add(REF, kept)  # the other document names json, not JSONEncoder
    await mark_removed(store, REF, DOC, "2026-11-02T10:00:00Z")
    await remove_document(store, REF, DOC)
    await refused(store, REF, DOC, extraction(DOC))

    again = await remove_document(store, REF, DOC)

    assert again.orphaned_entities == [ENCODER.iri]  # its vector goes; json's stays, the other names it


async def test_describing_the_document_anew_lifts_the_tombstone(store):
    await mark_removed(store, REF, DOC, "2026-11-02T10:00:00Z")
    await remove_document(store, REF, DOC)

    assert not await refused(store, REF, DOC, described(DOC))  # the librarian's add-processing of a re-add
    assert await removed_at(store, REF, DOC) is None
    assert not await refused(store, REF, DOC, extraction(DOC))


async def test_a_removal_waits_for_writes_that_checked_before_its_tombstone():
    in_flight, order = WritesInFlight(), []
    release = asyncio.Event()

    async def write() -> None:
        async with in_flight.writing(REF, DOC):
            await release.wait()
            order.append("written")

    async def remove() -> None:
        await in_flight.drained(REF, DOC)
        order.append("removed")

    writer = asyncio.create_task(write())
    await asyncio.sleep(0)
    remover = asyncio.create_task(remove())
    await asyncio.sleep(0.01)
    assert order == []  # the removal waits
    release.set()
    await asyncio.gather(writer, remover)
    assert order == ["written", "removed"]
    await asyncio.wait_for(in_flight.drained(REF, "urn:doc:idle"), 1)  # nothing in flight: no wait


class StoreOverTheBus:
    """The triples query service as kg-extract reaches it, answered from the store."""

    def __init__(self, store: OxigraphTripleStore) -> None:
        self.store = store

    async def request(self, req: TriplesQueryRequest) -> TriplesQueryResponse:
        ref = CollectionRef(req.user, req.collection)
        return TriplesQueryResponse(triples=await self.store.match(ref, req.s, req.p, req.o, req.g, req.limit))


async def test_kg_extract_sees_the_removal_of_a_chunks_document(store):
    chunk = Metadata(id=f"urn:chunk:{DOC}/1", root=DOC, user=REF.user, collection=REF.collection)
    asking = StoreOverTheBus(store)
    assert not await removed_upstream(asking, chunk)

    await mark_removed(store, REF, DOC, "2026-11-02T10:00:00Z")

    assert await removed_upstream(asking, chunk)
    assert not await removed_upstream(asking, chunk.model_copy(update={"collection": "other"}))
