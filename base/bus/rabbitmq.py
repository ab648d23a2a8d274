"""RabbitMQ engine (aio-pika): a fanout exchange per topic, a queue per subscription.

`persistent://` topics get durable exchanges and quorum queues (whose `x-delivery-count`
header is the broker's own redelivery counter) and publisher confirms; `non-persistent://`
topics get transient exchanges, auto-deleted classic queues and no confirms. The robust
connection reconnects after a broker restart and re-declares what it had declared.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import aio_pika
from aio_pika.abc import AbstractExchange, AbstractIncomingMessage, AbstractRobustConnection

from tracegraph.base.bus.protocol import Delivery
from tracegraph.base.bus.topic import Topic
from tracegraph.base.errors import BusError, ConnectError

log = logging.getLogger(__name__)

DEFAULT_URL = "amqp://guest:guest@127.0.0.1:5672/"


def queue_arguments(topic: Topic) -> dict[str, str]:
    """Queue type by durability: quorum queues count redeliveries, classic ones are cheaper."""
    return {"x-queue-type": "quorum"} if topic.persistent else {}


def queue_name(topic: Topic, subscription: str) -> str:
    """One queue per (topic, subscription): competing consumers share it, other subscriptions fan out."""
    name = f"{topic.slug}.{subscription}"
    if len(name.encode()) > 255:
        raise BusError(f"queue name longer than RabbitMQ's 255 bytes: {name!r}")
    return name


def attempt_of(message: AbstractIncomingMessage) -> int:
    """Delivery attempt from the broker: quorum queues count, classic ones only flag redelivery."""
    count = (message.headers or {}).get("x-delivery-count")
    if count is not None:
        return int(count) + 1
    return 2 if message.redelivered else 1


class RabbitMQBackend:
    """Moves bytes through a RabbitMQ broker at `url` (amqp://user:pass@host:port/vhost)."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or DEFAULT_URL
        self._connection: AbstractRobustConnection | None = None
        self._exchanges: dict[tuple[Topic, bool], AbstractExchange] = {}
        self._confirmed = None
        self._fast = None

    async def connect(self) -> "RabbitMQBackend":
        if self._connection is None:
            try:
                self._connection = await aio_pika.connect_robust(
                    self.url, client_properties={"connection_name": "tracegraph"})
            except Exception as exc:  # aio-pika raises several types for an unreachable broker
                raise ConnectError(f"cannot reach RabbitMQ at {_redact(self.url)}: {exc}") from exc
            self._confirmed = await self._connection.channel(publisher_confirms=True)
            self._fast = await self._connection.channel(publisher_confirms=False)
        return self

    async def _exchange(self, topic: Topic) -> AbstractExchange:
        key = (topic, topic.persistent)
        exchange = self._exchanges.get(key)
        if exchange is None:
            await self.connect()
            channel = self._confirmed if topic.persistent else self._fast
            exchange = await channel.declare_exchange(
                topic.slug, aio_pika.ExchangeType.FANOUT, durable=topic.persistent)
            self._exchanges[key] = exchange
        return exchange

    async def publish(self, topic: Topic, body: bytes, properties: Mapping[str, str]) -> None:
        exchange = await self._exchange(topic)
        mode = aio_pika.DeliveryMode.PERSISTENT if topic.persistent else aio_pika.DeliveryMode.NOT_PERSISTENT
        message = aio_pika.Message(body, headers=dict(properties), delivery_mode=mode)
        try:
            await exchange.publish(message, routing_key="")
        except aio_pika.exceptions.AMQPError as exc:
            raise BusError(f"publish to {topic} failed: {exc}") from exc

    @asynccontextmanager
    async def subscribe(self, topic: Topic, subscription: str, *, prefetch: int = 16
                        ) -> AsyncIterator[AsyncIterator[Delivery]]:
        await self.connect()
        channel = await self._connection.channel()
        try:
            await channel.set_qos(prefetch_count=max(1, prefetch))
            exchange = await channel.declare_exchange(
                topic.slug, aio_pika.ExchangeType.FANOUT, durable=topic.persistent)
            queue = await channel.declare_queue(
                queue_name(topic, subscription), durable=topic.persistent,
                auto_delete=not topic.persistent, arguments=queue_arguments(topic))
            await queue.bind(exchange)
            async with queue.iterator() as messages:
                yield _deliveries(messages)
        finally:
            # Closing the channel hands every unacknowledged message back to the queue.
            if not channel.is_closed:
                await channel.close()

    async def aclose(self) -> None:
        if self._connection is not None:
            await self._connection.close()
            self._connection = None
            self._exchanges.clear()

    async def __aenter__(self) -> "RabbitMQBackend":
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _deliveries(messages: AsyncIterator[AbstractIncomingMessage]) -> AsyncIterator[Delivery]:
    async for message in messages:
        yield Delivery(
            message.body,
            {k: str(v) for k, v in (message.headers or {}).items()},
            attempt_of(message),
            _settler(message, requeue=None),
            _settler(message, requeue=True),
        )


def _settler(message: AbstractIncomingMessage, requeue: bool | None):
    async def settle() -> None:
        try:
            if requeue is None:
                await message.ack()
            else:
                await message.nack(requeue=True)
        except Exception as exc:  # the channel is gone: the broker redelivers it anyway
            log.debug("could not settle delivery %s: %s", message.delivery_tag, exc)
    return settle


def _redact(url: str) -> str:
    """The URL without its password, for error messages."""
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"
