"""A client that stops reading mid-stream (`tg-invoke-graph-rag … | head -3`) is one INFO line in the
gateway's log, never an ERROR or a traceback: over NDJSON and over the WebSocket, with real HTTP clients."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import aiohttp
import pytest

from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Service
from tracegraph.cli.socket_client import socket_url
from tracegraph.launch.stack import Stack
from tracegraph.schemas.base import Ping, Pong

from support.names import unique
from support.stack import config_factory, settings_for, start_flow, wait_until_async

pytestmark = pytest.mark.timeout(60)

PING_TOPICS = {"request": "non-persistent://tg/request/ping:{id}", "response": "non-persistent://tg/response/ping:{id}"}
TICKER_BLUEPRINT = {"description": "a slow stream of pongs", "processors": {"ping": {"request": PING_TOPICS}},
                    "interfaces": {"ping": PING_TOPICS}}
TICKS = 500  # 10 s of responses: the client is long gone before the last


class TickingPing(FlowProcessor):
    """Answers Ping with `seq` pongs, 20 ms apart: a stream still running when its client leaves."""

    name = "ping"
    request = Service("request", Ping, Pong)

    @request.handler
    async def answer(self, ping: Ping, flow: Flow) -> AsyncIterator[Pong]:
        for n in range(ping.seq):
            yield Pong(text="tick", seq=n)
            await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def ticking_gateway(tmp_path) -> AsyncIterator[tuple[str, str]]:
    """(gateway URL, flow id) of a gateway in front of the ticking service."""
    backend = InprocBackend()
    flow_id = unique("ticker")
    try:
        async with Stack(backend, settings_for(tmp_path, gateway_port=0),
                         [config_factory({"ticker": TICKER_BLUEPRINT}), "gateway", TickingPing]) as stack:
            await start_flow(backend, flow_id, "ticker")
            await stack.joined(flow_id)
            await wait_until_async(lambda: flow_id in stack["gateway"].interfaces, what="the gateway to see the flow")
            yield f"http://127.0.0.1:{stack['gateway'].port}/", flow_id
    finally:
        await backend.aclose()


async def until_logged(caplog: pytest.LogCaptureFixture, words: str) -> None:
    await wait_until_async(lambda: any(words in r.getMessage() for r in caplog.records), timeout=15,
                           what=f"a log line saying {words!r}")


def assert_one_quiet_line(caplog: pytest.LogCaptureFixture, words: str) -> None:
    told = [r for r in caplog.records if words in r.getMessage()]
    assert [r.levelno for r in told] == [logging.INFO], told
    loud = [f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records
            if r.levelno >= logging.ERROR or r.exc_info]
    assert not loud, loud


async def test_an_ndjson_client_leaving_mid_stream_is_one_info_line(tmp_path, caplog):
    async with ticking_gateway(tmp_path) as (url, flow_id):
        caplog.set_level(logging.INFO)
        async with aiohttp.ClientSession() as session:
            response = await session.post(f"{url}api/v1/flow/{flow_id}/service/ping?stream=true", json={"seq": TICKS})
            assert b'"tick"' in await response.content.readline()
            response.close()  # drops the connection with the stream half read, as `| head` does
        await until_logged(caplog, "left before the end of its stream")
        await asyncio.sleep(0.2)  # room for anything logged after the first failed write
    assert_one_quiet_line(caplog, "left before the end of its stream")


async def test_a_socket_client_leaving_mid_stream_is_one_info_line(tmp_path, caplog):
    async with ticking_gateway(tmp_path) as (url, flow_id):
        caplog.set_level(logging.INFO)
        session = aiohttp.ClientSession()
        ws = await session.ws_connect(socket_url(url))
        await ws.send_json({"id": "t", "service": "ping", "flow": flow_id, "request": {"seq": TICKS}})
        assert (await ws.receive_json(timeout=10))["response"]["text"] == "tick"
        await session.close()  # the connection goes without a WebSocket close handshake
        await until_logged(caplog, "socket client left")
        await asyncio.sleep(0.2)
    assert_one_quiet_line(caplog, "socket client left")
