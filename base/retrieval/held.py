"""A structure each collection keeps in its graph (community reports, a RAPTOR tree, CODEOWNERS rules),
read once and kept `max_age` seconds: it changes only when the collection does, and reading it costs a
query and decoding. Subclasses say how it is read."""

from __future__ import annotations

import time
from typing import Generic, TypeVar

T = TypeVar("T")


class Shelf(Generic[T]):
    def __init__(self, max_age: float = 15.0) -> None:
        self.max_age = max_age
        self._held: dict[tuple[str, str], tuple[float, T]] = {}

    async def held(self, scope: tuple[str, str], source) -> T:
        """The collection's structure, read from `source` (what `read` takes) when not held or too old."""
        kept = self._held.get(scope)
        if kept and time.monotonic() - kept[0] < self.max_age:
            return kept[1]
        value = await self.read(source)
        self._held[scope] = (time.monotonic(), value)
        return value

    def invalidate(self, scope: tuple[str, str]) -> None:
        """Read it again next time (the collection changed)."""
        self._held.pop(scope, None)

    async def read(self, source) -> T:
        raise NotImplementedError
