"""The bus contract, written once and run unchanged on every backend (inproc, RabbitMQ, Pulsar)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from tracegraph.base.bus import codec
from tracegraph.base.bus.topic import Topic
from tracegraph.base.client import FINAL, RequestClient
from tracegraph.base.errors import DecodeError, ServiceUnavailable, RequestTimeout
from tracegraph.schemas.base import Ping, Pong
from support.names import unique

pytestmark = pytest.mark.timeout(60)


def flow_topic() -> Topic:
    return Topic.parse(f"persistent://tg/flow/{unique('q')}:default")


async def take(deliveries, n: int, timeout: float = 10.0, ack: bool = True):
    """The next n deliveries (acknowledged unless told otherwise)."""
    got = []
    async def collect():
        async for d in deliveries:
            if ack:
                await d.ack()
            got.append(d)
            if len(got) == n:
                return
    await asyncio.wait_for(collect(), timeout)
    return got


async def test_publish_consume_keeps_body_properties_and_order(connect):
    bus = await connect()
    topic = flow_topic()
    async with bus.subscribe(topic, "reader") as deliveries:
        for i in range(3):
            await bus.publish(topic, f"body-{i}".encode(), {"id": str(i), "k": "v"})
        got = await take(deliveries, 3)
    assert [d.body for d in got] == [b"body-0", b"body-1", b"body-2"]
    assert [d.properties["id"] for d in got] == ["0", "1", "2"]
    assert all(d.properties["k"] == "v" and d.attempt == 1 for d in got)


async def test_persistent_topic_keeps_messages_while_no_consumer_is_present(connect):
    bus = await connect()
    topic = flow_topic()
    async with bus.subscribe(topic, "keeper"):
        pass  # the subscription now exists
    await bus.publish(topic, b"while-away", {})
    async with bus.subscribe(topic, "keeper") as deliveries:
        [d] = await take(deliveries, 1)
    assert d.body == b"while-away"


async def test_request_topic_keeps_a_request_for_a_restarting_service_until_its_ttl(connect):
    bus = await connect()
    requests = Topic.parse(f"non-persistent://tg/request/{unique('away')}:default")
    async with bus.subscribe(requests, "service"):
        pass  # the service ran once, and is now restarting
    await bus.publish(requests, b"expired", {}, ttl=0.3)
    await bus.publish(requests, b"still-wanted", {}, ttl=60)
    await asyncio.sleep(0.6)
    async with bus.subscribe(requests, "service") as deliveries:
        [d] = await take(deliveries, 1)
    assert d.body == b"still-wanted", "the request whose caller gave up is dropped, the other is kept"


async def test_fan_out_gives_each_subscription_every_message(connect):
    bus = await connect()
    topic = flow_topic()
    async with bus.subscribe(topic, "one") as a, bus.subscribe(topic, "two") as b:
        for i in range(5):
            await bus.publish(topic, str(i).encode(), {})
        got_a, got_b = await asyncio.gather(take(a, 5), take(b, 5))
    assert [d.body for d in got_a] == [d.body for d in got_b] == [str(i).encode() for i in range(5)]


async def attached(bus, topic: Topic, subscription: str, count: int = 1) -> None:
    """Wait until `count` consumers share the subscription, as the broker reports it: a fixed sleep races
    a loaded machine. Where the broker cannot tell (Pulsar), give them a moment."""
    while (found := await bus.consumers(topic, subscription)) is not None and found < count:
        await asyncio.sleep(0.02)
    if found is None:
        await asyncio.sleep(0.3)


async def test_competing_consumers_share_a_subscription_without_duplicates(connect):
    bus_a, bus_b = await connect(), await connect()
    topic = flow_topic()
    seen: dict[str, list[bytes]] = {"a": [], "b": []}

    async def consume(bus, who):
        async with bus.subscribe(topic, "workers", prefetch=1) as deliveries:
            async for d in deliveries:
                seen[who].append(d.body)
                await asyncio.sleep(0.01)  # slow worker, so the other one gets work too
                await d.ack()

    workers = [asyncio.create_task(consume(bus_a, "a")), asyncio.create_task(consume(bus_b, "b"))]
    await attached(bus_a, topic, "workers", 2)
    sender = await connect()
    for i in range(30):
        await sender.publish(topic, str(i).encode(), {})
    async def all_seen():
        while len(seen["a"]) + len(seen["b"]) < 30:
            await asyncio.sleep(0.02)
    await asyncio.wait_for(all_seen(), 20)
    for w in workers:
        w.cancel()
    await asyncio.gather(*workers, return_exceptions=True)
    everything = seen["a"] + seen["b"]
    assert sorted(everything, key=int) == [str(i).encode() for i in range(30)]
    assert seen["a"] and seen["b"], "both consumers should have been given work"


async def test_nack_redelivers_with_a_higher_attempt(connect):
    bus = await connect()
    topic = flow_topic()
    async with bus.subscribe(topic, "retry") as deliveries:
        await bus.publish(topic, b"again", {})
        [first] = await take(deliveries, 1, ack=False)
        assert first.attempt == 1
        await first.nack()
        [second] = await take(deliveries, 1)
    assert second.body == b"again"
    assert second.attempt == 2


async def test_message_of_a_consumer_that_dies_goes_to_another_consumer(connect):
    bus_a, bus_b = await connect(), await connect()
    topic = flow_topic()
    received = asyncio.Event()

    async def doomed():
        async with bus_a.subscribe(topic, "pool", prefetch=1) as deliveries:
            async for _ in deliveries:
                received.set()
                await asyncio.sleep(3600)  # dies before settling

    victim = asyncio.create_task(doomed())
    await attached(bus_b, topic, "pool")
    await bus_b.publish(topic, b"precious", {})
    await asyncio.wait_for(received.wait(), 10)
    async with bus_b.subscribe(topic, "pool", prefetch=1) as deliveries:
        victim.cancel()
        await asyncio.gather(victim, return_exceptions=True)
        [d] = await take(deliveries, 1)
    assert d.body == b"precious"
    assert d.attempt >= 2


@contextlib.asynccontextmanager
async def served(bus, answer):
    """A client of a fresh service whose server runs `answer(delivery, responses topic)` per request."""
    name = unique("svc")
    requests = Topic.parse(f"non-persistent://tg/request/{name}:default")
    responses = Topic.parse(f"non-persistent://tg/response/{name}:default")

    async def server():
        async with bus.subscribe(requests, "server") as deliveries:
            async for d in deliveries:
                await answer(d, responses)
                await d.ack()

    task = asyncio.create_task(server())
    await attached(bus, requests, "server")
    try:
        async with RequestClient(bus, requests, responses, Ping, Pong, timeout=10) as client:
            yield client
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_request_response_streams_until_the_final_response(connect):
    bus = await connect()

    async def three(d, responses):
        ping = codec.decode(d.body, d.properties, Ping)
        for i in range(3):
            body, props = codec.encode(Pong(text=ping.text, seq=i, end_of_stream=(i == 2)), {"id": d.properties["id"]})
            await bus.publish(responses, body, props)

    async with served(bus, three) as client:
        got = [r async for r in client.stream(Ping(text="hi"))]
        single = await client.request(Ping(text="again"))
    assert [(r.text, r.seq, r.end_of_stream) for r in got] == [("hi", 0, False), ("hi", 1, False), ("hi", 2, True)]
    assert (single.text, single.seq) == ("again", 2)


async def test_request_leaves_responses_marked_not_final_undecoded(connect):
    """request() keeps only the final response, so one its sender marked `FINAL` "0" is never
    decoded (here it could not be); stream() still decodes every response."""
    bus = await connect()

    async def unreadable_then_done(d, responses):
        request_id = d.properties["id"]
        await bus.publish(responses, b"{not json", {"id": request_id, FINAL: "0", "schema": "pong",
                                                    "schema-version": "1"})
        body, props = codec.encode(Pong(text="done", seq=1, end_of_stream=True), {"id": request_id, FINAL: "1"})
        await bus.publish(responses, body, props)

    async with served(bus, unreadable_then_done) as client:
        single = await client.request(Ping(text="hi"))
        with pytest.raises(DecodeError):
            [r async for r in client.stream(Ping(text="hi"))]
    assert (single.text, single.seq) == ("done", 1)


async def test_request_without_a_server_fails_clearly_within_its_timeout(connect):
    bus = await connect()
    name = unique("nobody")
    requests = Topic.parse(f"non-persistent://tg/request/{name}:default")
    responses = Topic.parse(f"non-persistent://tg/response/{name}:default")
    async with RequestClient(bus, requests, responses, Ping, Pong) as client:
        with pytest.raises(ServiceUnavailable, match="no service is consuming non-persistent://tg/request/"):
            await asyncio.wait_for(client.request(Ping(), timeout=0.5), 3)


async def test_auto_ack_subscription_is_settled_on_receipt(connect):
    bus = await connect()
    topic = flow_topic()
    async with bus.subscribe(topic, "reader", auto_ack=True) as deliveries:
        await bus.publish(topic, b"once", {})
        [d] = await take(deliveries, 1, ack=False)
    assert d.body == b"once"
    async with bus.subscribe(topic, "reader", auto_ack=True) as deliveries:
        await bus.publish(topic, b"twice", {})
        [again] = await take(deliveries, 1, ack=False)
    assert again.body == b"twice", "an auto-acked message must not come back"
