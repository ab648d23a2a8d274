"""Which edges mean ownership and which mean dependency, read from the predicate's words: extraction
writes predicates as the text phrased them ("is owned by", "also uses", "runs on"), so a predicate
counts when it ends with one of the verb phrases, active ("X owns Y") or passive ("Y is owned by X")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from tracegraph.base.stores.keyword import readable

OWNERSHIP = (
    "owns", "maintains", "leads", "manages", "runs", "operates", "heads", "oversees", "administers",
    "looks after", "is responsible for", "is accountable for", "is the owner of", "is owner of",
    "is the lead of", "is the maintainer of",
)
DEPENDENCY = (
    "depends on", "calls", "uses", "imports", "runs on", "relies on", "reads from", "writes to", "needs",
    "requires", "consumes", "queries", "connects to", "talks to", "publishes to", "subscribes to", "invokes",
)
_PASSIVE = {
    "owns": "owned by", "maintains": "maintained by", "leads": "led by", "manages": "managed by", "runs": "run by",
    "operates": "operated by", "heads": "headed by", "oversees": "overseen by", "administers": "administered by",
    "looks after": "looked after by", "uses": "used by", "calls": "called by", "imports": "imported by",
    "relies on": "relied on by", "depends on": "depended on by", "needs": "needed by", "requires": "required by",
    "consumes": "consumed by", "queries": "queried by", "invokes": "invoked by", "reads from": "read by",
}


@dataclass(frozen=True, slots=True)
class Verbs:
    """A set of verb phrases and their passive forms: `voice` says how a predicate relates its ends."""

    active: tuple[str, ...]

    @property
    def passive(self) -> tuple[str, ...]:
        return tuple(_PASSIVE[verb] for verb in self.active if verb in _PASSIVE)

    @property
    def endings(self) -> tuple[str, ...]:
        """Every phrase a predicate of these verbs ends with, active or passive."""
        return (*self.active, *self.passive)

    def voice(self, predicate: str) -> Literal["active", "passive"] | None:
        """"active" when the subject does it ("Skyline depends on X"), "passive" when it is done to the
        subject ("Skyline is owned by X"), None when the predicate is neither.

        >>> v = Verbs(OWNERSHIP)
        >>> v.voice("https://trustgraph.ai/r/is-owned-by"), v.voice("https://trustgraph.ai/r/runs-on"), v.voice("leads")
        ('passive', None, 'active')
        """
        words = f" {readable(predicate).lower()} " if "/" in predicate or ":" in predicate else f" {predicate.lower()} "
        if any(words.endswith(f" {form} ") for form in self.passive):
            return "passive"
        if any(words.endswith(f" {form} ") for form in self.active) and " by " not in words:
            return "active"
        return None


def verbs(given: Iterable[str] = (), default: tuple[str, ...] = DEPENDENCY) -> Verbs:
    """The verbs a request names (lower-cased, blanks dropped), else the default set."""
    chosen = tuple(dict.fromkeys(" ".join(v.lower().split()) for v in given if v.strip()))
    return Verbs(chosen or default)
