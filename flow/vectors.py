"""graph-embeddings and document-embeddings: entity and chunk vectors, stored and searched.

Both embed through the flow's `embeddings` service and keep vectors in Qdrant (local folder by
default, a server with TG_QDRANT_URL). In local mode each keeps its own folder: Qdrant locks
a folder to one process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import ClassVar

from tracegraph.base.errors import ConfigError
from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.settings import RuntimeSettings
from tracegraph.base.provenance.extraction import failed_indexing_triples
from tracegraph.base.specs import Client, Consumer, Producer, Service
from tracegraph.base.stores.passages import Passage, PassageIndex
from tracegraph.base.stores.protocol import CollectionRef, VectorItem, VectorKind, VectorStore
from tracegraph.base.stores.qdrant import QdrantVectorStore
from tracegraph.schemas.embeddings import (
    EmbeddingsRequest, EmbeddingsResponse, PassageKeywordRequest, PassageKeywordResponse, VectorMatch, VectorQueryRequest, VectorQueryResponse,
    VectorRemovalRequest, VectorRemovalResponse,
)
from tracegraph.schemas.ingest import EntityContexts, Metadata, TextChunk, Triples


def open_vector_store(settings: RuntimeSettings, folder: str) -> VectorStore:
    if settings.qdrant_url:
        return QdrantVectorStore(url=settings.qdrant_url, api_key=settings.qdrant_api_key)
    return QdrantVectorStore(path=settings.data_dir / "vectors" / folder)


class VectorProcessor(FlowProcessor):
    """Shared by both: the store, nearest-neighbour queries, and removal by ids."""

    kind: ClassVar[VectorKind]
    embeddings = Client("embeddings", EmbeddingsRequest, EmbeddingsResponse)
    failures = Producer("triples", Triples)
    query = Service("query", VectorQueryRequest, VectorQueryResponse, prefetch=32)
    remove = Service("remove", VectorRemovalRequest, VectorRemovalResponse, prefetch=2)

    async def start(self) -> None:
        self.store = open_vector_store(self.settings, self.kind)
        self._stack.push_async_callback(self.store.aclose)
        await super().start()

    async def index_texts(self, flow: Flow, meta: Metadata, items: list[tuple[str, str, dict]]) -> None:
        """Embed each (id, text, payload) and store it in the message's collection."""
        vectors = (await flow[self.embeddings].request(EmbeddingsRequest(texts=[t for _, t, _ in items]))).vectors
        await self.store.upsert(CollectionRef(meta.user, meta.collection), self.kind, [
            VectorItem(id_, vector, payload) for (id_, _, payload), vector in zip(items, vectors)])

    @query.handler
    async def nearest(self, req: VectorQueryRequest, flow: Flow) -> AsyncIterator[VectorQueryResponse]:
        ref = CollectionRef(req.user, req.collection)
        if req.ids:
            hits = await self.store.get(ref, self.kind, req.ids)
        elif req.vector:
            hits = await self.store.search(ref, self.kind, req.vector, req.limit)
        else:
            raise ConfigError("a vector query needs a vector or ids")
        yield VectorQueryResponse(matches=[
            VectorMatch(id=h.id, score=h.score, text=h.payload.get("text"), document=h.payload.get("document"))
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
    input = Consumer("input", EntityContexts, prefetch=8)

    @input.handler
    async def index(self, message: EntityContexts, flow: Flow) -> None:
        entities = list({e.entity: e for e in message.entities}.values())
        await self.index_texts(flow, message.metadata, [(e.entity, e.label, {"label": e.label}) for e in entities])


class DocumentEmbeddingsProcessor(VectorProcessor):
    """Chunk vectors, with the chunk's text and document in the payload for Document RAG; and the
    passage index (BM25 over the same chunks with their titles), so hybrid retrieval has both."""

    name = "document-embeddings"
    kind = "chunk"
    input = Consumer("input", TextChunk, prefetch=8)
    keywords = Service("keyword-query", PassageKeywordRequest, PassageKeywordResponse, prefetch=32)

    async def start(self) -> None:
        self.passages = PassageIndex(self.settings.data_dir / "passages")
        self._stack.push_async_callback(self.passages.aclose)
        await super().start()

    @input.handler
    async def index(self, chunk: TextChunk, flow: Flow) -> None:
        payload = {"text": chunk.text, "document": chunk.document, "index": chunk.index}
        # Embedded under its document's title, as dense passage retrievers do: a passage's text often
        # names its subject only as "it" or "the song".
        embedded = f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text
        await self.index_texts(flow, chunk.metadata, [(chunk.metadata.id, embedded, payload)])
        await self.passages.add(CollectionRef(chunk.metadata.user, chunk.metadata.collection), [
            Passage(chunk.metadata.id, chunk.document, chunk.title, chunk.text)])

    async def forget_more(self, ref: CollectionRef, req: VectorRemovalRequest) -> None:
        await self.passages.remove(ref, req.ids, req.document)

    @keywords.handler
    async def keyword_search(self, req: PassageKeywordRequest, flow: Flow) -> AsyncIterator[PassageKeywordResponse]:
        hits = await self.passages.search(CollectionRef(req.user, req.collection), req.query, req.limit)
        yield PassageKeywordResponse(matches=[VectorMatch(id=h.id, score=h.score, document=h.document) for h in hits])
