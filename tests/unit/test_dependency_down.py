"""A dead dependency is noticed by every caller, not only the first: once a request found nobody serving,
the requests after it fail at once while the broker still counts no consumer; and a request the broker
does not take (its connection down) fails as unavailable instead of waiting for the reconnect."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from tracegraph.base.bus import codec
from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.bus.topic import SERVICE_SUBSCRIPTION, Topic
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import ServiceUnavailable
from tracegraph.flow.gateway.refusals import retry_after
from tracegraph.schemas.base import Ping, Pong

REQUEST = Topic.parse("non-persistent://tg/request/echo:down")
RESPONSE = Topic.parse("non-persistent://tg/response/echo:down")
UNAVAILABLE_AFTER = 0.4


class CountingBackend(InprocBackend):
    """Counts the requests that reached the bus; `hang` makes publishing wait, as while a connection is down."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0
        self.hang = False

    async def publish(self, topic, body, properties, *, ttl=None) -> None:
        if self.hang:
            await asyncio.Event().wait()
        if topic == REQUEST:
            self.sent += 1
        await super().publish(topic, body, properties, ttl=ttl)


def client_of(bus: InprocBackend) -> RequestClient[Ping, Pong]:
    return RequestClient(bus, REQUEST, RESPONSE, Ping, Pong, timeout=60, unavailable_after=UNAVAILABLE_AFTER)


async def serve_once_then_leave(bus: InprocBackend) -> None:
    """Leave the service's queue behind with no consumer, as a killed service does."""
    async with bus.subscribe(REQUEST, SERVICE_SUBSCRIPTION):
        pass


@contextlib.asynccontextmanager
async def found_down(bus: CountingBackend) -> AsyncIterator[RequestClient[Ping, Pong]]:
    """A client whose first request found the service's queue without a consumer."""
    await serve_once_then_leave(bus)
    async with client_of(bus) as client:
        with pytest.raises(ServiceUnavailable):
            await client.request(Ping(text="first"))
        yield client


async def echo(bus: InprocBackend, ready: asyncio.Event) -> None:
    async with bus.subscribe(REQUEST, SERVICE_SUBSCRIPTION) as deliveries:
        ready.set()
        async for delivery in deliveries:
            ping = codec.decode(delivery.body, delivery.properties, Ping)
            body, props = codec.encode(Pong(text=ping.text, end_of_stream=True), {"id": delivery.properties["id"], "final": "1"})
            await bus.publish(RESPONSE, body, props)
            await delivery.ack()


async def test_requests_after_one_found_nobody_serving_fail_without_being_sent():
    bus = CountingBackend()
    await serve_once_then_leave(bus)
    async with client_of(bus) as client:
        with pytest.raises(ServiceUnavailable, match="no service is consuming"):
            await client.request(Ping(text="first"))
        assert bus.sent == 1
        for n in range(5):  # queued behind the first: refused at once, never sent to wait their own deadline
            with pytest.raises(ServiceUnavailable, match="no service is consuming"):
                await client.request(Ping(text=f"queued {n}"))
        with pytest.raises(ServiceUnavailable):
            async for _ in client.stream(Ping(text="streamed")):
                pass
    assert bus.sent == 1


async def test_concurrent_requests_waiting_on_a_dead_service_all_fail_together_and_mark_it_down():
    bus = CountingBackend()
    await serve_once_then_leave(bus)
    async with client_of(bus) as client:
        results = await asyncio.gather(*(client.request(Ping(text=str(n))) for n in range(4)),
                                       return_exceptions=True)
        assert all(isinstance(r, ServiceUnavailable) for r in results), results
        with pytest.raises(ServiceUnavailable):
            await client.request(Ping(text="after"))
    assert bus.sent == 4


async def test_a_service_back_clears_the_mark_and_is_served():
    bus = CountingBackend()
    async with found_down(bus) as client:
        ready = asyncio.Event()
        serving = asyncio.create_task(echo(bus, ready))
        try:
            await ready.wait()
            reply = await client.request(Ping(text="back"))
        finally:
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)
    assert reply.text == "back" and bus.sent == 2


async def test_the_mark_expires_after_the_unavailable_window():
    bus = CountingBackend()
    async with found_down(bus) as client:
        await asyncio.sleep(UNAVAILABLE_AFTER * 1.5)
        with pytest.raises(ServiceUnavailable):  # sent again: it waits its own deadline, then fails
            await client.request(Ping(text="later"))
    assert bus.sent == 2


async def test_a_request_the_bus_does_not_take_fails_as_unavailable_not_after_the_reconnect():
    bus = CountingBackend()
    async with client_of(bus) as client:
        bus.hang = True
        # The guard only keeps a regression from hanging the suite; the error's kind is the assertion.
        with pytest.raises(ServiceUnavailable, match="message bus did not take"):
            await asyncio.wait_for(client.request(Ping(text="broker away")), 30)


def test_a_503_tells_the_client_when_to_retry():
    assert retry_after(503, 4.5) == {"Retry-After": "5"}
    assert retry_after(503, 0.2) == {"Retry-After": "1"}
    assert retry_after(504, 4.5) is None and retry_after(200, 4.5) is None
