"""The processor runtime on every backend: flows from the config service, errors, retries, bad input."""

from __future__ import annotations

import asyncio

import pytest

from tracegraph.base.bus import codec
from tracegraph.base.bus.topic import Topic
from tracegraph.base.client import FINAL
from tracegraph.base.errors import RemoteError, RequestTimeout
from tracegraph.launch.stack import Stack
from tracegraph.schemas.base import Ping, Pong
from tracegraph.schemas.config import ConfigRequest, FlowRequest

from support.echo import EchoProcessor
from support.names import unique
from support.stack import config_factory, echo_client, flow_client, settings_for, start_flow, until_answered

pytestmark = pytest.mark.timeout(90)


async def test_flow_start_and_stop_through_the_config_service(connect, tmp_path):
    bus = await connect()
    flow_id = unique("flow")
    async with Stack(bus, settings_for(tmp_path), [config_factory(), EchoProcessor]) as stack:
        echo = stack["echo"]
        async with flow_client(bus) as flows, echo_client(bus, flow_id) as client:
            await flows.request(flow_request("start-flow", flow_id, parameters={"repeat": "3"}))
            await until_answered(client)
            assert flow_id in echo.flows
            replies = [r async for r in client.stream(Ping(text="hi"))]
            assert [(r.text, r.seq) for r in replies] == [(f"{flow_id}:hi", i) for i in range(3)]
            assert replies[-1].end_of_stream and not any(r.end_of_stream for r in replies[:-1])

            await flows.request(flow_request("stop-flow", flow_id))
            for _ in range(100):
                if flow_id not in echo.flows:
                    break
                await asyncio.sleep(0.05)
            assert flow_id not in echo.flows
            with pytest.raises(RequestTimeout):
                await client.request(Ping(text="anyone?"), timeout=0.5)


async def test_processor_started_after_the_flow_learns_its_topics(connect, tmp_path):
    bus = await connect()
    flow_id = unique("late")
    settings = settings_for(tmp_path)
    async with Stack(bus, settings, [config_factory()]):
        await start_flow(bus, flow_id)
        async with EchoProcessor(bus, settings) as late, echo_client(bus, flow_id) as client:
            assert flow_id in late.flows
            reply = await until_answered(client)
            assert reply.text == f"{flow_id}:ready?"


async def test_flows_survive_a_config_service_restart(connect, tmp_path):
    bus = await connect()
    flow_id = unique("durable")
    settings = settings_for(tmp_path)
    async with Stack(bus, settings, [config_factory()]):
        await start_flow(bus, flow_id)
    async with Stack(bus, settings, [config_factory(), EchoProcessor]) as stack:
        assert flow_id in stack["echo"].flows
        async with flow_client(bus) as flows:
            listed = await flows.request(flow_request("list-flows"))
        assert flow_id in listed.flow_ids


async def test_handler_error_becomes_an_error_response_and_service_goes_on(connect, tmp_path):
    bus = await connect()
    flow_id = unique("err")
    async with Stack(bus, settings_for(tmp_path), [config_factory(), EchoProcessor]):
        async with flow_client(bus) as flows, echo_client(bus, flow_id) as client:
            await flows.request(flow_request("start-flow", flow_id))
            await until_answered(client)
            with pytest.raises(RemoteError) as failure:
                await client.request(Ping(text="boom"))
            assert failure.value.type == "echo-error" and "asked to fail" in failure.value.message
            assert (await client.request(Ping(text="after"))).text == f"{flow_id}:after"


async def test_service_marks_its_final_response_and_sends_request_callers_bare_marks(connect, tmp_path):
    """Every response says whether it is final (an error always is); to a caller of request(), which
    keeps only the final one, the earlier responses go as bare marks with no body."""
    bus = await connect()
    flow_id = unique("final")
    responses = Topic.parse(f"non-persistent://tg/response/echo:{flow_id}")
    async with Stack(bus, settings_for(tmp_path), [config_factory(), EchoProcessor]):
        async with flow_client(bus) as flows, echo_client(bus, flow_id) as client:
            await flows.request(flow_request("start-flow", flow_id, parameters={"repeat": "3"}))
            await until_answered(client)
            async with bus.subscribe(responses, "observer") as seen:
                assert [r.seq async for r in client.stream(Ping(text="hi"))] == [0, 1, 2]
                assert (await client.request(Ping(text="hi"))).seq == 2
                with pytest.raises(RemoteError):
                    await client.request(Ping(text="boom"))
                marks = []
                async for d in seen:
                    await d.ack()
                    seq = codec.decode(d.body, d.properties, Pong).seq if d.body else None
                    marks.append((seq, d.properties[FINAL]))
                    if len(marks) == 7:
                        break
    assert marks == [(0, "0"), (1, "0"), (2, "1"),  # streamed in full
                     (None, "0"), (None, "0"), (2, "1"),  # to request(): bare, then the answer
                     (0, "1")]  # the error response is final too


async def test_service_retries_a_transient_error_before_answering(connect, tmp_path):
    bus = await connect()
    flow_id = unique("flaky")
    async with Stack(bus, settings_for(tmp_path), [config_factory(), EchoProcessor]) as stack:
        async with flow_client(bus) as flows, echo_client(bus, flow_id) as client:
            await flows.request(flow_request("start-flow", flow_id))
            await until_answered(client)
            reply = await client.request(Ping(text="flaky"))
            assert stack["echo"].transient_failures == 2
    assert reply.text == f"{flow_id}:flaky"


async def test_malformed_and_wrong_schema_bodies_get_clear_errors(connect, tmp_path):
    bus = await connect()
    flow_id = unique("bad")
    requests = Topic.parse(f"non-persistent://tg/request/echo:{flow_id}")
    responses = Topic.parse(f"non-persistent://tg/response/echo:{flow_id}")
    async with Stack(bus, settings_for(tmp_path), [config_factory(), EchoProcessor]) as stack:
        async with flow_client(bus) as flows, echo_client(bus, flow_id) as client:
            await flows.request(flow_request("start-flow", flow_id))
            await until_answered(client)
            async with bus.subscribe(responses, "observer") as seen:
                await bus.publish(requests, b"{not json", {"id": "m1", "schema": "ping", "schema-version": "1"})
                wrong, props = codec.encode(ConfigRequest(operation="config"), {"id": "m2"})
                await bus.publish(requests, wrong, props)
                await bus.publish(requests, b"{}", {"id": "m3"})
                errors = {}
                async for d in seen:
                    await d.ack()
                    errors[d.properties["id"]] = codec.decode(d.body, d.properties, Pong).error
                    if len(errors) == 3:
                        break
            assert all(e.type == "bad-request" for e in errors.values())
            assert "invalid 'ping' message" in errors["m1"].message
            assert "expected schema 'ping', got 'config-request'" in errors["m2"].message
            assert "no 'schema' property" in errors["m3"].message
            assert stack["echo"].stats.undecodable == 3
            assert (await client.request(Ping(text="still here"))).text == f"{flow_id}:still here"


async def test_bad_flow_requests_are_refused_with_reasons(connect, tmp_path):
    bus = await connect()
    async with Stack(bus, settings_for(tmp_path), [config_factory()]):
        async with flow_client(bus) as flows:
            with pytest.raises(RemoteError, match="unknown flow blueprint 'nope'"):
                await flows.request(flow_request("start-flow", "x1", blueprint="nope"))
            with pytest.raises(RemoteError, match="unknown flow parameter"):
                await flows.request(flow_request("start-flow", "x2", parameters={"size": "1"}))
            with pytest.raises(RemoteError, match="invalid flow id"):
                await flows.request(flow_request("start-flow", "bad id!"))
            with pytest.raises(RemoteError, match="unknown flow 'ghost'"):
                await flows.request(flow_request("stop-flow", "ghost"))
            await flows.request(flow_request("start-flow", "twice"))
            with pytest.raises(RemoteError, match="already running"):
                await flows.request(flow_request("start-flow", "twice"))
            with pytest.raises(RemoteError, match="used by running flow"):
                await flows.request(flow_request("delete-blueprint", None, blueprint="echo"))
            await flows.request(flow_request("stop-flow", "twice"))


def flow_request(operation: str, flow_id: str | None = None, blueprint: str = "echo", parameters=None):
    return FlowRequest(operation=operation, flow_id=flow_id, blueprint_name=blueprint, parameters=parameters)


async def test_a_stack_waits_until_its_processors_joined_a_new_flow(connect, tmp_path):
    bus = await connect()
    flow_id = unique("joined")
    async with Stack(bus, settings_for(tmp_path), [config_factory(), EchoProcessor]) as stack:
        await start_flow(bus, flow_id)
        await stack.joined(flow_id)
        assert flow_id in stack["echo"].flows, "joined() returned before the processor had subscribed"
