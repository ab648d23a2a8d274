"""agent over the bus: requests in, ReactAgent out, with the tools the configuration holds at the time.
Explain events go to the explainability topic and to the caller: inline, as upstream's client expects,
and as the provenance spec's references to every node a step created. The events of a tool's own trace
(GraphRAG, Document RAG) are relayed to the caller as they arrive."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from tracegraph.base.flow import Flow
from tracegraph.base.specs import Client, Service
from tracegraph.flow.answering import AnsweringProcessor, explain_fields
from tracegraph.flow.agent.react import DEFAULT_MAX_ITERATIONS, Finished, ReactAgent, Say
from tracegraph.flow.agent.tool_config import ToolDefinition, select_tools, tools_from_config
from tracegraph.flow.agent.tools import Relayed, ToolResult, ToolRunner
from tracegraph.flow.graph_rag.pipeline import Explain
from tracegraph.flow.retrieval_tools import BusRetrievalTools
from tracegraph.schemas.agent import AgentRequest, AgentResponse
from tracegraph.schemas.rdf import IriTerm, Triple
from tracegraph.schemas.retrieval import DocumentRagRequest, DocumentRagResponse, GraphRagRequest, GraphRagResponse


class AgentBusTools(BusRetrievalTools):
    """The retrieval tools' LLM and librarian calls (the processors give those clients the same
    names), plus the retrieval services the agent's tools call."""

    def __init__(self, processor: "AgentProcessor", flow: Flow, req: AgentRequest) -> None:
        super().__init__(processor, flow, req)  # type: ignore[arg-type]
        self.runner = ToolRunner(self, req.user, req.collection, req.explain)

    def graph_rag(self, request: GraphRagRequest) -> AsyncIterator[GraphRagResponse]:
        return self.flow[self.p.graph_rag].stream(request)

    def document_rag(self, request: DocumentRagRequest) -> AsyncIterator[DocumentRagResponse]:
        return self.flow[self.p.document_rag].stream(request)

    def run_tool(self, tool: ToolDefinition, arguments: Mapping[str, str],
                 parent_uri: str) -> AsyncIterator[Relayed | ToolResult]:
        return self.runner.run(tool, arguments, parent_uri)


class AgentProcessor(AnsweringProcessor):
    name = "agent"
    request = Service("request", AgentRequest, AgentResponse, prefetch=8)
    graph_rag = Client("graph-rag", GraphRagRequest, GraphRagResponse)
    document_rag = Client("document-rag", DocumentRagRequest, DocumentRagResponse)

    max_iterations = DEFAULT_MAX_ITERATIONS

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.tools: dict[str, ToolDefinition] = {}  # the current set, from the latest config push

    async def apply_config(self, version: int, config: Mapping[str, Mapping[str, str]]) -> None:
        await super().apply_config(version, config)
        if self.config_version == version:  # not an older push that lost a race with a newer one
            self.tools = tools_from_config(config)

    @request.handler
    async def answer(self, req: AgentRequest, flow: Flow) -> AsyncIterator[AgentResponse]:
        # The agent has no triples client: it knows a collection by the librarian's records only.
        await self.require_collection(flow, req)
        agent = ReactAgent(AgentBusTools(self, flow, req), select_tools(self.tools, req.group),
                           req.max_iterations or self.max_iterations, explain=req.explain)
        async for event in agent.run(req.question, session_id=req.session_id or None, history=req.history,
                                     state=req.state):
            if isinstance(event, Say):
                yield AgentResponse(message_type=event.kind, content=event.text, end_of_message=True,
                                    message_id=event.message_id)
            elif isinstance(event, Explain):
                if req.explain:
                    await self.explain(flow, req, event.uri, event.triples)
                    yield AgentResponse(**explain_fields(event.uri, own_triples(event)),
                                        **provenance_fields(event.triples))
            elif isinstance(event, Relayed):
                if req.explain:  # the tool's own service has stored it
                    yield AgentResponse(**explain_fields(event.uri, event.triples, event.graph),
                                        **provenance_fields(event.triples))
            elif isinstance(event, Finished):
                yield AgentResponse(message_type="answer", end_of_message=True, end_of_dialog=True,
                                    in_token=event.usage.in_token, out_token=event.usage.out_token,
                                    model=event.usage.model)


def own_triples(event: Explain) -> list[Triple]:
    """What of an agent step the caller gets inline: the step itself. Upstream's Thought and
    Observation entities written with it are stored only (and referenced): upstream's client reads an
    inline event as one entity, and would take the step for its Thought."""
    return [t for t in event.triples if isinstance(t.s, IriTerm) and t.s.iri == event.uri]


def provenance_fields(triples: list[Triple]) -> dict[str, Any]:
    """An explain event as the query-time-provenance spec's reference event: the IRIs of the nodes
    the step created (the subjects of its triples), in the order they first appear."""
    refs = dict.fromkeys(t.s.iri for t in triples if isinstance(t.s, IriTerm))
    return {"chunk_type": "provenance", "provenance_refs": list(refs)}
