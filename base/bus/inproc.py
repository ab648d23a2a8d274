"""The embedded broker: asyncio queues inside one process, with the same semantics as RabbitMQ.

Bodies stay bytes, so it is an honest stand-in: the same contract suite runs on it and on
a real broker.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from tracegraph.base.bus.protocol import Delivery, already_settled
from tracegraph.base.bus.topic import Topic
from tracegraph.base.errors import BusError, NoRoute


@dataclass(slots=True)
class _Entry:
    body: bytes
    properties: Mapping[str, str]
    attempt: int = 1
    expires: float | None = None  # loop time after which nobody waits for it any more

    def expired(self) -> bool:
        return self.expires is not None and asyncio.get_running_loop().time() > self.expires


@dataclass(slots=True)
class _Subscription:
    queue: asyncio.Queue[_Entry] = field(default_factory=asyncio.Queue)
    consumers: int = 0


class _Unsettled:
    """A handed-out entry; settling it twice is a no-op, forgetting it requeues it on exit."""

    __slots__ = ("entry", "consumer", "settled")

    def __init__(self, entry: _Entry, consumer: "_Consumer") -> None:
        self.entry = entry
        self.consumer = consumer
        self.settled = False

    async def ack(self) -> None:
        self._settle(requeue=False)

    async def nack(self) -> None:
        self._settle(requeue=True)

    def _settle(self, requeue: bool) -> None:
        if self.settled:
            return
        self.settled = True
        self.consumer.outstanding.discard(self)
        self.consumer.slots.release()
        if requeue:
            self.consumer.requeue(self.entry)


class _Consumer:
    def __init__(self, subscription: _Subscription, prefetch: int, auto_ack: bool = False) -> None:
        self.subscription = subscription
        self.auto_ack = auto_ack
        self.slots = asyncio.Semaphore(prefetch)
        self.outstanding: set[_Unsettled] = set()
        self.closed = False

    def requeue(self, entry: _Entry) -> None:
        entry.attempt += 1
        self.subscription.queue.put_nowait(entry)

    async def deliveries(self) -> AsyncIterator[Delivery]:
        queue = self.subscription.queue
        if self.auto_ack:
            while not self.closed:
                entry = await queue.get()
                if entry.expired():
                    continue
                yield Delivery(entry.body, entry.properties, entry.attempt, already_settled, already_settled)
            return
        while not self.closed:
            await self.slots.acquire()
            entry = await queue.get()
            if entry.expired():
                self.slots.release()
                continue
            handle = _Unsettled(entry, self)
            self.outstanding.add(handle)
            yield Delivery(entry.body, entry.properties, entry.attempt, handle.ack, handle.nack)

    def close(self) -> None:
        """Give every unsettled delivery back to the subscription, as a broker does for a lost consumer."""
        self.closed = True
        for handle in list(self.outstanding):
            handle.settled = True
            self.requeue(handle.entry)
        self.outstanding.clear()



class InprocBackend:
    """Topics and subscriptions held in memory; subscriptions of `persistent` and request topics
    outlive their consumers. There is one connection, never lost: `epoch` stays 0."""

    epoch = 0

    def __init__(self, url: str | None = None) -> None:
        self._topics: dict[Topic, dict[str, _Subscription]] = {}
        self._closed = False

    async def publish(self, topic: Topic, body: bytes, properties: Mapping[str, str], *,
                      ttl: float | None = None) -> None:
        if self._closed:
            raise BusError("inproc backend is closed")
        props = dict(properties)
        expires = None if ttl is None else asyncio.get_running_loop().time() + ttl
        subscriptions = self._topics.get(topic, {})
        if not subscriptions and topic.serves_requests:
            raise NoRoute(f"nothing is subscribed to {topic}: its service is not running in this flow")
        for subscription in subscriptions.values():
            subscription.queue.put_nowait(_Entry(body, props, expires=expires))

    async def consumers(self, topic: Topic, subscription: str) -> int | None:
        found = self._topics.get(topic, {}).get(subscription)
        return found.consumers if found is not None else 0

    async def backlog(self, topic: Topic, subscription: str) -> int | None:
        found = self._topics.get(topic, {}).get(subscription)
        return found.queue.qsize() if found is not None else 0

    @asynccontextmanager
    async def subscribe(self, topic: Topic, subscription: str, *, prefetch: int = 16, auto_ack: bool = False
                        ) -> AsyncIterator[AsyncIterator[Delivery]]:
        if self._closed:
            raise BusError("inproc backend is closed")
        subscriptions = self._topics.setdefault(topic, {})
        sub = subscriptions.setdefault(subscription, _Subscription())
        consumer = _Consumer(sub, max(1, prefetch), auto_ack)
        sub.consumers += 1
        deliveries = consumer.deliveries()
        try:
            yield deliveries
        finally:
            consumer.close()
            with contextlib.suppress(RuntimeError):  # still running in a task that is being cancelled
                await deliveries.aclose()
            sub.consumers -= 1
            if not (topic.persistent or topic.serves_requests) and sub.consumers == 0:
                subscriptions.pop(subscription, None)

    async def aclose(self) -> None:
        self._closed = True
        self._topics.clear()

    async def __aenter__(self) -> "InprocBackend":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
