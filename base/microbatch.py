"""Micro-batching: items that concurrent tasks submit at about the same time, handled in one call.

An embeddings request, a vector upsert or an index commit costs much per call and little per item,
so concurrent handlers are served best by one call for all of them. Each submitter still awaits its
own items, so it is told their result, or the batch's error, before it acknowledges anything.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from tracegraph.base.errors import ConfigError, TransientError

T = TypeVar("T")
R = TypeVar("R")

Flush = Callable[[list[T]], Awaitable[Sequence[R]]]


@dataclass(eq=False, slots=True)
class _Submission(Generic[T, R]):
    items: Sequence[T]
    result: asyncio.Future[list[R]]
    arrived: float


class MicroBatcher(Generic[T, R]):
    """Gathers the items of concurrent `submit()` calls into batches, one `flush(items)` call each.

    A batch leaves `window` seconds after its oldest item arrived, or as soon as `max_items` are
    waiting. A submission is never split, so only a submission larger than `max_items` makes a larger
    batch. At most `concurrency` batches are in flight; meanwhile the next one fills. `flush` returns
    one result per item, in order. When it raises, every submitter of the batch gets the error, except
    that an error `retry_alone(error)` accepts (say, one bad item's) has each submission of the batch
    flushed again on its own, so only the culprit fails. A submitter cancelled before its batch left
    takes its items out of it. Once `aclose()` is called, waiting and new submitters get a TransientError.
    """

    def __init__(self, flush: Flush[T, R], *, window: float, max_items: int, concurrency: int = 1,
                 retry_alone: Callable[[Exception], bool] | None = None, name: str = "micro-batcher") -> None:
        if window < 0 or max_items < 1 or concurrency < 1:
            raise ConfigError(f"{name}: window must be >= 0, max_items and concurrency >= 1 "
                              f"(got {window}, {max_items}, {concurrency})")
        self.window = window
        self.max_items = max_items
        self.name = name
        self._flush = flush
        self._retry_alone = retry_alone
        self._waiting: deque[_Submission[T, R]] = deque()
        self._queued = 0  # items in _waiting
        self._arrival = asyncio.Event()
        self._slots = asyncio.Semaphore(concurrency)
        self._sender: asyncio.Task[None] | None = None
        self._in_flight: set[asyncio.Task[None]] = set()
        self._closed = False
        self.batches = 0  # batches flushed, for figures and tests

    async def submit(self, items: Sequence[T]) -> list[R]:
        """Add `items` to the next batch; their results once it has been flushed."""
        if self._closed:
            raise TransientError(f"{self.name} is closed")
        if not items:
            return []
        loop = asyncio.get_running_loop()
        submission = _Submission(items, loop.create_future(), loop.time())
        self._waiting.append(submission)
        self._queued += len(items)
        self._arrival.set()
        if self._sender is None:
            self._sender = asyncio.create_task(self._send_batches(), name=f"{self.name}:sender")
            self._sender.add_done_callback(self._sender_stopped)
        try:
            return await submission.result
        except asyncio.CancelledError:
            if submission in self._waiting:  # not sent yet: leave it out
                self._waiting.remove(submission)
                self._queued -= len(items)
            raise

    async def aclose(self) -> None:
        """Stop sending; batches in flight are cancelled, and their submitters and those waiting fail."""
        self._closed = True
        tasks = [t for t in (self._sender, *self._in_flight) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._fail_waiting(TransientError(f"{self.name} closed before sending its batch"))

    async def __aenter__(self) -> MicroBatcher[T, R]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send_batches(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            while not self._waiting:
                self._arrival.clear()
                await self._arrival.wait()
            await self._slots.acquire()  # while every slot is busy, the waiting items make a fuller batch
            try:
                await self._fill(loop)
                batch = self._take()
            except BaseException:
                self._slots.release()
                raise
            if not batch:  # all of it was cancelled meanwhile
                self._slots.release()
                continue
            task = asyncio.create_task(self._send(batch), name=f"{self.name}:batch")
            self._in_flight.add(task)
            task.add_done_callback(self._sent)

    async def _fill(self, loop: asyncio.AbstractEventLoop) -> None:
        """Return once `max_items` wait or the oldest waiting item's window has passed."""
        while self._waiting and self._queued < self.max_items:
            left = self._waiting[0].arrived + self.window - loop.time()
            if left <= 0:
                return
            self._arrival.clear()
            try:
                await asyncio.wait_for(self._arrival.wait(), left)
            except TimeoutError:
                return

    def _take(self) -> list[_Submission[T, R]]:
        batch: list[_Submission[T, R]] = []
        count = 0
        while self._waiting:
            submission = self._waiting[0]
            if batch and count + len(submission.items) > self.max_items:
                break
            self._waiting.popleft()
            self._queued -= len(submission.items)
            if not submission.result.done():  # a submitter cancelled a moment ago
                batch.append(submission)
                count += len(submission.items)
        return batch

    async def _send(self, batch: list[_Submission[T, R]]) -> None:
        try:
            try:
                await self._flush_into(batch)
            except Exception as exc:
                if len(batch) == 1 or self._retry_alone is None or not self._retry_alone(exc):
                    raise
                for submission in batch:
                    try:
                        await self._flush_into([submission])
                    except Exception as alone:
                        _settle(submission, error=alone)
        except asyncio.CancelledError:
            for submission in batch:
                _settle(submission, error=TransientError(f"{self.name} closed while sending its batch"))
            raise
        except Exception as exc:
            for submission in batch:
                _settle(submission, error=exc)

    async def _flush_into(self, batch: list[_Submission[T, R]]) -> None:
        """Flush the items of `batch` and hand each submitter its share of the results."""
        items = [item for submission in batch for item in submission.items]
        self.batches += 1
        results = list(await self._flush(items))
        if len(results) != len(items):
            raise ValueError(f"{self.name}: flush returned {len(results)} results for {len(items)} items")
        start = 0
        for submission in batch:
            end = start + len(submission.items)
            _settle(submission, results=results[start:end])
            start = end

    def _sent(self, task: asyncio.Task[None]) -> None:
        self._in_flight.discard(task)
        self._slots.release()

    def _sender_stopped(self, task: asyncio.Task[None]) -> None:
        """The sender ends only when closed; should it ever fail, nobody may be left waiting on it."""
        self._sender = None
        if not task.cancelled() and task.exception() is not None:
            self._fail_waiting(TransientError(f"{self.name} stopped: {task.exception()!r}"))

    def _fail_waiting(self, error: Exception) -> None:
        while self._waiting:
            _settle(self._waiting.popleft(), error=error)
        self._queued = 0


def _settle(submission: _Submission[T, R], *, results: list[R] | None = None,
            error: Exception | None = None) -> None:
    if submission.result.done():  # its submitter was cancelled
        return
    if error is not None:
        submission.result.set_exception(error)
    else:
        submission.result.set_result(results or [])
