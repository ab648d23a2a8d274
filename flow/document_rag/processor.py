"""document-rag over the bus: requests in, DocumentRagPipeline out. Explain events go to the caller
(inline, as upstream's client expects) and to the explainability topic (stored by the writer)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Client, Producer, Service
from tracegraph.base.stores.protocol import RETRIEVAL_GRAPH
from tracegraph.flow.document_rag.pipeline import DocumentRagPipeline, Limits
from tracegraph.flow.document_rag.tools import RetrievedChunk
from tracegraph.flow.graph_rag.pipeline import Chunk, Explain, Finished
from tracegraph.flow.graph_rag.processor import BusTools
from tracegraph.schemas.embeddings import EmbeddingsRequest, EmbeddingsResponse, VectorQueryRequest, VectorQueryResponse
from tracegraph.schemas.ingest import Metadata, Triples
from tracegraph.schemas.library import LibrarianRequest, LibrarianResponse
from tracegraph.schemas.llm import TextCompletionRequest, TextCompletionResponse
from tracegraph.schemas.retrieval import DocumentRagRequest, DocumentRagResponse, Source
from tracegraph.schemas.triples import (
    SparqlQueryRequest, SparqlQueryResponse, TriplesQueryRequest, TriplesQueryResponse,
)


class DocumentBusTools(BusTools):
    """GraphRAG's bus tools (both processors give their clients the same names), plus chunk search."""

    async def nearest_chunks(self, vector: Sequence[float], limit: int) -> list[RetrievedChunk]:
        reply = await self.flow[self.p.document_embeddings].request(VectorQueryRequest(
            vector=list(vector), limit=limit, user=self.user, collection=self.collection))
        return [RetrievedChunk(m.id, m.score, m.text or "", m.document) for m in reply.matches]


class DocumentRagProcessor(FlowProcessor):
    name = "document-rag"
    request = Service("request", DocumentRagRequest, DocumentRagResponse, prefetch=8)
    explainability = Producer("explainability", Triples)
    embeddings = Client("embeddings", EmbeddingsRequest, EmbeddingsResponse)
    document_embeddings = Client("document-embeddings", VectorQueryRequest, VectorQueryResponse)
    completion = Client("text-completion", TextCompletionRequest, TextCompletionResponse)
    librarian = Client("librarian", LibrarianRequest, LibrarianResponse)
    triples = Client("triples", TriplesQueryRequest, TriplesQueryResponse)
    sparql = Client("sparql", SparqlQueryRequest, SparqlQueryResponse)

    limits = Limits()

    @request.handler
    async def answer(self, req: DocumentRagRequest, flow: Flow) -> AsyncIterator[DocumentRagResponse]:
        # Upstream's client sends `fetch-limit: 0` to mean its default.
        limits = Limits(doc_limit=req.doc_limit or self.limits.doc_limit,
                        fetch_limit=req.fetch_limit or self.limits.fetch_limit)
        pipeline = DocumentRagPipeline(DocumentBusTools(self, flow, req), limits)
        meta = Metadata(id="", root="", user=req.user, collection=req.collection)
        async for step in pipeline.run(req.query, streaming=req.streaming, explain=req.explain,
                                       parent_uri=req.parent_uri):
            if isinstance(step, Explain):
                await flow[self.explainability].send(Triples(metadata=meta.model_copy(update={"id": step.uri}),
                                                             triples=step.triples))
                yield DocumentRagResponse(message_type="explain", explain_id=step.uri, explain_graph=RETRIEVAL_GRAPH,
                                          explain_triples=step.triples)
            elif isinstance(step, Chunk):
                yield DocumentRagResponse(response=step.text, end_of_stream=step.end_of_stream)
            elif isinstance(step, Finished):
                # Streaming ends with upstream's `end` message; otherwise the one message holds the answer.
                yield DocumentRagResponse(
                    message_type="end" if req.streaming else "chunk", response="" if req.streaming else step.answer,
                    end_of_stream=not req.streaming, end_of_session=True, in_token=step.usage.in_token,
                    out_token=step.usage.out_token, model=step.usage.model,
                    sources=[Source(uri=u, title=t) for u, t in step.sources] or None)
