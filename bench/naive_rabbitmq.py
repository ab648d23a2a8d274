"""The straightforward aio-pika design the bus aims are stated against, measured in the same run:
prefetch 1, every publish awaiting its own confirm, one message at a time on the one-way path."""

from __future__ import annotations

import asyncio
import time
import uuid

import aio_pika


async def round_trips(url: str, concurrency: int, seconds: float, body: bytes) -> float:
    """Round trips/s: a reply-to queue per client, a server consuming with prefetch 1."""
    connection = await aio_pika.connect_robust(url)
    async with connection:
        server = await connection.channel(publisher_confirms=True)
        await server.set_qos(prefetch_count=1)
        requests = await server.declare_queue(f"naive-req-{uuid.uuid4().hex[:8]}", auto_delete=True)

        async def answer(message: aio_pika.abc.AbstractIncomingMessage) -> None:
            await server.default_exchange.publish(
                aio_pika.Message(message.body, correlation_id=message.correlation_id), routing_key=message.reply_to)
            await message.ack()

        await requests.consume(answer)
        client = await connection.channel(publisher_confirms=True)
        replies = await client.declare_queue("", exclusive=True)
        waiting: dict[str, asyncio.Future[bytes]] = {}

        async def on_reply(message: aio_pika.abc.AbstractIncomingMessage) -> None:
            future = waiting.pop(message.correlation_id, None)
            if future is not None:
                future.set_result(message.body)
            await message.ack()

        await replies.consume(on_reply)
        done = 0
        deadline = time.monotonic() + seconds

        async def caller() -> None:
            nonlocal done
            while time.monotonic() < deadline:
                correlation = uuid.uuid4().hex
                waiting[correlation] = asyncio.get_running_loop().create_future()
                await client.default_exchange.publish(
                    aio_pika.Message(body, correlation_id=correlation, reply_to=replies.name),
                    routing_key=requests.name)
                await waiting[correlation] if correlation in waiting else None
                done += 1

        begun = time.monotonic()
        await asyncio.gather(*(caller() for _ in range(concurrency)))
        return done / (time.monotonic() - begun)


async def one_way(url: str, messages: int, body: bytes) -> float:
    """Durable messages/s: persistent publish awaiting each confirm, consumer with prefetch 1."""
    connection = await aio_pika.connect_robust(url)
    async with connection:
        channel = await connection.channel(publisher_confirms=True)
        await channel.set_qos(prefetch_count=1)
        queue = await channel.declare_queue(f"naive-oneway-{uuid.uuid4().hex[:8]}", durable=True)
        received = 0
        finished = asyncio.Event()

        async def consume(message: aio_pika.abc.AbstractIncomingMessage) -> None:
            nonlocal received
            await message.ack()
            received += 1
            if received == messages:
                finished.set()

        tag = await queue.consume(consume)
        begun = time.monotonic()
        for _ in range(messages):
            await channel.default_exchange.publish(
                aio_pika.Message(body, delivery_mode=aio_pika.DeliveryMode.PERSISTENT), routing_key=queue.name)
        await asyncio.wait_for(finished.wait(), 60)
        rate = messages / (time.monotonic() - begun)
        await queue.cancel(tag)
        await queue.delete(if_unused=False, if_empty=False)
        return rate
