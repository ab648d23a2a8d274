"""Apache Pulsar engine (pulsar-client's asyncio API): a Shared subscription per subscription name.

Pulsar already has our topic shape, so a topic maps one to one; only the local name is escaped.
Request topics are the exception: they are always persistent on Pulsar, so a request sent while its
service restarts waits in the service's durable subscription (RabbitMQ keeps the queue for that).
Pulsar has no per-message expiry, so a publish `ttl` travels as a property and consumers drop (ack)
what has expired. Consumer counts, backlogs, and whether a request topic has any subscription at all
come from the broker's admin REST API (`pulsar_admin`). The client library reconnects producers and
consumers by itself; a send meeting the reconnect waits for it (its send timeout, 30 s).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from functools import partial
from urllib.parse import urlsplit

import pulsar
import pulsar.asyncio

from tracegraph.base.bus.protocol import Delivery, redact_url
from tracegraph.base.bus.pulsar_admin import PulsarAdmin, UnknownStats, admin_url, has_subscriptions, \
    subscription_backlog, subscription_consumers
from tracegraph.base.bus.topic import Topic
from tracegraph.base.errors import BusError, ConnectError, NoRoute, TopicNotFound

log = logging.getLogger(__name__)

DEFAULT_URL = "pulsar://127.0.0.1:6650"
CONNECT_TIMEOUT = 10.0
NACK_DELAY_MS = 200  # on top of the runtime's own backoff, which waits before it nacks
EXPIRES = "tg-expires-at"  # property: wall-clock second after which nobody waits for the message
ROUTED_FOR = 10.0  # seconds a request topic seen with a subscription is trusted to still have one
# A metadata lookup is the cheapest round trip that proves a broker answers. It creates nothing
# while auto-created topics are non-partitioned (Pulsar's default); any answer, even an error, will do.
_PROBE = "non-persistent://public/default/tracegraph-connect-probe"

_SEGMENT = re.compile(r"[A-Za-z0-9_.-]+")
_NAME = re.compile(r"[A-Za-z0-9_.:-]+")
_PULSAR = re.compile(r"(persistent|non-persistent)://([^/]+)/([^/]+)/([^/]+)")
_ESCAPED = re.compile(r"(?:[^_]|_[u_])*")  # every `_` starts a two-character escape
_PARTITION = re.compile(r"-partition-\d+$")  # Pulsar's own suffix for the partitions of a topic
# Error codes that mean no usable broker answered (the probe), or that none could serve a topic.
_NO_BROKER = {pulsar.Result.ConnectError, pulsar.Result.Timeout, pulsar.Result.NotConnected,
              pulsar.Result.AuthenticationError, pulsar.Result.ErrorGettingAuthenticationData}
_UNREACHABLE = _NO_BROKER | {pulsar.Result.LookupError, pulsar.Result.ServiceUnitNotReady,
                             pulsar.Result.TooManyLookupRequestException}


def pulsar_topic(topic: Topic) -> str:
    """Pulsar's name for `topic`: tenant and kind as they are, `_` -> `_u` then `:` -> `__` in the name.

    `_` is the escape character, so the mapping is reversible (`topic_from_pulsar`) and uses only
    characters every Pulsar name accepts: `persistent://tg/flow/chunk-load:default` becomes
    `persistent://tg/flow/chunk-load__default`. Request topics are persistent whatever their
    scheme says, so their subscription keeps requests for a restarting service.
    """
    for part in (topic.tenant, topic.kind):
        if not _SEGMENT.fullmatch(part) or part in (".", ".."):
            raise TopicNotFound(f"Pulsar cannot take tenant/namespace {part!r} of {topic}")
    if not _NAME.fullmatch(topic.name) or topic.name in (".", ".."):
        raise TopicNotFound(f"Pulsar cannot take topic name {topic.name!r} of {topic}")
    local = topic.name.replace("_", "_u").replace(":", "__")
    if _PARTITION.search(local):
        raise TopicNotFound(f"{topic}: names ending in -partition-N are Pulsar's partitions")
    scheme = "persistent" if topic.persistent or topic.serves_requests else "non-persistent"
    return f"{scheme}://{topic.tenant}/{topic.kind}/{local}"


def topic_from_pulsar(name: str) -> Topic:
    """The inverse of `pulsar_topic` (request topics come back in our non-persistent scheme);
    raises `TopicNotFound` for names it cannot have produced."""
    match = _PULSAR.fullmatch(name)
    if not match or not _ESCAPED.fullmatch(match.group(4)):
        raise TopicNotFound(f"not a Pulsar topic name made by tracegraph: {name!r}")
    scheme, tenant, kind, local = match.groups()
    decoded = re.sub(r"_([u_])", lambda m: "_" if m.group(1) == "u" else ":", local)
    topic = Topic.parse(f"{scheme}://{tenant}/{kind}/{decoded}")
    return Topic(False, tenant, kind, topic.name) if topic.serves_requests else topic


class PulsarBackend:
    """Moves bytes through a Pulsar cluster at `url` (pulsar://host:6650, pulsar+ssl://...)."""

    def __init__(self, url: str | None = None, admin: str | None = None) -> None:
        self.url = url or DEFAULT_URL
        self.admin = PulsarAdmin(admin_url(self.url, admin))
        self._routed: dict[str, float] = {}  # request topic -> when it was last seen with a subscription
        self._client: pulsar.asyncio.Client | None = None
        self._producers: dict[str, pulsar.asyncio.Producer] = {}
        self._lock = asyncio.Lock()

    async def connect(self) -> "PulsarBackend":
        """Create the client and wait until the broker answers a lookup."""
        async with self._lock:
            if self._client is not None:
                return self
            try:
                client = pulsar.asyncio.Client(self.url, logger=log.getChild("client"))
            except Exception as exc:  # ValueError for a malformed URL, whose text may hold a password
                raise ConnectError(f"bad Pulsar URL {redact_url(self.url)}: {_scrub(exc, self.url)}") from exc
            try:
                await asyncio.wait_for(client.get_topic_partitions(_PROBE), CONNECT_TIMEOUT)
            except (TimeoutError, asyncio.TimeoutError, pulsar.asyncio.PulsarException) as exc:
                if isinstance(exc, pulsar.asyncio.PulsarException) and exc.error() not in _NO_BROKER:
                    pass  # the broker answered, only about the probe topic
                else:
                    client.shutdown()
                    reason = str(exc) or f"no answer within {CONNECT_TIMEOUT:g} s"
                    raise ConnectError(f"cannot reach Pulsar at {redact_url(self.url)}: {reason}") from exc
            self._client = client
        return self

    async def _producer(self, topic: Topic) -> pulsar.asyncio.Producer:
        name = pulsar_topic(topic)
        producer = self._producers.get(name)
        if producer is None:
            await self.connect()
            async with self._lock:
                producer = self._producers.get(name)
                if producer is None:
                    try:
                        # No batching: a nack of one batched message redelivers the whole batch,
                        # and send() should return when the broker has stored this very message.
                        producer = await self._client.create_producer(name, batching_enabled=False)
                    except pulsar.asyncio.PulsarException as exc:
                        raise _wrap(exc, f"cannot publish to {topic}") from exc
                    self._producers[name] = producer
        return producer

    # The client library reconnects on its own and tells nobody: no lost connection is ever counted.
    epoch = 0

    async def consumers(self, topic: Topic, subscription: str) -> int | None:
        stats = await self._stats(topic)
        return None if stats is False else subscription_consumers(stats, subscription)

    async def backlog(self, topic: Topic, subscription: str) -> int | None:
        stats = await self._stats(topic)
        return None if stats is False else subscription_backlog(stats, subscription)

    async def _stats(self, topic: Topic) -> Mapping[str, object] | None | bool:
        """The topic's admin stats (None: no such topic), or False when the admin API cannot tell."""
        try:
            return await self.admin.topic_stats(pulsar_topic(topic))
        except UnknownStats as exc:
            log.debug("no stats for %s: %s", topic, exc)
            return False

    async def _check_routed(self, topic: Topic) -> None:
        """Refuse a request no subscription would keep (Pulsar drops it), as RabbitMQ's `mandatory` does."""
        name = pulsar_topic(topic)
        if time.monotonic() - self._routed.get(name, -ROUTED_FOR) < ROUTED_FOR:
            return
        stats = await self._stats(topic)
        if stats is False:  # cannot tell: send it, and let the caller's liveness check decide
            return
        if not has_subscriptions(stats):
            raise NoRoute(f"nothing is subscribed to {topic}: its service is not running in this flow")
        self._routed[name] = time.monotonic()

    async def publish(self, topic: Topic, body: bytes, properties: Mapping[str, str], *,
                      ttl: float | None = None) -> None:
        if topic.serves_requests:
            await self._check_routed(topic)
        producer = await self._producer(topic)
        sent = dict(properties)
        if ttl is not None:
            sent[EXPIRES] = repr(time.time() + ttl)
        try:
            await producer.send(body, properties=sent)
        except pulsar.asyncio.PulsarException as exc:
            raise _wrap(exc, f"publish to {topic} failed") from exc

    @asynccontextmanager
    async def subscribe(self, topic: Topic, subscription: str, *, prefetch: int = 16, auto_ack: bool = False
                        ) -> AsyncIterator[AsyncIterator[Delivery]]:
        name = pulsar_topic(topic)
        await self.connect()
        try:
            consumer = await self._client.subscribe(
                name, subscription, consumer_type=pulsar.ConsumerType.Shared,
                receiver_queue_size=max(1, prefetch), negative_ack_redelivery_delay_ms=NACK_DELAY_MS)
        except pulsar.asyncio.PulsarException as exc:
            raise _wrap(exc, f"cannot subscribe {subscription!r} to {topic}") from exc
        deliveries = _deliveries(consumer, asyncio.Semaphore(max(1, prefetch)), auto_ack)
        try:
            yield deliveries
        finally:
            try:  # the broker redelivers whatever this consumer left unacknowledged
                if not auto_ack:  # asked for, not left to the close, so the broker counts the redelivery
                    consumer.redeliver_unacknowledged_messages()
                await consumer.close()
            except pulsar.asyncio.PulsarException as exc:
                log.debug("closing consumer of %s: %s", name, exc)
            await deliveries.aclose()

    async def aclose(self) -> None:
        client, self._client = self._client, None
        self._producers.clear()
        await self.admin.aclose()
        if client is not None:
            try:  # closes every producer and consumer of the client too
                await client.close()
            except pulsar.asyncio.PulsarException as exc:
                log.debug("closing Pulsar client: %s", exc)

    async def __aenter__(self) -> "PulsarBackend":
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _deliveries(consumer: pulsar.asyncio.Consumer, slots: asyncio.Semaphore, auto_ack: bool = False
                      ) -> AsyncIterator[Delivery]:
    """Received messages; `slots` keeps at most `prefetch` of them unsettled (auto_ack: settled on receipt)."""
    while True:
        await slots.acquire()
        try:
            message = await consumer.receive()
        except pulsar.asyncio.PulsarException as exc:
            if exc.error() == pulsar.Result.AlreadyClosed:
                return
            raise _wrap(exc, f"receive on {consumer.topic()} failed") from exc
        settle = partial(_settle, consumer, message, slots, [False])
        properties = dict(message.properties())
        expired = _expired(properties.pop(EXPIRES, None))
        if auto_ack or expired:
            await settle(True)
            if expired:
                continue  # its caller gave up on it
        yield Delivery(message.data(), properties, message.redelivery_count() + 1,
                       partial(settle, True), partial(settle, False))


def _expired(expires: str | None) -> bool:
    """Whether a message's `EXPIRES` property lies in the past (hosts' clocks are assumed in sync)."""
    try:
        return expires is not None and time.time() > float(expires)
    except ValueError:
        return False


async def _settle(consumer: pulsar.asyncio.Consumer, message: pulsar.Message, slots: asyncio.Semaphore,
                  settled: list[bool], ok: bool) -> None:
    """Ack or nack once; later calls are no-ops."""
    if settled[0]:
        return
    settled[0] = True
    slots.release()
    try:
        # pulsar.asyncio's negative_acknowledge is itself asyncio.to_thread over the sync call.
        await (consumer.acknowledge(message) if ok else consumer.negative_acknowledge(message))
    except Exception as exc:  # the consumer is gone: the broker redelivers the message anyway
        log.debug("could not settle message %s: %s", message.message_id(), exc)


def _wrap(exc: pulsar.asyncio.PulsarException, what: str) -> BusError:
    """Our exception for a Pulsar error code."""
    if exc.error() in _UNREACHABLE:
        return ConnectError(f"{what}: broker unreachable ({exc})")
    if exc.error() in (pulsar.Result.InvalidTopicName, pulsar.Result.TopicNotFound):
        return TopicNotFound(f"{what}: {exc}")
    return BusError(f"{what}: {exc}")


def _scrub(text: object, url: str) -> str:
    """`text` with the URL's password, if any, replaced by ***."""
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    return str(text).replace(password, "***") if password else str(text)
