"""A consumer process that takes one message and never settles it, so a test can kill it mid-message."""

import asyncio
import sys

from tracegraph.base.bus.rabbitmq import RabbitMQBackend
from tracegraph.base.bus.topic import Topic


async def main(url: str, topic: str, subscription: str) -> None:
    async with RabbitMQBackend(url) as bus:
        async with bus.subscribe(Topic.parse(topic), subscription, prefetch=1) as deliveries:
            print("ready", flush=True)
            async for delivery in deliveries:
                print("holding", delivery.body.decode(), flush=True)
                await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
