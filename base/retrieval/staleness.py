"""How much evidence counts for its age: newer evidence outranks older at equal relevance, and
evidence of a value since superseded counts half again. Pure arithmetic on canonical instants.

Age is counted in whole calendar days, so evidence recorded on the same day (a corpus loaded at
once, with no dates of its own) weighs exactly the same and keeps its relevance order."""

from __future__ import annotations

from datetime import date

HALF_LIFE_DAYS = 365.0  # RuntimeSettings.staleness_half_life_days
SUPERSEDED_FACTOR = 0.5  # a passage that stated a value since superseded, an edge no longer holding


def _day(instant: str) -> date:
    return date.fromisoformat(instant[:10])


def age_days(valid_from: str, at: str) -> int:
    """Whole days from `valid_from` to `at` (canonical instants); 0 when `at` is not later.

    >>> age_days("2024-01-01T23:59:00Z", "2024-01-02T00:01:00Z"), age_days("2025-01-01T00:00:00Z", "2024-01-01T00:00:00Z")
    (1, 0)
    """
    return max(0, (_day(at) - _day(valid_from)).days)


def staleness_weight(valid_from: str | None, at: str, half_life_days: float, superseded: bool = False) -> float:
    """0.5 + 0.5 · 2^(−age / half-life), × SUPERSEDED_FACTOR when superseded; undated evidence
    (`valid_from` None) has no age.

    >>> staleness_weight("2024-01-01T00:00:00Z", "2024-01-01T12:00:00Z", 365)
    1.0
    >>> staleness_weight("2023-01-01T00:00:00Z", "2024-01-01T00:00:00Z", 365)
    0.75
    >>> staleness_weight(None, "2024-01-01T00:00:00Z", 365, superseded=True)
    0.5
    """
    weight = 1.0 if valid_from is None else 0.5 + 0.5 * 2 ** (-age_days(valid_from, at) / half_life_days)
    return weight * SUPERSEDED_FACTOR if superseded else weight


def weighed_score(score: float, weight: float) -> float:
    """A score made lighter by `weight` (0 to 1): multiplied, or divided when it is negative (a
    cross-encoder's logit), so that a lighter weight always lowers it.

    >>> weighed_score(2.0, 0.5), weighed_score(-2.0, 0.5)
    (1.0, -4.0)
    """
    return score * weight if score >= 0 else score / weight
