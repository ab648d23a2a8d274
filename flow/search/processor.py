"""search over the bus: the hardened GraphRAG pipeline (flow/search/pipeline.py) answering
SearchRequests, and the cache kept fresh by the triples writer's graph-update events.

With the in-process cache, run one search processor per flow; copies share a subscription, so each
update reaches only one of them. Copies that share Redis (TG_REDIS_URL) stay consistent."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import replace

from tracegraph.base.flow import Flow
from tracegraph.base.retrieval.cache import cache_for
from tracegraph.base.retrieval.rerank import EmbeddingReranker, EndpointReranker
from tracegraph.base.specs import Service
from tracegraph.base.architecture.rules import CodeOwnersShelf
from tracegraph.flow.retrieval_tools import RetrievingProcessor
from tracegraph.flow.search.architecture import architecture_answer
from tracegraph.flow.search.global_search import ReportShelf
from tracegraph.flow.search.pipeline import ANY_CHANGE, RememberedEmbeddings, SearchPipeline
from tracegraph.flow.search.raptor_search import TreeShelf
from tracegraph.flow.search.results import SearchFinished
from tracegraph.flow.search.strategies import Limits
from tracegraph.schemas.architecture import ArchitectureRequest, ArchitectureResponse
from tracegraph.schemas.search import Confidence, Evidence, GraphUpdate, SearchRequest, SearchResponse

log = logging.getLogger(__name__)


class SearchProcessor(RetrievingProcessor):
    name = "search"
    request = Service("request", SearchRequest, SearchResponse, prefetch=8)
    architecture = Service("architecture", ArchitectureRequest, ArchitectureResponse, prefetch=8)

    limits = Limits()

    async def start(self) -> None:
        self.cache = cache_for(self.settings)
        self.shelf, self.tree, self.codeowners = ReportShelf(), TreeShelf(), CodeOwnersShelf()
        self._stack.push_async_callback(self.cache.aclose)
        url = self.settings.rerank_url
        self.cross_encoder = EndpointReranker(url, self.settings.rerank_model) if url else None
        await super().start()

    async def graph_updated(self, scope: tuple[str, str], update: GraphUpdate) -> None:
        self.codeowners.invalidate(scope)
        if update.everything:
            dropped = await self.cache.invalidate_all(scope)
        else:
            dropped = await self.cache.invalidate(scope, [*update.nodes, ANY_CHANGE])
        if dropped:
            log.debug("graph update in %s/%s dropped %d cached result(s)", *scope, dropped)

    @request.handler
    async def answer(self, req: SearchRequest, flow: Flow) -> AsyncIterator[SearchResponse]:
        await self.require_collection(flow, req)
        tools = RememberedEmbeddings(self.tools(flow, req))
        reranker = self.cross_encoder or EmbeddingReranker(tools.embed, lambda: tools.embedding_model)
        weights = tuple(sorted(req.fusion_weights.items())) if req.fusion_weights is not None else None
        overrides = {k: v for k, v in {"top_k": req.top_k, "hops": req.hops, "rrf_k": req.rrf_k,
                                       "fusion_weights": weights}.items() if v is not None}
        pipeline = SearchPipeline(tools, replace(self.limits, **overrides), reranker=reranker,
                                  cache=self.cache if req.use_cache else None, scope=(req.user, req.collection),
                                  strategies=req.strategies, hyde=req.hyde, global_search=req.global_search,
                                  shelf=self.shelf, tree=self.tree, codeowners=self.codeowners,
                                  **self.time_of(req))
        finished: list[SearchFinished] = []

        async def steps():
            async for step in pipeline.run(req.query, streaming=req.streaming, parent_uri=req.parent_uri):
                if isinstance(step, SearchFinished):
                    finished.append(step)
                yield step

        async for response in self.rag_responses(flow, req, steps(), SearchResponse, stream_end="end"):
            if response.end_of_session and finished:
                response = response.model_copy(update=final_fields(finished[0]))
            yield response


    @architecture.handler
    async def architecture_request(self, req: ArchitectureRequest, flow: Flow) -> AsyncIterator[ArchitectureResponse]:
        """Ownership, dependencies, memory about one entity, or an intent check (see flow/search/architecture.py)."""
        if req.operation != "intent-check":
            await self.require_collection(flow, req)
        yield await architecture_answer(req, self.tools(flow, req), self.codeowners,
                                        half_life_days=self.settings.staleness_half_life_days)


def final_fields(done: SearchFinished) -> dict:
    """The confidence block, the evidence and the query type, on the last message of an answer."""
    block = done.confidence
    return {
        "query_type": done.query_type,
        "confidence": Confidence(confidence=block.confidence, evidence_nodes=block.evidence_nodes,
                                 source_density=block.source_density,
                                 retrieval_strategies_used=block.retrieval_strategies_used,
                                 low_confidence_warning=block.low_confidence_warning,
                                 warning_reasons=list(block.warning_reasons)) if block else None,
        "evidence": [Evidence(triple=e.triple, text=e.text, score=round(e.score, 4), rrf=round(e.rrf, 5),
                              ranks=e.ranks, sources=e.sources) for e in done.evidence],
    }
