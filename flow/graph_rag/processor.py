"""graph-rag over the bus: requests in, GraphRagPipeline out. Explain events go to the caller (inline,
as upstream's client expects) and to the explainability topic (stored by the writer)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

from tracegraph.base.flow import Flow
from tracegraph.base.specs import Service
from tracegraph.flow.graph_rag.pipeline import GraphRagPipeline, Limits
from tracegraph.flow.retrieval_tools import RetrievingProcessor
from tracegraph.schemas.retrieval import GraphRagRequest, GraphRagResponse


class GraphRagProcessor(RetrievingProcessor):
    name = "graph-rag"
    request = Service("request", GraphRagRequest, GraphRagResponse, prefetch=8)

    limits = Limits()

    @request.handler
    async def answer(self, req: GraphRagRequest, flow: Flow) -> AsyncIterator[GraphRagResponse]:
        await self.require_collection(flow, req)
        overrides = {k: v for k, v in {
            "entity_limit": req.entity_limit, "triple_limit": req.triple_limit,
            "max_subgraph_size": req.max_subgraph_size, "max_path_length": req.max_path_length,
            "edge_limit": req.edge_limit}.items() if v is not None}
        pipeline = GraphRagPipeline(self.tools(flow, req), replace(self.limits, **overrides), **self.time_of(req))
        steps = pipeline.run(req.query, streaming=req.streaming, parent_uri=req.parent_uri)
        async for response in self.rag_responses(flow, req, steps, GraphRagResponse):
            yield response
