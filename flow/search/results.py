"""What a search answer ends with, whichever way it was found (hybrid, global or RAPTOR): the
confidence block, the evidence and the query type, on top of GraphRAG's Finished step."""

from __future__ import annotations

from dataclasses import dataclass

from tracegraph.base.retrieval.confidence import ConfidenceBlock
from tracegraph.flow.graph_rag.pipeline import Finished
from tracegraph.schemas.rdf import Triple


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    triple: Triple
    text: str
    score: float
    rrf: float
    ranks: dict[str, int]
    sources: list[str]


@dataclass(frozen=True, slots=True)
class SearchFinished(Finished):
    confidence: ConfidenceBlock | None = None
    evidence: tuple[EvidenceItem, ...] = ()
    query_type: str = ""
