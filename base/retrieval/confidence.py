"""RSN-11's confidence block, computed from the evidence an answer rests on.

confidence = 0.5 × relevance + 0.2 × agreement + 0.3 × support, times 0.5 after a fallback, where
- relevance: the mean reranker score of the (at most) three best facts, clipped to [0, 1];
- agreement: the share of the used facts that at least two strategies found;
- support: source_density / 3, at most 1 (three independent documents count as well supported).
The warning is raised when source_density ≤ 1, when a strategy fell back, or with no evidence."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

WELL_SUPPORTED = 3


@dataclass(frozen=True, slots=True)
class Support:
    """One used fact: its reranker score, how many strategies found it, its source documents."""

    score: float
    strategies: int
    documents: frozenset[str]
    nodes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ConfidenceBlock:
    confidence: float
    evidence_nodes: list[str]
    source_density: int
    retrieval_strategies_used: list[str]
    low_confidence_warning: bool


def assess(facts: Sequence[Support], strategies_used: Iterable[str], fell_back: bool = False) -> ConfidenceBlock:
    """
    >>> block = assess([Support(0.8, 2, frozenset({"d1", "d2", "d3"}), ("e:a", "e:b"))], ["graph", "bm25"])
    >>> block.confidence, block.source_density, block.low_confidence_warning
    (0.9, 3, False)
    >>> assess([], ["vector"]).low_confidence_warning
    True
    """
    used = list(dict.fromkeys(strategies_used))
    if not facts:
        return ConfidenceBlock(0.0, [], 0, used, True)
    best = sorted((min(max(f.score, 0.0), 1.0) for f in facts), reverse=True)[:3]
    relevance = sum(best) / len(best)
    agreement = sum(1 for f in facts if f.strategies >= 2) / len(facts)
    documents = frozenset().union(*(f.documents for f in facts))
    support = min(1.0, len(documents) / WELL_SUPPORTED)
    confidence = (0.5 * relevance + 0.2 * agreement + 0.3 * support) * (0.5 if fell_back else 1.0)
    nodes = list(dict.fromkeys(n for f in facts for n in f.nodes))
    return ConfidenceBlock(round(confidence, 2), nodes, len(documents), used,
                           len(documents) <= 1 or fell_back)
