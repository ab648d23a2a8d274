"""Removal wins the race: a document removed while its chunks still wait for kg-extract (here stopped with
SIGSTOP, as a slow LLM extractor would hold them) leaves nothing behind once kg-extract catches up, and
neither does extraction kg-extract sent just before the removal that reaches the triples writer and
graph-embeddings after it. Every processor is its own OS process on RabbitMQ. Without the tombstone the
late work wrote the removed document's facts, labels, subgraphs, active history records and entity
vectors, and a second removal failed with `no document …`; now kg-extract drops the removed document's
chunks, the triples writer refuses its late quads, and the second removal answers "already removed" and
sweeps the entity vectors the late work left."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import pytest

from tracegraph.base.bus.rabbitmq import RabbitMQBackend
from tracegraph.base.bus.topic import Topic
from tracegraph.base.flow import ProducerHandle
from tracegraph.base.provenance.uris import entity_uri, relation_uri, subgraph_uri
from tracegraph.base.provenance.vocab import PROV, RDF, RDFS
from tracegraph.base.provenance.vocab import TG as VOCAB
from tracegraph.base.temporal.records import quoted_fact
from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import add_document, process
from tracegraph.schemas.ingest import EntityContext, EntityContexts, Metadata, Triples
from tracegraph.schemas.rdf import Triple, iri, literal

from support.cluster import Cluster
from support.fault_corpus import write_corpus

pytestmark = [pytest.mark.rabbitmq, pytest.mark.faults, pytest.mark.timeout(240)]

NAMES = ["config", "librarian", "triples", "embeddings", "graph-embeddings", "document-embeddings", "kg-extract",
         "chunker", "gateway"]
COLLECTION = "race"
KEPT, REMOVED = "urn:race:kept", "urn:race:removed"
LATE_X, LATE_Y = entity_uri("Late Writer X"), entity_uri("Late Writer Y")  # named only by the late work
QUADS = "SELECT ?g ?s ?p ?o WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }"
CHUNKS = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX tg: <https://trustgraph.ai/ns/>
SELECT ?chunk ?subgraph WHERE { GRAPH <urn:graph:source> {
  ?chunk a tg:Chunk . OPTIONAL { ?subgraph prov:wasDerivedFrom ?chunk } } }"""
TG = "https://trustgraph.ai/ns/"
SOURCE = str(sorted({"t": "i", "i": "urn:graph:source"}.items()))
HISTORY = {str(sorted({"t": "i", "i": g}.items())) for g in ("urn:graph:history", "urn:graph:history-facts")}
ACTIVE_RECORDS = """PREFIX tg: <https://trustgraph.ai/ns/>
SELECT ?r WHERE { GRAPH <urn:graph:history> { ?r tg:statedIn <%s> FILTER NOT EXISTS { ?r tg:retractedAt ?t } } }"""


def _text(term: dict | None) -> str:
    return "-" if term is None else str(sorted(term.items()))


async def quads(api: Api) -> set[tuple[str, ...]]:
    reply = await api.flow_service("default", "sparql", {"query": QUADS, "collection": COLLECTION, "limit": 1_000_000})
    return {tuple(_text(row.get(v)) for v in ("g", "s", "p", "o")) for row in reply["bindings"]}


async def chunks(api: Api) -> dict[str, int]:
    """Each stored chunk, with how many subgraphs derive from it."""
    reply = await api.flow_service("default", "sparql", {"query": CHUNKS, "collection": COLLECTION, "limit": 100_000})
    found: dict[str, int] = {}
    for row in reply["bindings"]:
        found[row["chunk"]["i"]] = found.get(row["chunk"]["i"], 0) + ("subgraph" in row and row["subgraph"] is not None)
    return found


async def vectors(api: Api) -> dict[str, set[str]]:
    probe = (await api.flow_service("default", "embeddings", {"texts": ["probe"]}))["vectors"][0]
    return {kind: {m["id"] for m in (await api.flow_service("default", kind, {
        "vector": probe, "limit": 1000, "collection": COLLECTION}))["matches"]}
        for kind in ("document-embeddings", "graph-embeddings")}


async def until(check, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.5)


async def quiet(api: Api, seconds: float = 4.0, timeout: float = 60) -> None:
    """Until the stored quads and vectors stay the same for `seconds` (late writers have landed)."""
    deadline = time.monotonic() + timeout
    previous, since = (await quads(api), await vectors(api)), time.monotonic()
    while time.monotonic() - since < seconds and time.monotonic() < deadline:
        await asyncio.sleep(1.0)
        current = (await quads(api), await vectors(api))
        if current != previous:
            previous, since = current, time.monotonic()


async def load(api: Api, path: Path, document_id: str) -> None:
    meta = await add_document(api, path, collection=COLLECTION, document_id=document_id)
    await process(api, meta["id"], "default", COLLECTION)


async def publish_late_extraction(url: str, chunk: str) -> None:
    """What kg-extract sent for a chunk just before the removal, reaching the triples writer and
    graph-embeddings after it (they were behind): a fact, labels, its subgraph, and entity contexts."""
    meta = Metadata(id=chunk, root=REMOVED, user="user0", collection=COLLECTION)
    fact = Triple(s=iri(LATE_X), p=iri(relation_uri("feeds")), o=iri(LATE_Y))
    subgraph = iri(subgraph_uri(chunk, "late"))
    triples = [fact, Triple(s=iri(LATE_X), p=RDFS.label, o=literal("Late Writer X")),
               Triple(s=iri(LATE_Y), p=RDFS.label, o=literal("Late Writer Y")),
               Triple(s=subgraph, p=RDF.type, o=VOCAB.Subgraph, g="urn:graph:source"),
               Triple(s=subgraph, p=PROV.wasDerivedFrom, o=iri(chunk), g="urn:graph:source"),
               Triple(s=subgraph, p=VOCAB.contains, o=quoted_fact(fact), g="urn:graph:source"),
               Triple(s=subgraph, p=VOCAB.mentions, o=iri(LATE_X), g="urn:graph:source"),
               Triple(s=subgraph, p=VOCAB.mentions, o=iri(LATE_Y), g="urn:graph:source")]
    contexts = [EntityContext(entity=e, label=label, chunk=chunk) for e, label in
                ((LATE_X, "Late Writer X"), (LATE_Y, "Late Writer Y"))]
    backend = RabbitMQBackend(url)
    try:
        await ProducerHandle(backend, Topic.parse("persistent://tg/flow/triples-store:default"), Triples).send(
            Triples(metadata=meta, triples=triples))
        await ProducerHandle(backend, Topic.parse("persistent://tg/flow/entity-contexts:default"),
                             EntityContexts).send(EntityContexts(metadata=meta, entities=contexts))
    finally:
        await backend.aclose()


def refusals(cluster: Cluster) -> int:
    """Chunks of the removed document dropped by kg-extract or refused by the triples writer."""
    return sum(cluster.log_of(name).read_text(errors="replace").count(f"document {REMOVED} was removed")
               for name in ("kg-extract", "triples"))


def test_a_document_removed_while_kg_extract_is_behind_leaves_nothing(rabbitmq_url: str, tmp_path: Path):
    cluster = Cluster(rabbitmq_url, tmp_path / "data", tmp_path / "logs", users=1, TG_EXTRACTOR="offline",
                      TG_RETRY_BACKOFF="0.25", TG_REQUEST_TIMEOUT="30")
    kept_file, removed_file = write_corpus(tmp_path / "corpus", ["json", "hashlib"])

    async def scenario() -> None:
        await cluster.start_all(NAMES)
        api = Api(cluster.gateway, token=cluster.tokens["user0"], timeout=60)

        await load(api, kept_file, KEPT)  # a document that stays, extracted in full
        await until(lambda: _all_extracted(api), "the kept document's extraction")
        await quiet(api)
        before_quads, before_vectors = await quads(api), await vectors(api)
        kept_chunk_ids = set(await chunks(api))
        kept_chunks = len(kept_chunk_ids)

        cluster.signal("kg-extract", signal.SIGSTOP)  # kg-extract falls behind
        try:
            await load(api, removed_file, REMOVED)
            await until(lambda: _chunks_indexed(api, kept_chunks), "the second document's chunks and vectors")
            pending = len(await chunks(api)) - kept_chunks
            assert pending > 0 and not await _all_extracted(api), "kg-extract extracted while stopped"
            removed_chunks = sorted(set(await chunks(api)) - kept_chunk_ids)
            removal = await api.request("librarian", {"operation": "remove-document", "document-id": REMOVED})
            assert not removal.get("already-removed")
            await publish_late_extraction(rabbitmq_url, removed_chunks[0])
        finally:
            cluster.signal("kg-extract", signal.SIGCONT)  # it catches up
        await until(lambda: _caught_up(api, cluster, pending + 1), "kg-extract to catch up with the removed chunks",
                    timeout=90)
        await quiet(api)

        after = await quads(api)
        tombstone = {q for q in after if REMOVED in q[1] and q[0] == SOURCE}  # its tombstone and what it refused
        assert {q[2] for q in tombstone} <= {_iri(TG + "removedAt"), _iri(TG + "refusedMention")}, tombstone
        orphans = _current(after) - tombstone - _current(before_quads)
        assert not orphans, f"{len(orphans)} quads derived from the removed document, e.g. {sorted(orphans)[:3]}"
        assert _current(before_quads) <= _current(after)  # the kept document is whole
        active = await api.flow_service("default", "sparql", {"query": ACTIVE_RECORDS % REMOVED,
                                                              "collection": COLLECTION})
        assert active["bindings"] == [], "history records of the removed document are active again"
        assert (await vectors(api))["document-embeddings"] == before_vectors["document-embeddings"]

        again = await api.request("librarian", {"operation": "remove-document", "document-id": REMOVED})
        assert again.get("already-removed") is True
        await quiet(api, seconds=2.0)
        assert await vectors(api) == before_vectors, "entity vectors of the removed document remain"

    try:
        asyncio.run(scenario())
    finally:
        asyncio.run(cluster.stop_all())
    assert not cluster.tracebacks(), cluster.tracebacks()


def _iri(value: str) -> str:
    return _text({"t": "i", "i": value})


def _current(found: set[tuple[str, ...]]) -> set[tuple[str, ...]]:
    """All but the history graphs: the history keeps what the removed document stated, by design (its
    records are retracted; ACTIVE_RECORDS checks that none is active)."""
    return {q for q in found if q[0] not in HISTORY}


async def _all_extracted(api: Api) -> bool:
    found = await chunks(api)
    return bool(found) and all(found.values())


async def _chunks_indexed(api: Api, kept: int) -> bool:
    found = await chunks(api)
    return len(found) > kept and len((await vectors(api))["document-embeddings"]) == len(found)


async def _caught_up(api: Api, cluster: Cluster, pending: int) -> bool:
    """kg-extract has answered every chunk of the removed document: each refused by the triples writer,
    or (without the tombstone) written, which leaves active history records of the removed document."""
    return refusals(cluster) >= pending or await _orphans(api)


async def _orphans(api: Api) -> bool:
    reply = await api.flow_service("default", "sparql", {"query": ACTIVE_RECORDS % REMOVED, "collection": COLLECTION})
    return bool(reply["bindings"])
