"""What the Document RAG pipeline needs from the rest of the system, as one Protocol: the processor
implements it over bus clients, unit tests over an on-disk store, the bundled embedder and a scripted LLM."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from tracegraph.base.llm.completion import Completion
from tracegraph.schemas.rdf import IriTerm, Term, Triple


@dataclass(frozen=True, slots=True)
class RetrievedChunk:
    """A chunk found by vector search: its IRI (`urn:chunk:…`), similarity, text and document id."""

    uri: str
    score: float
    text: str
    document: str | None


class DocumentRagTools(Protocol):
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        ...

    async def nearest_chunks(self, vector: Sequence[float], limit: int) -> list[RetrievedChunk]:
        """The collection's chunks nearest to `vector`, most similar first."""
        ...

    async def match(self, s: Term | None = None, p: IriTerm | None = None, o: Term | None = None,
                    g: str | None = None, limit: int = 100) -> list[Triple]:
        ...

    async def complete(self, system: str, prompt: str) -> Completion:
        """Raises LlmUnavailable when no LLM is configured (the pipeline then answers offline)."""
        ...

    def stream(self, system: str, prompt: str) -> AsyncIterator[str | Completion]:
        """Text pieces, then one Completion with token counts."""
        ...

    async def save_answer(self, document_id: str, title: str, text: str) -> bool:
        """Keep the answer in the librarian; False if it could not be stored."""
        ...
