"""Batched indexing on the real processors (in-process bus, bundled model): chunks handled at about the
same time share embeddings requests, land in their own collections and in the passage index, and one
chunk that cannot be stored fails alone, not its batch."""

from __future__ import annotations

import pytest

from tracegraph.base.bus import codec
from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.bus.topic import Topic
from tracegraph.base.stores.protocol import CollectionRef, VectorItem
from tracegraph.launch.stack import Stack, ensure_flow
from tracegraph.schemas.ingest import Metadata, TextChunk

from support.stack import settings_for, wait_until_async

pytestmark = pytest.mark.timeout(120)

CHUNK_LOAD = Topic.parse("persistent://tg/flow/chunk-load:default")
SUBJECTS = ["river", "castle", "violin", "glacier", "comet", "harbour", "orchard", "lighthouse"]


def chunk(i: int, collection: str) -> TextChunk:
    meta = Metadata(id=f"urn:chunk:{collection}:{i}", root=f"urn:doc:{collection}", user="u", collection=collection)
    return TextChunk(metadata=meta, text=f"Passage {i} is about a {SUBJECTS[i % len(SUBJECTS)]} and nothing else.",
                     document=f"urn:doc:{collection}", index=i + 1, title=f"Title {i}")


@pytest.fixture
async def stack(tmp_path):
    backend = InprocBackend()
    try:
        async with Stack(backend, settings_for(tmp_path), ["config", "embeddings", "document-embeddings"]) as stack:
            await ensure_flow(backend, "default", "default")
            await stack.joined("default")
            yield backend, stack
    finally:
        await backend.aclose()


async def publish(backend: InprocBackend, chunks: list[TextChunk]) -> None:
    for c in chunks:
        body, props = codec.encode(c)
        await backend.publish(CHUNK_LOAD, body, props)


async def test_concurrent_chunks_share_requests_and_each_lands_in_its_collection(stack):
    backend, processors = stack
    indexer, embeddings = processors["document-embeddings"], processors["embeddings"]
    chunks = [chunk(i, "left" if i % 2 else "right") for i in range(40)]
    requests_before = embeddings.stats.handled
    await publish(backend, chunks)
    await wait_until_async(lambda: indexer.stats.handled + indexer.stats.failed >= 40, timeout=60, what="40 chunks")
    assert indexer.stats.failed == 0
    assert embeddings.stats.handled - requests_before <= 10, "chunks handled together should share requests"
    for collection in ("left", "right"):
        ref = CollectionRef("u", collection)
        ids = [c.metadata.id for c in chunks if c.metadata.collection == collection]
        stored = await indexer.store.get(ref, "chunk", ids)
        assert [h.id for h in stored] == ids
        assert all(h.payload["text"].startswith("Passage") for h in stored)
        hits = await indexer.passages.search(ref, "lighthouse", 10)
        assert {h.id for h in hits} == {c.metadata.id for c in chunks
                                        if c.metadata.collection == collection and "lighthouse" in c.text}


async def test_a_chunk_its_store_refuses_fails_alone(stack):
    backend, processors = stack
    indexer = processors["document-embeddings"]
    # A collection holding 3-dimensional vectors refuses the model's 384: a lasting error, not a transient one.
    await indexer.store.upsert(CollectionRef("u", "odd"), "chunk", [VectorItem("urn:x", [1.0, 0.0, 0.0])])
    good = [chunk(i, "fine") for i in range(12)]
    await publish(backend, [*good[:6], chunk(99, "odd"), *good[6:]])
    await wait_until_async(lambda: indexer.stats.handled + indexer.stats.failed >= 13, timeout=60, what="13 chunks")
    assert (indexer.stats.handled, indexer.stats.failed) == (12, 1)
    stored = await indexer.store.get(CollectionRef("u", "fine"), "chunk", [c.metadata.id for c in good])
    assert len(stored) == 12
