"""A small knowledge graph with extraction provenance, and GraphRagTools over a real on-disk store,
the bundled embedding model and a scripted LLM: the pipeline tested without a bus."""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from tracegraph.base.errors import LlmUnavailable
from tracegraph.base.llm.completion import Completion
from tracegraph.base.llm.local_embed import LocalEmbedder
from tracegraph.base.provenance.extraction import Component, chunk_triples, document_triples, subgraph_triples
from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import RDFS
from tracegraph.base.stores.keyword import KeywordIndex
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import CollectionRef, TripleStore, VectorItem
from tracegraph.base.stores.qdrant import QdrantVectorStore
from tracegraph.base.retrieval import passage_graph
from tracegraph.base.retrieval.passage_graph import PassageGraph
from tracegraph.base.retrieval.tools import RetrievedChunk
from tracegraph.schemas.triples import SparqlQueryResponse
from tracegraph.schemas.rdf import IriTerm, Term, Triple, iri, literal

REF = CollectionRef("default", "default")


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
DOC = "urn:trustgraph:doc:helios"
CHUNK = "urn:chunk:helios-1"
SUBGRAPH = "https://trustgraph.ai/subgraph/helios-1"
FACTS = [("Helios Grid", "depends on", "Corvid Analytics"), ("Corvid Analytics", "was acquired by", "Tarn Holdings"),
         ("Meridian Dam", "supplies water to", "Sable Water Authority"), ("Tarn Holdings", "owns", "Orbis Systems")]
COMPONENT = Component("test", "1")


def fact(s: str, p: str, o: str) -> Triple:
    return Triple(s=iri(entity_uri(s)), p=iri(relation_uri(p)), o=iri(entity_uri(o)))


def knowledge() -> list[Triple]:
    facts = [fact(*f) for f in FACTS]
    labels = {entity_uri(x): x for s, _, o in FACTS for x in (s, o)} | {relation_uri(p): p for _, p, _ in FACTS}
    out = facts + [Triple(s=iri(u), p=RDFS.label, o=literal(l)) for u, l in labels.items()]
    out += document_triples(DOC, title="Helios Grid annual report", mime_type="text/plain", date="2026-01-01T00:00:00Z")
    out += chunk_triples(CHUNK, DOC, index=1, char_offset=0, char_length=100, chunk_size=1000, chunk_overlap=100,
                         component=COMPONENT, timestamp="2026-01-01T00:00:00Z")
    out += subgraph_triples(SUBGRAPH, CHUNK, facts, component=COMPONENT, timestamp="2026-01-01T00:00:00Z",
                            extractor="offline")
    return out


class StoreTools:
    """GraphRagTools over a real TripleStore; `replies` scripts the LLM (None = no LLM configured)."""

    def __init__(self, store: TripleStore, embedder: LocalEmbedder, replies: list | None = None) -> None:
        self.store, self.embedder, self.replies = store, embedder, replies
        self.prompts: list[tuple[str, str]] = []
        self.saved: dict[str, str] = {}

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.embedder.embed(list(texts))

    async def nearest_entities(self, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        labels = [t for t in await self.store.match(REF, p=RDFS.label, limit=1000) if "/e/" in t.s.iri]
        vectors = await self.embedder.embed([t.o.value for t in labels])
        ranked = sorted(((cosine(vector, v), t.s.iri) for t, v in zip(labels, vectors)), reverse=True)
        return [(entity, score) for score, entity in ranked[:limit]]

    async def match(self, s: Term | None = None, p: IriTerm | None = None, o: Term | None = None,
                    g: str | None = None, limit: int = 100) -> list[Triple]:
        return await self.store.match(REF, s, p, o, g, limit)

    async def around(self, nodes: Sequence[str], limit: int) -> list[Triple]:
        return await self.store.around(REF, nodes, limit)

    async def nearest_chunks(self, vector: Sequence[float], limit: int) -> list[RetrievedChunk]:
        return []  # this graph has no chunk vectors; ChunkTools (Document RAG's tests) adds them

    async def chunks(self, uris: Sequence[str]) -> list[RetrievedChunk]:
        return []

    async def keyword_chunks(self, text: str, limit: int) -> list[RetrievedChunk]:
        return []

    async def keyword(self, text: str, limit: int) -> list:
        return []  # no keyword index over this graph's facts

    async def sparql(self, query: str, *, limit: int, timeout: float) -> SparqlQueryResponse:
        result = await self.store.query(REF, query, limit=limit, timeout=timeout)
        return SparqlQueryResponse(kind=result.kind, variables=list(result.variables),
                                   bindings=[dict(r) for r in result.rows], boolean=result.boolean,
                                   triples=list(result.triples), truncated=result.truncated)

    async def passage_graph(self) -> PassageGraph:
        return await passage_graph.load(self)

    async def labels(self, iris: Sequence[str]) -> dict[str, str]:
        found = {}
        for value in iris:
            hits = await self.store.match(REF, s=iri(value), p=RDFS.label, limit=1)
            if hits:
                found[value] = hits[0].o.value
        return found

    def _next(self, system: str, prompt: str):
        if self.replies is None:
            raise LlmUnavailable("no LLM configured")
        self.prompts.append((system, prompt))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply(prompt) if callable(reply) else reply

    async def complete(self, system: str, prompt: str) -> Completion:
        return Completion(self._next(system, prompt), "scripted", in_token=10, out_token=5)

    async def stream(self, system: str, prompt: str) -> AsyncIterator[str | Completion]:
        text = self._next(system, prompt)
        for word in text.split(" "):
            yield word + " "
        yield Completion(text, "scripted", in_token=20, out_token=8)

    async def save_answer(self, document_id: str, title: str, text: str, document_type: str = "answer") -> bool:
        self.saved[document_id] = text
        return True


@contextlib.asynccontextmanager
async def knowledge_store(folder: Path) -> AsyncIterator[OxigraphTripleStore]:
    """An on-disk triple store holding `knowledge()`."""
    store = OxigraphTripleStore(folder)
    await store.add(REF, knowledge())
    try:
        yield store
    finally:
        await store.aclose()


@contextlib.asynccontextmanager
async def search_stores(folder: Path, embedder) -> AsyncIterator[tuple[OxigraphTripleStore, QdrantVectorStore,
                                                                       KeywordIndex]]:
    """The three stores search reads, holding `knowledge()`, its keyword index and its entity vectors."""
    triples = OxigraphTripleStore(folder / "triples")
    vectors = QdrantVectorStore(path=folder / "vectors")
    keywords = KeywordIndex(folder / "keywords")
    try:
        graph = knowledge()
        await triples.add(REF, graph)
        await keywords.apply(REF, added=[t for t in graph if t.g is None])
        names = sorted({x for s, _, o in FACTS for x in (s, o)})
        await vectors.upsert(REF, "entity", [VectorItem(entity_uri(n), v, {"label": n})
                                             for n, v in zip(names, await embedder.embed(names))])
        yield triples, vectors, keywords
    finally:
        for store in (triples, vectors, keywords):
            await store.aclose()
