"""Questions first: a request's priority, and the scheduler a service runs its requests by.

A caller marks its requests `bulk` (ingest, derived structures) or leaves them unmarked, which
means `interactive` (questions), so a caller that knows nothing of priorities is never slowed.
A service runs at most `slots` requests at once and bulk ones in at most `slots - 1` of them, so
one slot is always free for a question; waiting requests start interactive first, then in the
order they came. A request still waiting when its caller's patience runs out is refused as busy
(`unavailable`, with a retry-after hint) instead of being worked on for a caller long gone.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Literal

from tracegraph.base.errors import ServiceUnavailable

Priority = Literal["interactive", "bulk"]
INTERACTIVE: Priority = "interactive"
BULK: Priority = "bulk"
PRIORITY = "priority"  # request property; absent means interactive
PATIENCE = "patience"  # request property: seconds the caller waits for a first response
QUEUE_SHARE = 0.5  # share of the caller's patience a request may spend waiting for a slot
_RANK = {INTERACTIVE: 0, BULK: 1}
_serving: ContextVar[Priority] = ContextVar("serving", default=INTERACTIVE)


def current_priority() -> Priority:
    """The priority of the request this task is working for (interactive outside any `turn`), so
    shared resources below the service (the embedding model's threads) can order work by it too."""
    return _serving.get()


def priority_of(properties: Mapping[str, str]) -> Priority:
    """The priority a request was sent with; anything unmarked or unknown is interactive."""
    return BULK if properties.get(PRIORITY) == BULK else INTERACTIVE


def queue_patience(properties: Mapping[str, str]) -> float | None:
    """Seconds a request may wait for a slot: a share of its caller's patience (None: unbounded)."""
    try:
        seconds = float(properties[PATIENCE])
    except (KeyError, ValueError):
        return None
    return seconds * QUEUE_SHARE if math.isfinite(seconds) and seconds > 0 else None


class Busy(ServiceUnavailable):
    """Every slot stayed taken for as long as the caller could wait: try again a little later."""

    def __init__(self, service: str, waited: float, retry_after: float) -> None:
        self.retry_after = max(1, math.ceil(retry_after))
        super().__init__(f"{service} is busy: the request waited {waited:.1f}s for a free slot; "
                         f"retry after {self.retry_after}s")


class PriorityScheduler:
    """Admits at most `slots` requests at once, interactive ones ahead of bulk ones, and bulk
    ones into at most `slots - reserved` (at least one: bulk work must still progress)."""

    def __init__(self, slots: int, name: str = "service", reserved: int = 1) -> None:
        self.slots = max(1, slots)
        self.bulk_slots = max(1, self.slots - reserved)
        self.name = name
        self.running: dict[Priority, int] = {INTERACTIVE: 0, BULK: 0}
        self._waiting: list[tuple[int, int, Priority, asyncio.Future[None]]] = []  # a heap
        self._order = itertools.count()

    @property
    def waiting(self) -> int:
        return sum(not future.done() for *_, future in self._waiting)

    @asynccontextmanager
    async def turn(self, priority: Priority, patience: float | None = None) -> AsyncIterator[None]:
        """Hold a slot for the body; Busy when none came within `patience` seconds."""
        await self._admit(priority, patience)
        serving = _serving.set(priority)
        try:
            yield
        finally:
            _serving.reset(serving)
            self._release(priority)

    def _fits(self, priority: Priority) -> bool:
        busy = self.running[INTERACTIVE] + self.running[BULK]
        return busy < self.slots and (priority == INTERACTIVE or self.running[BULK] < self.bulk_slots)

    async def _admit(self, priority: Priority, patience: float | None) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (_RANK[priority], next(self._order), priority, future))
        self._wake()
        if future.done():  # a slot was free and nobody of this rank or higher was waiting
            return
        began = asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout(patience):
                await asyncio.shield(future)
        except TimeoutError:
            if not future.done():
                future.cancel()
                self._wake()  # a bulk request behind this one may fit now
                waited = asyncio.get_running_loop().time() - began
                raise Busy(self.name, waited, retry_after=waited) from None
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release(priority)  # admitted just as it was cancelled: give the slot back
            else:
                future.cancel()
                self._wake()
            raise

    def _release(self, priority: Priority) -> None:
        self.running[priority] -= 1
        self._wake()

    def _wake(self) -> None:
        """Admit waiting requests in order while they fit; a bulk one that does not fit stops the
        walk (everything behind it is bulk too)."""
        while self._waiting:
            _, _, priority, future = self._waiting[0]
            if future.done():  # given up on while waiting
                heapq.heappop(self._waiting)
                continue
            if not self._fits(priority):
                return
            heapq.heappop(self._waiting)
            self.running[priority] += 1
            future.set_result(None)
