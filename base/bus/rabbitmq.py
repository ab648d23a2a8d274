"""RabbitMQ engine (aio-pika): a fanout exchange per topic, a queue per subscription.

`persistent://` topics get durable exchanges and quorum queues (whose `x-delivery-count`
header is the broker's own redelivery counter) and publisher confirms; `non-persistent://`
topics get transient exchanges, classic queues and no confirms. Request queues outlive their
consumers (until unused for `REQUEST_QUEUE_EXPIRES_MS`), so a request sent while its service
restarts waits for it; other non-persistent queues are auto-deleted. The robust connection
reconnects after a broker restart or a dropped connection and re-declares what it had declared;
a publish that meets the reconnect is retried after it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager

import aio_pika
import aiormq
from aiormq import spec
from aio_pika.abc import AbstractExchange, AbstractRobustConnection
from aiormq.abc import DeliveredMessage

from tracegraph.base.bus.protocol import Delivery, already_settled, redact_url
from tracegraph.base.bus.topic import Topic
from tracegraph.base.errors import BusError, ConnectError, NoRoute

log = logging.getLogger(__name__)

DEFAULT_URL = "amqp://guest:guest@127.0.0.1:5672/"
REQUEST_QUEUE_EXPIRES_MS = 30 * 60 * 1000  # a service's request queue, once nobody serves or uses it
PUBLISH_RETRY_SECONDS = 30.0  # how long a publish waits for a lost connection to come back

# What a publish meets while the connection is down or being restored.
_LOST = (aio_pika.exceptions.AMQPError, aiormq.exceptions.AMQPError, aiormq.exceptions.ChannelInvalidStateError,
         ConnectionError)


def queue_arguments(topic: Topic) -> dict[str, object]:
    """Quorum queues count redeliveries; classic ones are cheaper; request queues expire once unused."""
    if topic.persistent:
        return {"x-queue-type": "quorum"}
    if topic.serves_requests:
        return {"x-expires": REQUEST_QUEUE_EXPIRES_MS}
    return {}


def queue_name(topic: Topic, subscription: str) -> str:
    """One queue per (topic, subscription): competing consumers share it, other subscriptions fan out."""
    name = f"{topic.slug}.{subscription}"
    if len(name.encode()) > 255:
        raise BusError(f"queue name longer than RabbitMQ's 255 bytes: {name!r}")
    return name


def attempt_of(headers: Mapping[str, object], redelivered: bool) -> int:
    """Delivery attempt from the broker: quorum queues count, classic ones only flag redelivery."""
    count = headers.get("x-delivery-count")
    if count is not None:
        return int(count) + 1
    return 2 if redelivered else 1


class RabbitMQBackend:
    """Moves bytes through a RabbitMQ broker at `url` (amqp://user:pass@host:port/vhost)."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or DEFAULT_URL
        self._connection: AbstractRobustConnection | None = None
        self._exchanges: dict[Topic, AbstractExchange] = {}
        self._confirmed = None
        self._fast = None
        self._probe_channel = None
        self.epoch = 0

    async def connect(self) -> "RabbitMQBackend":
        if self._connection is None:
            try:
                self._connection = await aio_pika.connect_robust(
                    self.url, client_properties={"connection_name": "tracegraph"})
            except Exception as exc:  # aio-pika raises several types for an unreachable broker
                raise ConnectError(f"cannot reach RabbitMQ at {redact_url(self.url)}: {exc}") from exc
            self._connection.close_callbacks.add(self._lost)
            self._confirmed = await self._connection.channel(publisher_confirms=True)
            self._fast = await self._connection.channel(publisher_confirms=False)
        return self

    def _lost(self, *_: object) -> None:
        """The connection closed: responses awaited on it may never arrive (see `epoch`)."""
        self.epoch += 1

    async def consumers(self, topic: Topic, subscription: str) -> int | None:
        counts = await self._queue_counts(topic, subscription)
        return None if counts is None else counts[1]

    async def backlog(self, topic: Topic, subscription: str) -> int | None:
        counts = await self._queue_counts(topic, subscription)
        return None if counts is None else counts[0]

    async def _queue_counts(self, topic: Topic, subscription: str) -> tuple[int, int] | None:
        """(ready messages, consumers) of the subscription's queue, from a passive declare."""
        await self.connect()
        try:
            if self._probe_channel is None or self._probe_channel.is_closed:
                self._probe_channel = await self._connection.channel(publisher_confirms=False)
            underlay = await self._probe_channel.get_underlay_channel()
            declared = await underlay.queue_declare(queue_name(topic, subscription), passive=True)
        except aiormq.exceptions.ChannelNotFoundEntity:  # no such queue: nobody ever served it, or it expired
            await self._drop_probe_channel()
            return 0, 0
        except (*_LOST, RuntimeError):  # cannot tell while the connection is down; `epoch` covers that case
            await self._drop_probe_channel()
            return None
        return declared.message_count, declared.consumer_count

    async def _drop_probe_channel(self) -> None:
        channel, self._probe_channel = self._probe_channel, None
        if channel is not None and not channel.is_closed:
            try:
                await channel.close()
            except Exception as exc:  # the broker closed it already
                log.debug("closing the probe channel: %s", exc)

    async def _exchange(self, topic: Topic) -> AbstractExchange:
        exchange = self._exchanges.get(topic)
        if exchange is None:
            await self.connect()
            channel = self._confirmed if topic.persistent else self._fast
            exchange = await channel.declare_exchange(
                topic.slug, aio_pika.ExchangeType.FANOUT, durable=topic.persistent)
            self._exchanges[topic] = exchange
        return exchange

    async def publish(self, topic: Topic, body: bytes, properties: Mapping[str, str], *,
                      ttl: float | None = None) -> None:
        header = spec.Basic.Properties(headers=dict(properties), delivery_mode=2 if topic.persistent else 1,
                                       message_id="", expiration=None if ttl is None else str(int(ttl * 1000)))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PUBLISH_RETRY_SECONDS
        while True:
            try:
                await self._publish_once(topic, body, header)
                return
            except _LOST as exc:
                # Persistent topics have confirms: a retry may repeat a message the broker took
                # before the connection dropped, which idempotent consumers absorb.
                if self._connection is None or loop.time() >= deadline:
                    raise BusError(f"publish to {topic} failed: {exc or type(exc).__name__}") from exc
                log.info("publish to %s met a lost connection (%s); retrying once it is back", topic,
                         exc or type(exc).__name__)
                await self._until_connected(deadline)

    async def _publish_once(self, topic: Topic, body: bytes, header: spec.Basic.Properties) -> None:
        await self._exchange(topic)  # declared once through aio-pika, so it is re-declared on reconnect
        # Straight to aiormq: aio-pika's Message wrapper costs a quarter of the publish CPU.
        # A topic nobody subscribes to drops the message, as pub/sub should; but a request must reach a
        # queue, so it goes `mandatory` on a confirming channel and comes back if none takes it.
        routed = topic.serves_requests
        channel = self._confirmed if topic.persistent or routed else self._fast
        underlay = await channel.get_underlay_channel()
        # wait=False: with the default, aiormq holds the channel's lock until its writer task has written
        # the frame, two loop turns, so on a busy loop every publish of the process queued behind the one
        # before it. Frames still go out in order, and a confirming channel's publish still waits for
        # the broker's confirm (or the return of an unroutable request).
        outcome = await underlay.basic_publish(body, exchange=topic.slug, routing_key="", properties=header,
                                               mandatory=routed, wait=False)
        if routed and isinstance(outcome, DeliveredMessage):  # returned unroutable
            raise NoRoute(f"nothing is subscribed to {topic}: its service is not running in this flow")

    async def _until_connected(self, deadline: float) -> None:
        """Wait (at most until `deadline`) for the connection, then a moment for its channels to reopen."""
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining > 0:
            try:
                async with asyncio.timeout(remaining):
                    await self._connection.connected.wait()
            except TimeoutError:
                return
        await asyncio.sleep(0.2)

    @asynccontextmanager
    async def subscribe(self, topic: Topic, subscription: str, *, prefetch: int = 16, auto_ack: bool = False
                        ) -> AsyncIterator[AsyncIterator[Delivery]]:
        await self.connect()
        channel = await self._connection.channel()
        inbox: asyncio.Queue[DeliveredMessage] = asyncio.Queue()
        try:
            await channel.set_qos(prefetch_count=max(1, prefetch))
            exchange = await channel.declare_exchange(
                topic.slug, aio_pika.ExchangeType.FANOUT, durable=topic.persistent)
            queue = await channel.declare_queue(
                queue_name(topic, subscription), durable=topic.persistent,
                auto_delete=not (topic.persistent or topic.serves_requests), arguments=queue_arguments(topic))
            await queue.bind(exchange)

            async def consume(*_: object) -> None:
                # Consume on aiormq directly: aio-pika's message wrapper costs more than our whole
                # handler path. The robust channel re-declares queue and binding after a reconnect
                # and then calls this again on the new underlying channel.
                underlay = await channel.get_underlay_channel()
                await underlay.basic_consume(queue.name, _put(inbox), no_ack=auto_ack)

            await consume()
            channel.reopen_callbacks.add(consume)
            yield _deliveries(inbox, auto_ack, _Acks())
        finally:
            # Closing the channel hands every unacknowledged message back to the queue.
            if not channel.is_closed:
                await channel.close()

    async def aclose(self) -> None:
        if self._connection is not None:
            self._probe_channel = None
            await self._connection.close()
            self._connection = None
            self._exchanges.clear()

    async def __aenter__(self) -> "RabbitMQBackend":
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _put(inbox: asyncio.Queue[DeliveredMessage]):
    async def put(message: DeliveredMessage) -> None:
        inbox.put_nowait(message)
    return put


async def _deliveries(inbox: asyncio.Queue[DeliveredMessage], auto_ack: bool, acks: "_Acks"
                      ) -> AsyncIterator[Delivery]:
    while True:
        message = await inbox.get()
        raw = message.header.properties.headers or {}
        headers = {k: v if isinstance(v, str) else str(v) for k, v in raw.items()}
        attempt = attempt_of(raw, bool(message.delivery.redelivered))
        if auto_ack:
            yield Delivery(message.body, headers, attempt, already_settled, already_settled)
        else:
            settle = _Settle(acks, message)
            yield Delivery(message.body, headers, attempt, settle.ack, settle.nack)



class _Settle:
    """Ack or nack one delivery, once."""

    __slots__ = ("acks", "message", "done")

    def __init__(self, acks: "_Acks", message: DeliveredMessage) -> None:
        self.acks, self.message, self.done = acks, message, False

    async def ack(self) -> None:
        if not self.done:
            self.done = True
            self.acks.ack(self.message)

    async def nack(self) -> None:
        if not self.done:
            self.done = True
            await self.acks.nack(self.message)


class _Acks:
    """Coalesces the acks of one loop tick into a single `multiple` ack over contiguous delivery tags.

    Tags are per channel and start again after a reconnect, so the state follows the channel
    that delivered each message; settling on a dead channel is skipped (the broker redelivers).
    Acks that cannot join a contiguous run are still sent at the same tick, one by one, so a
    slow message never holds back the acknowledgement (and prefetch slots) of faster ones.

    Settle frames go out in the order they were decided, one after another: a `multiple` ack
    written before a single ack or nack of a tag it covers would make the broker close the
    channel for an unknown tag, and redeliver every unacked message. (aiormq's frame queue is
    bounded, and once it is full a later frame can overtake an earlier one; publishes that do
    not wait for their frame to be written keep it full.)
    """

    def __init__(self) -> None:
        self.channel: object | None = None
        self.floor = 0  # every tag up to here is settled
        self.ready: set[int] = set()  # acked by the consumer, not yet sent
        self.settled: set[int] = set()  # above the floor, already sent (single ack or nack)
        self.flushing = False
        self.sending: asyncio.Future[None] | None = None  # writes the frames decided so far, in order

    def _follow(self, channel: object) -> None:
        if channel is not self.channel:
            self.channel, self.floor = channel, 0
            self.ready.clear()
            self.settled.clear()

    def ack(self, message: DeliveredMessage) -> None:
        self._follow(message.channel)
        self.ready.add(message.delivery.delivery_tag)
        if not self.flushing:
            self.flushing = True
            asyncio.get_running_loop().call_soon(self._flush)

    async def nack(self, message: DeliveredMessage) -> None:
        self._follow(message.channel)
        channel, tag = message.channel, message.delivery.delivery_tag
        self.settled.add(tag)
        await self._send(channel, [lambda: channel.basic_nack(tag, requeue=True, wait=False)])

    def _send(self, channel: object, frames: list[Callable[[], Awaitable[None]]]) -> asyncio.Future[None]:
        """Write `frames` after every frame decided before them; the future is done once they are queued."""
        self.sending = asyncio.ensure_future(_in_order(self.sending, channel, frames))
        return self.sending

    def _flush(self) -> None:
        self.flushing = False
        channel, top, tag = self.channel, None, self.floor
        while True:
            following = tag + 1
            if following in self.ready:
                self.ready.remove(following)
                top = following
            elif following in self.settled:
                self.settled.remove(following)
            else:
                break
            tag = following
        self.floor = tag
        sends = [_ack(channel, top, True)] if top is not None else []
        sends += [_ack(channel, t, False) for t in sorted(self.ready)]
        self.settled |= self.ready
        self.ready.clear()
        if sends:
            self._send(channel, sends)


def _ack(channel: object, tag: int, multiple: bool) -> Callable[[], Awaitable[None]]:
    return lambda: channel.basic_ack(tag, multiple=multiple, wait=False)


async def _in_order(previous: asyncio.Future[None] | None, channel: object,
                    frames: list[Callable[[], Awaitable[None]]]) -> None:
    if previous is not None and not previous.done():
        await asyncio.wait([previous])  # its own failures are logged; here only its order matters
    for frame in frames:
        try:
            await frame()
        except Exception as exc:  # the channel is gone: the broker redelivers what it held
            log.debug("could not settle a delivery on %r: %s", channel, exc)
