"""The retrieval Protocol (base/retrieval/tools.py) over the bus, once for every answering service:
GraphRAG, Document RAG and search declare the same clients (RetrievingProcessor) and build their
tools from them. A graph-update consumer keeps each process's passage graphs current
(base/retrieval/passage_upkeep.py: only the chunks an update touched are read again)."""

from __future__ import annotations

import base64
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from tracegraph.base.errors import LlmUnavailable, RemoteError, TraceGraphError
from tracegraph.base.flow import Flow
from tracegraph.base.llm.completion import Completion
from tracegraph.base.retrieval.history import HistoryPresence, has_history
from tracegraph.base.retrieval.labels import fetch_labels
from tracegraph.base.retrieval.lookup_cache import LabelCache, VectorCache
from tracegraph.base.retrieval.passage_graph import PassageGraph
from tracegraph.base.retrieval.passage_upkeep import PassageGraphCache
from tracegraph.base.retrieval.tools import RetrievedChunk
from tracegraph.base.specs import Client, Consumer
from tracegraph.flow.answering import RagProcessor
from tracegraph.schemas.embeddings import (
    MAX_VECTOR_IDS, EmbeddingsRequest, PassageKeywordRequest, PassageKeywordResponse, VectorQueryRequest, VectorQueryResponse,
)
from tracegraph.schemas.library import DocumentMetadata, LibrarianRequest
from tracegraph.schemas.llm import TextCompletionRequest
from tracegraph.schemas.rdf import IriTerm, Term, Triple
from tracegraph.schemas.retrieval import RagRequest
from tracegraph.schemas.search import GraphUpdate, KeywordMatch, KeywordQueryRequest, KeywordQueryResponse
from tracegraph.schemas.triples import (
    MAX_AROUND_NODES, MAX_AROUND_TRIPLES, SparqlQueryRequest, SparqlQueryResponse, TriplesQueryRequest,
)

log = logging.getLogger(__name__)
EMBED_BATCH = 256


class RetrievingProcessor(RagProcessor):
    """What every answering service that retrieves declares: entity and passage vectors, BM25 over
    facts and passages, and the graph updates that tell it when a collection's passage graph is stale."""

    graph_embeddings = Client("graph-embeddings", VectorQueryRequest, VectorQueryResponse)
    document_embeddings = Client("document-embeddings", VectorQueryRequest, VectorQueryResponse)
    passage_keywords = Client("passage-keywords", PassageKeywordRequest, PassageKeywordResponse)
    keywords = Client("keyword-query", KeywordQueryRequest, KeywordQueryResponse)
    updates = Consumer("graph-updates", GraphUpdate, prefetch=16)

    async def start(self) -> None:
        self.passage_graphs = PassageGraphCache(self.settings.passage_graph_max_age)
        self._stack.push_async_callback(self.passage_graphs.aclose)
        self.history_presence = HistoryPresence(self.settings.passage_graph_max_age)
        self.label_cache = LabelCache(max_age=self.settings.passage_graph_max_age)
        self.vector_cache = VectorCache(self.settings.retrieval_vector_cache_bytes)
        await super().start()

    @updates.handler
    async def on_graph_update(self, update: GraphUpdate, flow: Flow) -> None:
        scope = (update.metadata.user, update.metadata.collection)
        self.passage_graphs.updated(scope, update)  # applied in the background, chunk by chunk
        self.history_presence.invalidate(scope)
        self.label_cache.invalidate(scope, update.nodes)
        await self.graph_updated(scope, update)

    async def graph_updated(self, scope: tuple[str, str], update: GraphUpdate) -> None:
        """What else a service keeps per collection and must drop when its graph changes."""

    def tools(self, flow: Flow, req: RagRequest) -> "BusRetrievalTools":
        return BusRetrievalTools(self, flow, req)

    def time_of(self, req: RagRequest) -> dict[str, Any]:
        """When the answer stands: the request's as-of date, and its half-life else the setting's."""
        return {"as_of": req.as_of, "half_life_days": req.half_life_days or self.settings.staleness_half_life_days}


class BusRetrievalTools:
    """RetrievalTools over a RetrievingProcessor's clients, for one request's user and collection."""

    embedding_model: str | None = None  # learned from the first embeddings reply, named in traces

    def __init__(self, processor: RetrievingProcessor, flow: Flow, req: RagRequest) -> None:
        self.p, self.flow, self.user, self.collection = processor, flow, req.user, req.collection

    async def passage_graph(self) -> PassageGraph:
        return await self.p.passage_graphs.get((self.user, self.collection), self)

    async def has_history(self) -> bool:
        """Asked once per collection, until a graph update (see HistoryPresence)."""
        return await self.p.history_presence.get((self.user, self.collection), lambda: has_history(self))

    async def embed(self, texts: Sequence[str]) -> list[Sequence[float]]:
        """Vectors as float32 rows; a text this process embedded for the collection before is not sent again."""
        return await self.p.vector_cache.embed((self.user, self.collection), texts, self._embed)

    async def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), EMBED_BATCH):
            reply = await self.flow[self.p.embeddings].request(
                EmbeddingsRequest(texts=list(texts[start:start + EMBED_BATCH])))
            vectors += reply.vectors
            self.embedding_model = reply.model or self.embedding_model
        return vectors

    async def nearest_entities(self, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        reply = await self.flow[self.p.graph_embeddings].request(VectorQueryRequest(
            vector=list(vector), limit=limit, user=self.user, collection=self.collection))
        return [(m.id, m.score) for m in reply.matches]

    async def nearest_chunks(self, vector: Sequence[float], limit: int) -> list[RetrievedChunk]:
        return await self._chunks(VectorQueryRequest(vector=list(vector), limit=limit, user=self.user,
                                                     collection=self.collection))

    async def chunks(self, uris: Sequence[str], with_vectors: bool = False) -> list[RetrievedChunk]:
        """In requests of at most MAX_VECTOR_IDS ids, the most one request may name; `with_vectors`
        brings the stored vectors too (a reader that needs them need not embed the texts again)."""
        found: list[RetrievedChunk] = []
        for start in range(0, len(uris), MAX_VECTOR_IDS):
            part = list(uris[start:start + MAX_VECTOR_IDS])
            found += await self._chunks(VectorQueryRequest(ids=part, limit=len(part), user=self.user,
                                                           collection=self.collection, with_vectors=with_vectors))
        return found

    async def _chunks(self, req: VectorQueryRequest) -> list[RetrievedChunk]:
        reply = await self.flow[self.p.document_embeddings].request(req)
        return [RetrievedChunk(m.id, m.score, m.text or "", m.document, m.vector) for m in reply.matches]

    async def keyword_chunks(self, text: str, limit: int) -> list[RetrievedChunk]:
        reply = await self.flow[self.p.passage_keywords].request(PassageKeywordRequest(
            query=text, limit=limit, user=self.user, collection=self.collection))
        return [RetrievedChunk(m.id, m.score, "", m.document) for m in reply.matches]

    async def keyword(self, text: str, limit: int) -> list[KeywordMatch]:
        reply = await self.flow[self.p.keywords].request(KeywordQueryRequest(
            query=text, limit=limit, user=self.user, collection=self.collection))
        return reply.matches

    async def match(self, s: Term | None = None, p: IriTerm | None = None, o: Term | None = None,
                    g: str | None = None, limit: int = 100) -> list[Triple]:
        reply = await self.flow[self.p.triples].request(TriplesQueryRequest(
            s=s, p=p, o=o, g=g, limit=limit, user=self.user, collection=self.collection))
        return reply.triples

    async def around(self, nodes: Sequence[str], limit: int) -> list[Triple]:
        found: list[Triple] = []
        per_request = max(1, min(MAX_AROUND_NODES, MAX_AROUND_TRIPLES // (2 * limit)))
        for start in range(0, len(nodes), per_request):
            reply = await self.flow[self.p.triples].request(TriplesQueryRequest(
                around=list(nodes[start:start + per_request]), limit=limit, user=self.user,
                collection=self.collection))
            found += reply.triples
        return found

    async def sparql(self, query: str, *, limit: int, timeout: float) -> SparqlQueryResponse:
        return await self.flow[self.p.sparql].request(SparqlQueryRequest(
            query=query, limit=limit, timeout=timeout, user=self.user, collection=self.collection))

    async def labels(self, iris: Sequence[str]) -> dict[str, str]:
        """Cached per collection (see LabelCache); the rest are fetched."""
        return await self.p.label_cache.labels((self.user, self.collection), iris,
                                              lambda wanted: fetch_labels(self, wanted))

    async def complete(self, system: str, prompt: str) -> Completion:
        try:
            reply = await self.flow[self.p.completion].request(TextCompletionRequest(system=system, prompt=prompt))
        except RemoteError as exc:
            raise (LlmUnavailable(exc.message) if exc.type == "llm-unavailable" else exc) from None
        return Completion(reply.response, reply.model, reply.in_token, reply.out_token)

    async def stream(self, system: str, prompt: str) -> AsyncIterator[str | Completion]:
        pieces: list[str] = []
        try:
            async for reply in self.flow[self.p.completion].stream(
                    TextCompletionRequest(system=system, prompt=prompt, streaming=True)):
                if reply.response:
                    pieces.append(reply.response)
                    yield reply.response
                if reply.end_of_stream:
                    yield Completion("".join(pieces), reply.model, reply.in_token, reply.out_token)
        except RemoteError as exc:
            raise (LlmUnavailable(exc.message) if exc.type == "llm-unavailable" else exc) from None

    async def save_answer(self, document_id: str, title: str, text: str, document_type: str = "answer") -> bool:
        try:
            await self.flow[self.p.librarian].request(LibrarianRequest(
                operation="add-document", user=self.user, collection=self.collection,
                content=base64.b64encode(text.encode()).decode(),
                document_metadata=DocumentMetadata(id=document_id, kind="text/plain", title=title,
                                                   document_type=document_type, collection=self.collection)))
            return True
        except TraceGraphError:
            return False  # the trace then has no tg:document, as upstream does
