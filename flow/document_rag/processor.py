"""document-rag over the bus: requests in, DocumentRagPipeline out. Explain events go to the caller
(inline, as upstream's client expects) and to the explainability topic (stored by the writer)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from tracegraph.base.flow import Flow
from tracegraph.base.specs import Client, Service
from tracegraph.flow.answering import RagProcessor
from tracegraph.flow.document_rag.pipeline import DocumentRagPipeline, Limits
from tracegraph.flow.document_rag.tools import RetrievedChunk
from tracegraph.flow.graph_rag.processor import BusTools
from tracegraph.schemas.embeddings import VectorQueryRequest, VectorQueryResponse
from tracegraph.schemas.retrieval import DocumentRagRequest, DocumentRagResponse


class DocumentBusTools(BusTools):
    """GraphRAG's bus tools (both processors give their clients the same names), plus chunk search."""

    async def nearest_chunks(self, vector: Sequence[float], limit: int) -> list[RetrievedChunk]:
        reply = await self.flow[self.p.document_embeddings].request(VectorQueryRequest(
            vector=list(vector), limit=limit, user=self.user, collection=self.collection))
        return [RetrievedChunk(m.id, m.score, m.text or "", m.document) for m in reply.matches]


class DocumentRagProcessor(RagProcessor):
    name = "document-rag"
    request = Service("request", DocumentRagRequest, DocumentRagResponse, prefetch=8)
    document_embeddings = Client("document-embeddings", VectorQueryRequest, VectorQueryResponse)

    limits = Limits()

    @request.handler
    async def answer(self, req: DocumentRagRequest, flow: Flow) -> AsyncIterator[DocumentRagResponse]:
        # Upstream's client sends `fetch-limit: 0` to mean its default.
        limits = Limits(doc_limit=req.doc_limit or self.limits.doc_limit,
                        fetch_limit=req.fetch_limit or self.limits.fetch_limit)
        pipeline = DocumentRagPipeline(DocumentBusTools(self, flow, req), limits)
        steps = pipeline.run(req.query, streaming=req.streaming, explain=req.explain, parent_uri=req.parent_uri)
        # Upstream ends a Document RAG stream with an `end` message.
        async for response in self.rag_responses(flow, req, steps, DocumentRagResponse, stream_end="end"):
            yield response
