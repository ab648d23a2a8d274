"""SKELETON (being implemented): the agent processor's wiring."""

from __future__ import annotations

from collections.abc import AsyncIterator

from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Client, Producer, Service
from tracegraph.schemas.agent import AgentRequest, AgentResponse
from tracegraph.schemas.ingest import Triples
from tracegraph.schemas.library import LibrarianRequest, LibrarianResponse
from tracegraph.schemas.llm import TextCompletionRequest, TextCompletionResponse
from tracegraph.schemas.retrieval import DocumentRagRequest, DocumentRagResponse, GraphRagRequest, GraphRagResponse
from tracegraph.schemas.triples import TriplesQueryRequest, TriplesQueryResponse


class AgentProcessor(FlowProcessor):
    name = "agent"
    request = Service("request", AgentRequest, AgentResponse, prefetch=8)
    explainability = Producer("explainability", Triples)
    graph_rag = Client("graph-rag", GraphRagRequest, GraphRagResponse)
    document_rag = Client("document-rag", DocumentRagRequest, DocumentRagResponse)
    completion = Client("text-completion", TextCompletionRequest, TextCompletionResponse)
    librarian = Client("librarian", LibrarianRequest, LibrarianResponse)
    triples = Client("triples", TriplesQueryRequest, TriplesQueryResponse)

    @request.handler
    async def answer(self, req: AgentRequest, flow: Flow) -> AsyncIterator[AgentResponse]:
        raise NotImplementedError("agent is being implemented")
        yield
