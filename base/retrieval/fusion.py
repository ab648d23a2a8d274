"""Reciprocal Rank Fusion (RSN-06): score(d) = Σ 1 / (k + rank_i(d)) over the strategies that found d.
Only ranks count, never the strategies' raw scores, so cosine similarities, BM25 scores and graph
weights can be fused without calibrating one against another."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
DEFAULT_K = 60


@dataclass(slots=True)
class Fused(Generic[K]):
    key: K
    score: float
    ranks: dict[str, int] = field(default_factory=dict)  # strategy -> 1-based rank


def reciprocal_rank_fusion(rankings: Mapping[str, Sequence[K]], k: int = DEFAULT_K,
                           weights: Mapping[str, float] | None = None) -> list[Fused[K]]:
    """Fuse each strategy's best-first list; ties keep the order in which candidates were first seen.
    `weights` scale a strategy's votes (weighted RRF; a missing strategy weighs 1).

    >>> [(f.key, round(f.score, 4), f.ranks) for f in reciprocal_rank_fusion({"a": ["x", "y"], "b": ["y"]})]
    [('y', 0.0325, {'a': 2, 'b': 1}), ('x', 0.0164, {'a': 1})]
    """
    if k < 1:
        raise ValueError("RRF k must be at least 1")
    fused: dict[K, Fused[K]] = {}
    for strategy, ranked in rankings.items():
        weight = (weights or {}).get(strategy, 1.0)
        for rank, key in enumerate(dict.fromkeys(ranked), start=1):  # a duplicate counts at its best rank
            entry = fused.setdefault(key, Fused(key, 0.0))
            entry.score += weight / (k + rank)
            entry.ranks[strategy] = rank
    return sorted(fused.values(), key=lambda f: f.score, reverse=True)
