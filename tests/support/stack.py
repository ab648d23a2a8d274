"""Helpers to run the config service plus chosen processors on a backend, as tests need them."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
from pathlib import Path

from tracegraph.base.bus.protocol import Backend
from tracegraph.base.bus.topic import FLOW_REQUEST_TOPIC, FLOW_RESPONSE_TOPIC, Topic
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import RequestTimeout
from tracegraph.base.settings import RuntimeSettings
from tracegraph.flow.config.processor import ConfigProcessor
from tracegraph.launch.stack import Stack
from tracegraph.schemas.base import Ping, Pong
from tracegraph.schemas.config import FlowRequest, FlowResponse

from support.echo import ECHO_BLUEPRINT
from support.names import unique


def settings_for(tmp_path: Path, **overrides) -> RuntimeSettings:
    return RuntimeSettings(data_dir=tmp_path, request_timeout=10, **overrides)


def config_factory(blueprints: dict | None = None):
    def build(backend: Backend, settings: RuntimeSettings) -> ConfigProcessor:
        seeds = {"echo": json.dumps(ECHO_BLUEPRINT), **{k: json.dumps(v) for k, v in (blueprints or {}).items()}}
        return ConfigProcessor(backend, settings, blueprints=lambda: seeds)
    return build


def flow_client(backend: Backend) -> RequestClient[FlowRequest, FlowResponse]:
    return RequestClient(backend, FLOW_REQUEST_TOPIC, FLOW_RESPONSE_TOPIC, FlowRequest, FlowResponse, timeout=10)


def echo_client(backend: Backend, flow_id: str) -> RequestClient[Ping, Pong]:
    return RequestClient(backend, Topic.parse(f"non-persistent://tg/request/echo:{flow_id}"),
                         Topic.parse(f"non-persistent://tg/response/echo:{flow_id}"), Ping, Pong, timeout=10)


async def until_answered(client: RequestClient[Ping, Pong], within: float = 10.0) -> Pong:
    """Retry a ping until a processor has joined the flow and answers."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        try:
            return await client.request(Ping(text="ready?"), timeout=0.5)
        except RequestTimeout:
            if asyncio.get_running_loop().time() > deadline:
                raise


async def start_flow(backend: Backend, flow_id: str, blueprint: str = "echo",
                     parameters: dict[str, str] | None = None) -> None:
    """Start a flow through the flow service, as `tg-start-flow` would."""
    async with flow_client(backend) as flows:
        await flows.request(FlowRequest(operation="start-flow", flow_id=flow_id, blueprint_name=blueprint,
                                        parameters=parameters))


async def wait_until_async(check, timeout: float = 10.0, what: str = "condition"):
    """Poll `check()` (a function or a coroutine function) until it returns something true; returns that."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def config_with_flow(bus: Backend, tmp_path: Path, prefix: str, blueprint: str = "echo"):
    """A config service on `bus` with a fresh flow of `blueprint` started; yields (flow id, settings)."""
    flow_id, settings = unique(prefix), settings_for(tmp_path)
    async with Stack(bus, settings, [config_factory()]):
        await start_flow(bus, flow_id, blueprint)
        yield flow_id, settings
