"""What the GraphRAG pipeline needs from the rest of the system, as one Protocol: the processor
implements it over bus clients, unit tests over an on-disk store and a scripted LLM."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from tracegraph.base.llm.completion import Completion
from tracegraph.schemas.rdf import IriTerm, Term, Triple


class GraphRagTools(Protocol):
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        ...

    async def nearest_entities(self, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        """(entity IRI, similarity) of the collection's entities nearest to `vector`."""
        ...

    async def match(self, s: Term | None = None, p: IriTerm | None = None, o: Term | None = None,
                    g: str | None = None, limit: int = 100) -> list[Triple]:
        ...

    async def labels(self, iris: Sequence[str]) -> dict[str, str]:
        """rdfs:label of each IRI that has one, in as few round trips as the store allows."""
        ...

    async def complete(self, system: str, prompt: str) -> Completion:
        """Raises LlmUnavailable when no LLM is configured (the pipeline then works offline)."""
        ...

    def stream(self, system: str, prompt: str) -> AsyncIterator[str | Completion]:
        """Text pieces, then one Completion with token counts."""
        ...

    async def save_answer(self, document_id: str, title: str, text: str) -> bool:
        """Keep the answer in the librarian; False if it could not be stored."""
        ...
