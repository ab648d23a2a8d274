"""`Backend.backlog`: the messages a subscription still has to take, counted by the broker itself
(what `tg-show-processing` shows per stage), or None where the broker cannot tell (Pulsar)."""

from __future__ import annotations

import asyncio

import pytest

from support.names import unique
from tracegraph.base.bus.topic import Topic

pytestmark = pytest.mark.timeout(60)


async def eventually(bus, topic: Topic, subscription: str, wanted: int) -> int | None:
    """The backlog once it reads `wanted` (a broker may count a publish a moment after confirming it)."""
    for _ in range(100):
        found = await bus.backlog(topic, subscription)
        if found is None or found == wanted:
            return found
        await asyncio.sleep(0.05)
    return found


async def test_backlog_counts_waiting_messages_and_drops_to_zero_once_taken(connect):
    bus = await connect()
    topic = Topic.parse(f"persistent://tg/flow/{unique('backlog')}:default")
    assert await bus.backlog(topic, "nobody") in (0, None)  # no such subscription: nothing waits
    async with bus.subscribe(topic, "stage"):
        pass  # the subscription exists now and keeps what is published while nobody reads
    for i in range(3):
        await bus.publish(topic, str(i).encode(), {})
    waiting = await eventually(bus, topic, "stage", 3)
    if waiting is None:
        pytest.skip("this broker cannot count a backlog (the contract allows None)")
    assert waiting == 3
    async with bus.subscribe(topic, "stage") as deliveries:
        for _ in range(3):
            await (await anext(deliveries)).ack()
    assert await eventually(bus, topic, "stage", 0) == 0
