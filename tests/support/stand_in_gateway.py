"""A real gateway whose flow `default` offers stand-in services: each keeps the requests it gets and
answers from a script, so route tests see exactly what the gateway sent (the real services are
exercised by the integration tests)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import aiohttp

from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.errors import ConfigError, RemoteError
from tracegraph.base.settings import RuntimeSettings
from tracegraph.flow.gateway.app import GatewayProcessor
from tracegraph.launch.stack import Stack
from tracegraph.schemas.base import Message, ServiceResponse

from support.stack import config_factory


class StandIn:
    """A request client of a service that answers every request with `script(request)`, keeping the
    requests; answers are marked final, as a processor's base class marks them, and an error answer is
    raised as RemoteError, as the real client raises it."""

    def __init__(self, script) -> None:
        self.script = script
        self.requests: list[Message] = []

    async def request(self, message: Message) -> ServiceResponse:
        self.requests.append(message)
        response = self.script(message).as_final()
        if response.error is not None:
            raise RemoteError(response.error.type, response.error.message)
        return response

    async def stream(self, message: Message) -> AsyncIterator[ServiceResponse]:
        yield await self.request(message)


class GatewayWithStandIns(GatewayProcessor):
    """The real gateway, whose flow `default` offers the stand-in services."""

    async def client(self, flow_id, kind, request, response):
        if flow_id != "default" or kind not in self.stand_ins:
            raise ConfigError(f"no running flow {flow_id!r} offers {kind!r}")
        return self.stand_ins[kind]


@contextlib.asynccontextmanager
async def stand_in_gateway(tmp_path, stand_ins: dict[str, StandIn], tokens: str | None):
    """(base URL, the stand-ins by service) of a gateway with `tokens` (None: an open gateway)."""

    def build(backend, settings):
        built = GatewayWithStandIns(backend, settings)
        built.stand_ins = stand_ins
        return built

    token_file = None
    if tokens is not None:
        token_file = tmp_path / "tokens"
        token_file.write_text(tokens)
    backend = InprocBackend()
    settings = RuntimeSettings(data_dir=tmp_path, gateway_port=0, request_timeout=10, gateway_tokens=token_file)
    try:
        async with Stack(backend, settings, [config_factory(), build]) as stack:
            yield f"http://127.0.0.1:{stack['gateway'].port}", stand_ins
    finally:
        await backend.aclose()


async def call(url: str, method: str, path: str, token: str | None, **kwargs) -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as http:
        async with http.request(method, url + path, headers=headers, **kwargs) as r:
            return r.status, await r.json()


async def socket_reply(url: str, token: str, frame: dict) -> dict:
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(url + "/api/v1/socket") as ws:
            await ws.send_json({"type": "auth", "token": token})
            assert (await ws.receive_json(timeout=10))["type"] == "auth-ok"
            await ws.send_json({"id": "q", **frame})
            return await ws.receive_json(timeout=10)
