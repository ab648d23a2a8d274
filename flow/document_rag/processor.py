"""SKELETON (being implemented): the document-rag processor's wiring."""

from __future__ import annotations

from collections.abc import AsyncIterator

from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Client, Producer, Service
from tracegraph.schemas.embeddings import EmbeddingsRequest, EmbeddingsResponse, VectorQueryRequest, VectorQueryResponse
from tracegraph.schemas.ingest import Triples
from tracegraph.schemas.library import LibrarianRequest, LibrarianResponse
from tracegraph.schemas.llm import TextCompletionRequest, TextCompletionResponse
from tracegraph.schemas.retrieval import DocumentRagRequest, DocumentRagResponse
from tracegraph.schemas.triples import SparqlQueryRequest, SparqlQueryResponse, TriplesQueryRequest, TriplesQueryResponse


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

    @request.handler
    async def answer(self, req: DocumentRagRequest, flow: Flow) -> AsyncIterator[DocumentRagResponse]:
        raise NotImplementedError("document-rag is being implemented")
        yield
