"""The HTTP gateway: REST routes in front of the bus, in upstream TrustGraph's shapes.

`POST /api/v1/{config|flow}` reach the config service; `POST /api/v1/flow/{flow}/service/{kind}`
reaches a flow's interface and returns its final response. Service errors come back as
HTTP 200 with `{"error": {"type", "message"}}`, as upstream clients expect.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from tracegraph.base.bus.topic import (
    CONFIG_REQUEST_TOPIC, CONFIG_RESPONSE_TOPIC, FLOW_REQUEST_TOPIC, FLOW_RESPONSE_TOPIC, Topic,
)
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import RemoteError, RequestTimeout
from tracegraph.base.processor import FlowProcessor
from tracegraph.flow.gateway.services import FLOW_SERVICES, GLOBAL_SERVICES

log = logging.getLogger(__name__)

MAX_BODY = 16 * 1024 * 1024
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _json_error(status: int, type_: str, message: str) -> web.Response:
    return web.json_response({"error": {"type": type_, "message": message}}, status=status)


class GatewayProcessor(FlowProcessor):
    """Serves the REST API; follows config pushes to learn each flow's interfaces."""

    name = "gateway"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.interfaces: dict[str, dict[str, Any]] = {}
        self._clients: dict[tuple[str, str], RequestClient] = {}
        self.port: int | None = None

    async def apply_config(self, version: int, config: Mapping[str, Mapping[str, str]]) -> None:
        async with self._applying:
            if version <= self.config_version:
                return
            self.config_version = version
            flows = {fid: json.loads(text).get("interfaces", {}) for fid, text in config.get("flow", {}).items()}
            for key in [k for k in self._clients if k[0] and flows.get(k[0]) != self.interfaces.get(k[0])]:
                await self._clients.pop(key).stop()
            self.interfaces = flows

    async def start(self) -> None:
        await super().start()
        self._stack.push_async_callback(self._stop_clients)
        app = web.Application(client_max_size=MAX_BODY, middlewares=[self._auth])
        app.router.add_post("/api/v1/flow/{flow}/service/{kind}", self._flow_service)
        app.router.add_post("/api/v1/{kind}", self._global_service)
        app.router.add_get("/api/v1/health", self._health)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        self._stack.push_async_callback(runner.cleanup)
        host = self.settings.gateway_host
        if self.settings.gateway_secret is None and host not in LOOPBACK:
            log.warning("no TG_GATEWAY_SECRET set: binding to 127.0.0.1 instead of %s", host)
            host = "127.0.0.1"
        site = web.TCPSite(runner, host, self.settings.gateway_port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        auth = "bearer token required" if self.settings.gateway_secret else "no auth (loopback only)"
        log.info("gateway listening on http://%s:%d/ (%s)", host, self.port, auth)

    async def _stop_clients(self) -> None:
        for client in self._clients.values():
            await client.stop()
        self._clients.clear()

    @web.middleware
    async def _auth(self, request: web.Request, handler):
        secret = self.settings.gateway_secret
        if secret is not None and request.path != "/api/v1/health":
            given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            if not hmac.compare_digest(given.encode(), secret.get_secret_value().encode()):
                return web.json_response({"error": "auth failure"}, status=401)
        return await handler(request)

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "config-version": self.config_version,
                                  "flows": sorted(self.interfaces)})

    async def _global_service(self, request: web.Request) -> web.Response:
        kind = request.match_info["kind"]
        if kind not in GLOBAL_SERVICES:
            return _json_error(404, "unknown-service", f"no service {kind!r}; try one of {', '.join(GLOBAL_SERVICES)}")
        topics = {"config": (CONFIG_REQUEST_TOPIC, CONFIG_RESPONSE_TOPIC),
                  "flow": (FLOW_REQUEST_TOPIC, FLOW_RESPONSE_TOPIC)}[kind]
        return await self._call(request, ("", kind), *topics, *GLOBAL_SERVICES[kind])

    async def _flow_service(self, request: web.Request) -> web.Response:
        flow_id, kind = request.match_info["flow"], request.match_info["kind"]
        interfaces = self.interfaces.get(flow_id)
        if interfaces is None:
            return _json_error(404, "unknown-flow", f"no running flow {flow_id!r}; running: "
                               f"{', '.join(sorted(self.interfaces)) or 'none'}")
        topics = interfaces.get(kind)
        if kind not in FLOW_SERVICES or not isinstance(topics, Mapping):
            offered = sorted(k for k, v in interfaces.items() if k in FLOW_SERVICES and isinstance(v, Mapping))
            return _json_error(404, "unknown-service",
                               f"flow {flow_id!r} has no service {kind!r}; it offers: {', '.join(offered) or 'none'}")
        return await self._call(request, (flow_id, kind), Topic.parse(topics["request"]),
                                Topic.parse(topics["response"]), *FLOW_SERVICES[kind])

    async def _call(self, request: web.Request, key: tuple[str, str], request_topic: Topic,
                    response_topic: Topic, request_type, response_type) -> web.Response:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _json_error(400, "bad-request", "request body is not valid JSON")
        if not isinstance(body, dict):
            return _json_error(400, "bad-request", "request body must be a JSON object")
        try:
            message = request_type.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            return _json_error(400, "bad-request", f"{where}: {first['msg']}")
        client = self._clients.get(key)
        if client is None:
            client = await RequestClient(self.backend, request_topic, response_topic, request_type,
                                         response_type, owner="gateway",
                                         timeout=self.settings.request_timeout).start()
            if key in self._clients:  # another request won the race while we subscribed
                await client.stop()
                client = self._clients[key]
            else:
                self._clients[key] = client
        try:
            response = await client.request(message)
        except RemoteError as exc:
            return web.json_response({"error": {"type": exc.type, "message": exc.message}})
        except RequestTimeout as exc:
            return _json_error(504, "timeout", str(exc))
        return web.json_response(response.model_dump(mode="json", by_alias=True, exclude_none=True))
