"""Callers notice a dead service in seconds, requests wait out a service restart, and consumed
messages that fail transiently are retried with backoff and then given up on, on every backend."""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager

import pytest

from tracegraph.base.bus import codec
from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.bus.topic import CONFIG_PUSH_TOPIC, SERVICE_SUBSCRIPTION, Topic
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import ServiceUnavailable
from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Consumer
from tracegraph.flow.vectors import DocumentEmbeddingsProcessor
from tracegraph.launch.stack import Stack
from tracegraph.schemas.base import Ping, Pong
from tracegraph.schemas.ingest import Metadata, TextChunk, Triples

from support.echo import EchoProcessor
from support.names import unique
from support.stack import (
    config_factory, config_with_flow, settings_for, start_flow, until_answered, wait_until_async,
)

pytestmark = pytest.mark.timeout(90)


def echo_client(bus, flow_id: str, unavailable_after: float) -> RequestClient[Ping, Pong]:
    return RequestClient(bus, Topic.parse(f"non-persistent://tg/request/echo:{flow_id}"),
                         Topic.parse(f"non-persistent://tg/response/echo:{flow_id}"), Ping, Pong,
                         timeout=60, unavailable_after=unavailable_after)


async def test_a_request_nobody_serves_fails_as_unavailable_in_seconds(connect):
    bus = await connect()
    async with echo_client(bus, unique("nobody"), unavailable_after=1.0) as client:
        # Noticed by the liveness check (ServiceUnavailable), not by the 60 s timeout (RequestTimeout): the
        # error's kind says which, where a stopwatch would fail on a loaded machine.
        with pytest.raises(ServiceUnavailable, match="no service is consuming"):
            await client.request(Ping(text="anyone?"))


async def test_a_service_stopped_mid_answer_fails_its_caller_fast(connect, tmp_path):
    bus = await connect()
    async with config_with_flow(bus, tmp_path, "dies") as (flow_id, settings):
        async with echo_client(bus, flow_id, unavailable_after=1.0) as client:
            echo = await EchoProcessor(bus, settings).__aenter__()
            await until_answered(client)
            asking = asyncio.create_task(client.request(Ping(text="slow")))
            await asyncio.sleep(0.5)
            await echo.stop()
            with pytest.raises(ServiceUnavailable):  # not RequestTimeout: the 60 s timeout never came into it
                await asyncio.wait_for(asking, 45)


async def test_a_request_sent_while_its_service_restarts_is_served_once_it_is_back(connect, tmp_path):
    bus = await connect()
    async with config_with_flow(bus, tmp_path, "restart") as (flow_id, settings):
        async with echo_client(bus, flow_id, unavailable_after=30.0) as client:
            async with EchoProcessor(bus, settings):
                await until_answered(client)
            topic = Topic.parse(f"non-persistent://tg/request/echo:{flow_id}")
            assert await bus.consumers(topic, SERVICE_SUBSCRIPTION) in (0, None)
            asking = asyncio.create_task(client.request(Ping(text="while away")))
            await asyncio.sleep(1.0)
            async with EchoProcessor(bus, settings):
                reply = await asyncio.wait_for(asking, 30)
    assert reply.text == f"{flow_id}:while away"


class Flaky(FlowProcessor):
    """Its consumer always meets an unavailable service; it records what the runtime gives up on."""

    name = "flaky"
    input = Consumer("input", Ping, prefetch=4)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.attempts: list[int] = []
        self.given_up: list[tuple[str, str]] = []

    @input.handler
    async def handle(self, ping: Ping, flow: Flow) -> None:
        self.attempts.append(ping.seq)
        raise ServiceUnavailable("downstream away")

    async def gave_up(self, spec, message, flow, error) -> None:
        self.given_up.append((message.text, error))


FLAKY = {"processors": {"flaky": {"input": "persistent://tg/flow/flaky:{id}"}}}


async def test_a_transient_failure_is_redelivered_with_backoff_then_given_up_and_reported(connect, tmp_path):
    bus = await connect()
    flow_id = unique("flaky")
    settings = settings_for(tmp_path, max_attempts=3, retry_backoff=0.2)
    async with Stack(bus, settings, [config_factory({"flaky": FLAKY}), Flaky]) as stack:
        await start_flow(bus, flow_id, blueprint="flaky")
        flaky = stack["flaky"]
        await wait_until_async(lambda: flow_id in flaky.flows, what="the flow")
        body, props = codec.encode(Ping(text="doomed"))
        began = time.monotonic()
        await bus.publish(Topic.parse(f"persistent://tg/flow/flaky:{flow_id}"), body, props)
        await wait_until_async(lambda: flaky.given_up, timeout=60, what="the runtime to give up")
        took = time.monotonic() - began
    assert len(flaky.attempts) == 3, "three deliveries: the first and two redeliveries"
    assert flaky.given_up and flaky.given_up[0][0] == "doomed" and "after 3 attempts" in flaky.given_up[0][1]
    assert took >= 0.2 + 0.4, "redeliveries wait out a doubling backoff"


class PushesLost(InprocBackend):
    """An in-process bus whose config pushes never arrive, as while a broker connection is down."""

    @asynccontextmanager
    async def subscribe(self, topic, subscription, **kwargs):
        if topic == CONFIG_PUSH_TOPIC:
            yield _nothing()
            return
        async with super().subscribe(topic, subscription, **kwargs) as deliveries:
            yield deliveries


async def _nothing():
    await asyncio.Event().wait()
    yield  # pragma: no cover


async def test_a_processor_catches_up_on_config_pushes_missed_while_disconnected(tmp_path, monkeypatch):
    monkeypatch.setattr("tracegraph.base.processor.RESYNC_CHECK_SECONDS", 0.1)
    bus = PushesLost()
    flow_id = unique("missed")
    settings = settings_for(tmp_path)
    async with Stack(bus, settings, [config_factory()]):
        async with EchoProcessor(bus, settings) as echo:
            await start_flow(bus, flow_id)
            await asyncio.sleep(0.5)
            assert flow_id not in echo.flows, "the push was lost, so nothing told the processor yet"
            bus.epoch = 1  # the connection came back
            await wait_until_async(lambda: flow_id in echo.flows, what="the processor to catch up")


def _vector_blueprint() -> dict:
    pair = lambda name: {"request": f"non-persistent://tg/request/{name}:{{id}}",  # noqa: E731
                         "response": f"non-persistent://tg/response/{name}:{{id}}"}
    return {"processors": {"document-embeddings": {
        "input": "persistent://tg/flow/chunk-load:{id}", "triples": "persistent://tg/flow/triples-store:{id}",
        "embeddings": pair("embeddings"), "query": pair("document-embeddings"),
        "remove": pair("document-embeddings-remove"), "keyword-query": pair("passage-keywords")}}}


async def test_an_indexer_that_gives_up_records_it_on_the_chunk(connect, tmp_path):
    bus = await connect()
    flow_id = unique("unindexed")
    settings = settings_for(tmp_path, max_attempts=2, retry_backoff=0.05, unavailable_timeout=0.3)
    async with Stack(bus, settings, [config_factory({"vectors": _vector_blueprint()}), DocumentEmbeddingsProcessor]
                     ) as stack:
        await start_flow(bus, flow_id, blueprint="vectors")
        indexer = stack["document-embeddings"]
        await wait_until_async(lambda: flow_id in indexer.flows, what="the flow")
        chunk = TextChunk(metadata=Metadata(id="urn:chunk:lonely", root="urn:doc:d", user="u", collection="c"),
                          text="No embeddings service is running.", document="urn:doc:d", index=1)
        recorded = Topic.parse(f"persistent://tg/flow/triples-store:{flow_id}")
        async with bus.subscribe(recorded, "observer") as deliveries:
            body, props = codec.encode(chunk)
            await bus.publish(Topic.parse(f"persistent://tg/flow/chunk-load:{flow_id}"), body, props)
            delivery = await asyncio.wait_for(anext(aiter(deliveries)), 30)
            await delivery.ack()
    [triple] = codec.decode(delivery.body, delivery.properties, Triples).triples
    assert triple.s.iri == "urn:chunk:lonely" and triple.p.iri.endswith("indexingError")
    assert triple.g == "urn:graph:source" and triple.o.value.startswith("document-embeddings: after 2 attempts")
