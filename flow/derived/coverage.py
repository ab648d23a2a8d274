"""How much of its collection a derived structure covers: the collection's passages (or entities) against
those the structure places. Cheap to work out from what is stored, so the processors compare the two
periodically and repair a gap that a given-up message or a long outage left behind."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

CURRENT, BEHIND, REPAIRING = "current", "behind", "repairing"


@dataclass(frozen=True)
class Coverage:
    """`wanted`: what the collection holds now (passages or entities); `held`: what the structure places."""

    kind: str
    wanted: frozenset[str]
    held: frozenset[str]

    @classmethod
    def of(cls, kind: str, wanted: Iterable[str], held: Iterable[str]) -> "Coverage":
        return cls(kind, frozenset(wanted), frozenset(held))

    @property
    def missing(self) -> frozenset[str]:
        """In the collection, not in the structure."""
        return self.wanted - self.held

    @property
    def extra(self) -> frozenset[str]:
        """In the structure, gone from the collection."""
        return self.held - self.wanted

    @property
    def complete(self) -> bool:
        return self.wanted == self.held

    def counts(self) -> dict[str, int]:
        """For the status answer: how many are covered, of how many."""
        return {f"{self.kind}-covered": len(self.wanted & self.held), f"{self.kind}-total": len(self.wanted),
                f"{self.kind}-gone-but-kept": len(self.extra)}

    def describe(self) -> str:
        return (f"{len(self.wanted & self.held):,} of {len(self.wanted):,} {self.kind} covered, "
                f"{len(self.extra):,} gone but kept")


def state_of(coverage: Coverage, repairing: bool) -> str:
    """current, behind, or repairing (a repair of a gap is running)."""
    if repairing:
        return REPAIRING
    return CURRENT if coverage.complete else BEHIND
