"""Submitting many documents with a bounded number of round trips in flight: enough to keep the gateway
and librarian busy, never so many that a large folder floods them (each in-flight submission holds a
whole document in memory, and a backlog slows every round trip down)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_IN_FLIGHT = 8


def in_flight_count(text: str) -> int:
    """argparse type of --in-flight: a whole number of at least 1.

    >>> in_flight_count("4")
    4
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


async def submit_bounded(items: Sequence[T], in_flight: int, submit: Callable[[T], Awaitable[R]],
                         on_done: Callable[[T, R], None] | None = None) -> list[R]:
    """`submit(item)` for every item, at most `in_flight` at once; the results in the items' order.
    `on_done(item, result)` hears each as it completes. The first failure cancels the submissions still
    running and is raised (those already done stay done)."""
    results: dict[int, R] = {}
    pending = iter(enumerate(items))

    async def worker() -> None:
        for index, item in pending:  # the workers share one iterator: each item is taken once
            result = await submit(item)
            results[index] = result
            if on_done is not None:
                on_done(item, result)

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(max(1, in_flight), len(items))):
                group.create_task(worker())
    except ExceptionGroup as failed:  # the first failure, as a sequential loop would have raised it
        raise failed.exceptions[0] from None
    return [results[index] for index in range(len(items))]
