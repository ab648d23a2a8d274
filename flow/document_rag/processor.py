"""document-rag over the bus: requests in, DocumentRagPipeline out. Explain events go to the caller
(inline, as upstream's client expects) and to the explainability topic (stored by the writer)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from tracegraph.base.flow import Flow
from tracegraph.base.specs import Service
from tracegraph.flow.document_rag.pipeline import DocumentRagPipeline, Limits
from tracegraph.flow.retrieval_tools import RetrievingProcessor
from tracegraph.schemas.retrieval import DocumentRagRequest, DocumentRagResponse


class DocumentRagProcessor(RetrievingProcessor):
    name = "document-rag"
    request = Service("request", DocumentRagRequest, DocumentRagResponse, prefetch=8)

    limits = Limits()

    @request.handler
    async def answer(self, req: DocumentRagRequest, flow: Flow) -> AsyncIterator[DocumentRagResponse]:
        await self.require_collection(flow, req)
        # Upstream's client sends `fetch-limit: 0` to mean its default.
        limits = Limits(doc_limit=req.doc_limit or self.limits.doc_limit,
                        fetch_limit=req.fetch_limit or self.limits.fetch_limit)
        pipeline = DocumentRagPipeline(self.tools(flow, req), limits, **self.time_of(req))
        steps = pipeline.run(req.query, streaming=req.streaming, explain=req.explain, parent_uri=req.parent_uri)
        # Upstream ends a Document RAG stream with an `end` message.
        async for response in self.rag_responses(flow, req, steps, DocumentRagResponse, stream_end="end"):
            yield response
