"""What the search pipeline needs beyond GraphRAG's tools: the keyword index and SPARQL with a
timeout, over the search processor's bus clients."""

from __future__ import annotations

from collections.abc import Sequence

from tracegraph.flow.graph_rag.processor import BusTools
from tracegraph.schemas.embeddings import EmbeddingsRequest
from tracegraph.schemas.search import KeywordMatch, KeywordQueryRequest
from tracegraph.schemas.triples import SparqlQueryRequest, SparqlQueryResponse


class SearchBusTools(BusTools):
    embedding_model: str | None = None  # learned from the first embeddings reply, named in the trace

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), 256):
            reply = await self.flow[self.p.embeddings].request(EmbeddingsRequest(texts=list(texts[start:start + 256])))
            vectors += reply.vectors
            self.embedding_model = reply.model or self.embedding_model
        return vectors

    async def keyword(self, text: str, limit: int) -> list[KeywordMatch]:
        reply = await self.flow[self.p.keywords].request(KeywordQueryRequest(
            query=text, limit=limit, user=self.user, collection=self.collection))
        return reply.matches

    async def sparql(self, query: str, *, limit: int, timeout: float) -> SparqlQueryResponse:
        """Read-only, bounded in rows and seconds; a refused or failed query raises RemoteError."""
        return await self.flow[self.p.sparql].request(SparqlQueryRequest(
            query=query, limit=limit, timeout=timeout, user=self.user, collection=self.collection))
