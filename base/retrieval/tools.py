"""What retrieval needs from the rest of the system, as one Protocol: embeddings, the nearest
entities and passages, BM25 over facts and over passages, graph patterns, labels, SPARQL and the
LLM. It is implemented twice — over the bus (flow/retrieval_tools.py, for the processors) and over
stores opened in-process (base/retrieval/local.py, for benchmarks and unit tests) — and GraphRAG,
Document RAG and search all compose their retrieval from it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from tracegraph.base.llm.completion import Completion
from tracegraph.schemas.rdf import IriTerm, Term, Triple
from tracegraph.schemas.search import KeywordMatch
from tracegraph.schemas.triples import SparqlQueryResponse


@dataclass(frozen=True, slots=True)
class RetrievedChunk:
    """A passage found by vector or keyword search: its IRI (`urn:chunk:…`), score, text and document id."""

    uri: str
    score: float
    text: str
    document: str | None
    vector: Sequence[float] | None = None  # the stored vector, when asked for (`chunks(..., with_vectors=True)`)


class RetrievalTools(Protocol):
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        ...

    async def nearest_entities(self, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        """(entity IRI, similarity) of the collection's entities nearest to `vector`."""
        ...

    async def nearest_chunks(self, vector: Sequence[float], limit: int) -> list[RetrievedChunk]:
        """The collection's passages nearest to `vector`, most similar first, with their text."""
        ...

    async def chunks(self, uris: Sequence[str]) -> list[RetrievedChunk]:
        """These passages with their text (score 0), in the order asked; unknown ones left out."""
        ...

    async def keyword_chunks(self, text: str, limit: int) -> list[RetrievedChunk]:
        """BM25 over the collection's passages (with their titles), best first; no text."""
        ...

    async def keyword(self, text: str, limit: int) -> list[KeywordMatch]:
        """BM25 over the collection's facts, each as the sentence its labels make."""
        ...

    async def match(self, s: Term | None = None, p: IriTerm | None = None, o: Term | None = None,
                    g: str | None = None, limit: int = 100) -> list[Triple]:
        ...

    async def around(self, nodes: Sequence[str], limit: int) -> list[Triple]:
        """A hop's neighbourhood in one round trip: the default-graph triples whose subject or object is
        one of `nodes`, at most `limit` per node and direction, each once (TripleStore.around)."""
        ...

    async def labels(self, iris: Sequence[str]) -> dict[str, str]:
        """rdfs:label of each IRI that has one, in as few round trips as the store allows."""
        ...

    async def has_history(self) -> bool:
        """Whether the collection keeps any history (urn:graph:history), remembered as long as the
        implementation keeps other per-collection answers. Tools without it are asked each time."""
        ...

    async def sparql(self, query: str, *, limit: int, timeout: float) -> SparqlQueryResponse:
        """Read-only, bounded in rows and seconds; a refused or failed query raises RemoteError."""
        ...

    async def complete(self, system: str, prompt: str) -> Completion:
        """Raises LlmUnavailable when no LLM is configured (the pipeline then works offline)."""
        ...

    def stream(self, system: str, prompt: str) -> AsyncIterator[str | Completion]:
        """Text pieces, then one Completion with token counts."""
        ...

    async def save_answer(self, document_id: str, title: str, text: str, document_type: str = "answer") -> bool:
        """Keep the answer in the librarian; False if it could not be stored."""
        ...
