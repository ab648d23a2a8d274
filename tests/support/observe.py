"""Watch a topic from a test: every message of one schema sent on it, decoded, as it comes."""

from __future__ import annotations

import asyncio
import contextlib

from tracegraph.base.bus import codec
from tracegraph.base.bus.topic import Topic


@contextlib.asynccontextmanager
async def observed(backend, topic: str, schema):
    """Every `schema` message sent on `topic` from now on, decoded, in a list that fills as they come."""
    seen = []
    async with backend.subscribe(Topic.parse(topic), "test-observer", prefetch=64, auto_ack=True) as deliveries:
        async def collect() -> None:
            async for delivery in deliveries:
                if delivery.properties.get(codec.SCHEMA) == schema.schema_name:
                    seen.append(codec.decode(delivery.body, delivery.properties, schema))
        task = asyncio.create_task(collect())
        try:
            yield seen
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
