"""The retrieval Protocol (base/retrieval/tools.py) over stores opened in this process, not over
the bus: for the retrieval benchmarks and the pipelines' unit tests, which measure retrieval
itself, without messaging."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from tracegraph.base.errors import LlmUnavailable, QueryError, RemoteError
from tracegraph.base.llm.completion import Completion
from tracegraph.base.retrieval import passage_graph
from tracegraph.base.retrieval.history import has_history
from tracegraph.base.retrieval.labels import fetch_labels
from tracegraph.base.retrieval.lookup_cache import LabelCache, VectorCache
from tracegraph.base.retrieval.tools import RetrievedChunk
from tracegraph.base.stores.keyword import KeywordIndex
from tracegraph.base.stores.passages import PassageIndex
from tracegraph.base.stores.protocol import CollectionRef, TripleStore, VectorStore
from tracegraph.schemas.rdf import IriTerm, Term, Triple
from tracegraph.schemas.search import KeywordMatch
from tracegraph.schemas.triples import SparqlQueryResponse

SCOPE = ("local", "tools")  # one collection per tools object
Complete = Callable[[str, str], Awaitable[Completion]]


class LocalRetrievalTools:
    """`complete` is the LLM (None: none configured, the pipelines work offline). `entity_vectors` and
    `chunk_vectors` may be one store or two (the processors keep a folder each). `cached` keeps labels
    and edge-text vectors between questions, as the services do."""

    def __init__(self, ref: CollectionRef, triples: TripleStore, entity_vectors: VectorStore,
                 keywords: KeywordIndex | None = None, embedder=None, complete: Complete | None = None, *,
                 chunk_vectors: VectorStore | None = None, passages: PassageIndex | None = None,
                 cached: bool = False) -> None:
        self.ref, self.triples, self.keywords, self.passages = ref, triples, keywords, passages
        self.entity_vectors, self.chunk_vectors = entity_vectors, chunk_vectors or entity_vectors
        self.embedder, self._complete = embedder, complete
        self.embedding_model = getattr(embedder, "name", None)
        self.saved: dict[str, str] = {}
        self._graph: passage_graph.PassageGraph | None = None
        self._history: bool | None = None
        # As the answering services keep them (flow/retrieval_tools.py); for a collection that does not
        # change while these tools are used, as in a benchmark.
        self.label_cache = LabelCache() if cached else None
        self.vector_cache = VectorCache() if cached else None

    async def passage_graph(self) -> passage_graph.PassageGraph:
        """Built once per tools object: a benchmark asks many questions of a collection that does not change."""
        if self._graph is None:
            self._graph = await passage_graph.load(self)
        return self._graph

    async def has_history(self) -> bool:
        """Asked once per tools object, as the passage graph is built once."""
        if self._history is None:
            self._history = await has_history(self)
        return self._history

    async def embed(self, texts: Sequence[str]) -> list[Sequence[float]]:
        if self.vector_cache is None:
            return [list(v) for v in await self.embedder.embed(list(texts))]
        return await self.vector_cache.embed(SCOPE, texts, self.embedder.embed)

    async def nearest_entities(self, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        return [(h.id, h.score) for h in await self.entity_vectors.search(self.ref, "entity", vector, limit)]

    async def nearest_chunks(self, vector: Sequence[float], limit: int) -> list[RetrievedChunk]:
        return [RetrievedChunk(h.id, h.score, h.payload.get("text", ""), h.payload.get("document"))
                for h in await self.chunk_vectors.search(self.ref, "chunk", vector, limit)]

    async def chunks(self, uris: Sequence[str]) -> list[RetrievedChunk]:
        return [RetrievedChunk(h.id, 0.0, h.payload.get("text", ""), h.payload.get("document"))
                for h in await self.chunk_vectors.get(self.ref, "chunk", uris)]

    async def keyword_chunks(self, text: str, limit: int) -> list[RetrievedChunk]:
        if self.passages is None:
            return []
        return [RetrievedChunk(h.id, h.score, "", h.document) for h in await self.passages.search(self.ref, text, limit)]

    async def match(self, s: Term | None = None, p: IriTerm | None = None, o: Term | None = None,
                    g: str | None = None, limit: int = 100) -> list[Triple]:
        return await self.triples.match(self.ref, s, p, o, g, limit)

    async def around(self, nodes: Sequence[str], limit: int) -> list[Triple]:
        return await self.triples.around(self.ref, nodes, limit)

    async def labels(self, iris: Sequence[str]) -> dict[str, str]:
        if self.label_cache is None:
            return await fetch_labels(self, iris)
        return await self.label_cache.labels(SCOPE, iris, lambda wanted: fetch_labels(self, wanted))

    async def keyword(self, text: str, limit: int) -> list[KeywordMatch]:
        if self.keywords is None:
            return []
        return [KeywordMatch(triple=h.triple, text=h.text, score=h.score)
                for h in await self.keywords.search(self.ref, text, limit)]

    async def sparql(self, query: str, *, limit: int, timeout: float) -> SparqlQueryResponse:
        try:
            result = await self.triples.query(self.ref, query, limit=limit, timeout=timeout)
        except QueryError as exc:
            raise RemoteError("bad-query", str(exc)) from exc
        return SparqlQueryResponse(kind=result.kind, variables=list(result.variables),
                                   bindings=[dict(r) for r in result.rows], boolean=result.boolean,
                                   triples=list(result.triples), truncated=result.truncated)

    async def complete(self, system: str, prompt: str) -> Completion:
        if self._complete is None:
            raise LlmUnavailable("no LLM configured")
        return await self._complete(system, prompt)

    async def stream(self, system: str, prompt: str) -> AsyncIterator[str | Completion]:
        done = await self.complete(system, prompt)
        yield done.text
        yield done

    async def save_answer(self, document_id: str, title: str, text: str, document_type: str = "answer") -> bool:
        self.saved[document_id] = text
        return True
