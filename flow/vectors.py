"""graph-embeddings and document-embeddings: entity and chunk vectors, stored and searched.

Both embed through the flow's `embeddings` service and keep vectors in the embedded ANN store
(base/stores/ann.py; TG_VECTOR_ENGINE=qdrant-local for Qdrant local mode) or a Qdrant server
(TG_QDRANT_URL). Embedded, each keeps its own folder: a folder is locked to one process. Messages handled at about the same time are indexed together, with one
embeddings request and one upsert (micro-batching: a call costs far more than an item).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar


from tracegraph.base.errors import ConfigError, is_transient
from tracegraph.base.flow import Flow
from tracegraph.base.microbatch import MicroBatcher
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.settings import RuntimeSettings
from tracegraph.base.provenance.extraction import failed_indexing_triples
from tracegraph.base.specs import Client, Consumer, Producer, Service
from tracegraph.base.stores.ann import AnnVectorStore
from tracegraph.base.stores.passages import Passage, PassageIndex
from tracegraph.base.stores.protocol import CollectionRef, VectorItem, VectorKind, VectorStore
from tracegraph.base.stores.qdrant import QdrantVectorStore
from tracegraph.flow.store_folder import store_folder_held
from tracegraph.schemas.embeddings import (
    EmbeddingsRequest, EmbeddingsResponse, PassageKeywordRequest, PassageKeywordResponse, VectorMatch, VectorQueryRequest, VectorQueryResponse,
    VectorRemovalRequest, VectorRemovalResponse,
)
from tracegraph.schemas.ingest import EntityContexts, TextChunk, Triples


def open_vector_store(settings: RuntimeSettings, folder: str) -> VectorStore:
    """A Qdrant server when TG_QDRANT_URL is set, else an embedded engine (TG_VECTOR_ENGINE) under the data dir."""
    if settings.qdrant_url:
        return QdrantVectorStore(url=settings.qdrant_url, api_key=settings.qdrant_api_key)
    if settings.vector_engine == "qdrant-local":
        return QdrantVectorStore(path=settings.data_dir / "vectors" / folder)
    return AnnVectorStore(settings.data_dir / "vectors" / folder)


# Deliveries in flight per input: room for a full batch being indexed and the next one filling.
INPUT_PREFETCH = 128
BATCHES_IN_FLIGHT = 2  # one embedding while the one before is being stored


@dataclass(frozen=True, slots=True)
class IndexItem:
    """One text to embed and store under `id` in collection `ref`; `passage` also goes to the passage index."""

    ref: CollectionRef
    id: str
    text: str
    payload: Mapping[str, Any]
    passage: Passage | None = None


class VectorProcessor(FlowProcessor):
    """Shared by both: batched indexing, the store, nearest-neighbour queries, and removal by ids."""

    kind: ClassVar[VectorKind]
    embeddings = Client("embeddings", EmbeddingsRequest, EmbeddingsResponse, priority="bulk")  # ingest
    failures = Producer("triples", Triples)
    query = Service("query", VectorQueryRequest, VectorQueryResponse, prefetch=32)
    remove = Service("remove", VectorRemovalRequest, VectorRemovalResponse, prefetch=2)

    async def start(self) -> None:
        self._batchers: dict[Flow, MicroBatcher[IndexItem, None]] = {}
        self.store = open_vector_store(self.settings, self.kind)
        self._stack.push_async_callback(self.store.aclose)
        await super().start()

    async def stop_flow(self, flow_id: str) -> None:
        flow = self.flows.get(flow_id)
        await super().stop_flow(flow_id)  # cancels the handlers first: their messages stay unacknowledged
        batcher = self._batchers.pop(flow, None) if flow is not None else None
        if batcher is not None:
            await batcher.aclose()

    async def index(self, flow: Flow, items: Sequence[IndexItem]) -> None:
        """Embed and store `items`, in a batch with those of other messages of this flow handled now.
        Returns once they are stored; raises the batch's error otherwise."""
        batcher = self._batchers.get(flow)
        if batcher is None:
            # One per flow: each flow binds its own embeddings service.
            batcher = self._batchers[flow] = MicroBatcher(
                partial(self._index_batch, flow), window=self.settings.embed_batch_window, max_items=self.settings.embed_batch_size,
                concurrency=BATCHES_IN_FLIGHT, retry_alone=lambda exc: not is_transient(exc),
                name=f"{self.name}:{flow.id}")
        await batcher.submit(items)

    async def _index_batch(self, flow: Flow, items: list[IndexItem]) -> list[None]:
        texts = list(dict.fromkeys(item.text for item in items))  # an entity often recurs across messages
        vectors = (await flow[self.embeddings].request(EmbeddingsRequest(texts=texts))).vectors
        vector_of = dict(zip(texts, vectors, strict=True))
        for ref, group in _by_collection(items).items():
            await self.store.upsert(ref, self.kind, [VectorItem(i.id, vector_of[i.text], i.payload) for i in group])
        await self.index_more(items)
        return [None] * len(items)

    async def index_more(self, items: list[IndexItem]) -> None:
        """What else a processor keeps about indexed items (the passage index), once their vectors are stored."""

    @query.handler
    async def nearest(self, req: VectorQueryRequest, flow: Flow) -> AsyncIterator[VectorQueryResponse]:
        ref = CollectionRef(req.user, req.collection)
        if req.ids:
            hits = await self.store.get(ref, self.kind, req.ids, with_vectors=req.with_vectors)
        elif req.vector:
            hits = await self.store.search(ref, self.kind, req.vector, req.limit)
        else:
            raise ConfigError("a vector query needs a vector or ids")
        yield VectorQueryResponse(matches=[
            VectorMatch(id=h.id, score=h.score, text=h.payload.get("text"), document=h.payload.get("document"),
                        vector=list(h.vector) if req.with_vectors and h.vector is not None else None)
            for h in hits])

    @remove.handler
    async def forget(self, req: VectorRemovalRequest, flow: Flow) -> AsyncIterator[VectorRemovalResponse]:
        ref = CollectionRef(req.user, req.collection)
        removed = await self.store.delete(ref, self.kind, req.ids) if req.ids else 0
        if req.document:
            removed += await self.store.delete_where(ref, self.kind, "document", req.document)
        await self.forget_more(ref, req)
        yield VectorRemovalResponse(removed=removed)

    async def forget_more(self, ref: CollectionRef, req: VectorRemovalRequest) -> None:
        """What else a processor keeps about the removed items (the passage index)."""

    async def gave_up(self, spec, message, flow: Flow, error: str) -> None:
        """Both inputs carry their chunk's metadata: record on the chunk that its vectors are missing."""
        meta = message.metadata
        await flow[self.failures].send(Triples(metadata=meta, triples=failed_indexing_triples(
            meta.id, self.name, error[:1000])))


class GraphEmbeddingsProcessor(VectorProcessor):
    """Entity vectors, embedded from each entity's label, so a concept finds the entities it names."""

    name = "graph-embeddings"
    kind = "entity"
    input = Consumer("input", EntityContexts, prefetch=INPUT_PREFETCH)

    @input.handler
    async def index_entities(self, message: EntityContexts, flow: Flow) -> None:
        ref = CollectionRef(message.metadata.user, message.metadata.collection)
        entities = list({e.entity: e for e in message.entities}.values())
        await self.index(flow, [IndexItem(ref, e.entity, e.label, {"label": e.label}) for e in entities])


class DocumentEmbeddingsProcessor(VectorProcessor):
    """Chunk vectors, with the chunk's text and document in the payload for Document RAG; and the
    passage index (BM25 over the same chunks with their titles), so hybrid retrieval has both."""

    name = "document-embeddings"
    kind = "chunk"
    input = Consumer("input", TextChunk, prefetch=INPUT_PREFETCH)
    keywords = Service("keyword-query", PassageKeywordRequest, PassageKeywordResponse, prefetch=32)

    async def start(self) -> None:
        folder = self.settings.data_dir / "passages"
        await self._stack.enter_async_context(store_folder_held(self.name, folder))
        self.passages = PassageIndex(folder)
        self._stack.push_async_callback(self.passages.aclose)
        await super().start()

    @input.handler
    async def index_chunk(self, chunk: TextChunk, flow: Flow) -> None:
        meta = chunk.metadata
        payload = {"text": chunk.text, "document": chunk.document, "index": chunk.index}
        await self.index(flow, [IndexItem(CollectionRef(meta.user, meta.collection), meta.id,
                                          chunk_embedding_text(chunk), payload,
                                          Passage(meta.id, chunk.document, chunk.title, chunk.text))])

    async def index_more(self, items: list[IndexItem]) -> None:
        for ref, group in _by_collection(items).items():
            await self.passages.add(ref, [i.passage for i in group if i.passage is not None])

    async def forget_more(self, ref: CollectionRef, req: VectorRemovalRequest) -> None:
        await self.passages.remove(ref, req.ids, req.document)

    @keywords.handler
    async def keyword_search(self, req: PassageKeywordRequest, flow: Flow) -> AsyncIterator[PassageKeywordResponse]:
        hits = await self.passages.search(CollectionRef(req.user, req.collection), req.query, req.limit)
        yield PassageKeywordResponse(matches=[VectorMatch(id=h.id, score=h.score, document=h.document) for h in hits])


def chunk_embedding_text(chunk: TextChunk) -> str:
    """A chunk under its document's title, as dense passage retrievers embed passages: a passage's
    text often names its subject only as "it" or "the song"."""
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text


def _by_collection(items: Sequence[IndexItem]) -> dict[CollectionRef, list[IndexItem]]:
    """A batch may mix users and collections; each store call takes one."""
    groups: dict[CollectionRef, list[IndexItem]] = defaultdict(list)
    for item in items:
        groups[item.ref].append(item)
    return groups
