"""The HTTP gateway: REST routes in front of the bus, in upstream TrustGraph's shapes.

`POST /api/v1/{config|flow}` reach the config service; `POST /api/v1/flow/{flow}/service/{kind}`
reaches a flow's interface and returns its final response. Service errors come back as
HTTP 200 with `{"error": {"type", "message"}}`, as upstream clients expect.
"""

from __future__ import annotations

import hmac
import json
import logging
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from tracegraph.base.client import RequestClient
from tracegraph.base.errors import ConfigError, RemoteError, RequestTimeout
from tracegraph.base.interfaces import InterfaceUser
from tracegraph.flow.gateway.services import FLOW_IMPORTS, FLOW_SERVICES, GLOBAL_SERVICES

log = logging.getLogger(__name__)

JSON_OVERHEAD = 1024 * 1024  # room for metadata around a base64 document


def max_body(max_document_bytes: int) -> int:
    """The largest request body: a base64-encoded document of the librarian's limit, plus its JSON.

    >>> max_body(3 * 1024 * 1024)
    5242880
    """
    return (max_document_bytes + 2) // 3 * 4 + JSON_OVERHEAD
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _json_error(status: int, type_: str, message: str) -> web.Response:
    return web.json_response({"error": {"type": type_, "message": message}}, status=status)


class GatewayProcessor(InterfaceUser):
    """Serves the REST API; follows config pushes to learn each flow's interfaces."""

    name = "gateway"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.port: int | None = None
        self._global: dict[str, RequestClient[Any, Any]] = {}

    async def start(self) -> None:
        await super().start()
        self._stack.push_async_callback(self._stop_global_clients)
        app = web.Application(client_max_size=max_body(self.settings.max_document_bytes),
                              middlewares=[self._auth, self._oversize])
        app.router.add_post("/api/v1/flow/{flow}/service/{kind}", self._flow_service)
        app.router.add_post("/api/v1/flow/{flow}/import/{kind}", self._flow_import)
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

    async def _stop_global_clients(self) -> None:
        clients, self._global = list(self._global.values()), {}
        for client in clients:
            await client.stop()

    @web.middleware
    async def _oversize(self, request: web.Request, handler):
        """A body over the limit gets our JSON error shape, not aiohttp's plain-text 413."""
        try:
            return await handler(request)
        except web.HTTPRequestEntityTooLarge:
            limit = max_body(self.settings.max_document_bytes)
            return _json_error(413, "too-large", f"request body over {limit:,} bytes "
                               "(documents are limited by TG_MAX_DOCUMENT_BYTES)")

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
        request_type, response_type, (request_topic, response_topic) = GLOBAL_SERVICES[kind]
        client = self._global.get(kind)
        if client is None:
            client = await RequestClient(self.backend, request_topic, response_topic, request_type, response_type,
                                         owner="gateway", timeout=self.settings.request_timeout).start()
            if kind in self._global:  # another request won the race while we subscribed
                await client.stop()
            self._global.setdefault(kind, client)
        return await self._call(request, self._global[kind], request_type)

    async def _flow_service(self, request: web.Request) -> web.Response:
        flow_id, kind = request.match_info["flow"], request.match_info["kind"]
        if kind not in FLOW_SERVICES:
            return _json_error(404, "unknown-service", f"no flow service {kind!r}; try one of {', '.join(FLOW_SERVICES)}")
        request_type, response_type = FLOW_SERVICES[kind]
        try:
            client = await self.client(flow_id, kind, request_type, response_type)
        except ConfigError as exc:
            return _json_error(404, "unknown-flow" if flow_id not in self.interfaces else "unknown-service", str(exc))
        if request.query.get("stream", "").lower() in {"1", "true", "yes"}:
            return await self._stream(request, client, request_type)
        return await self._call(request, client, request_type)

    async def _stream(self, request: web.Request, client: RequestClient[Any, Any], request_type) -> web.StreamResponse:
        """Every response as it arrives, one JSON object per line (NDJSON); an error ends the stream."""
        message = await self._message(request, request_type)
        if isinstance(message, web.Response):
            return message
        reply = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await reply.prepare(request)
        try:
            async for response in client.stream(message):
                line = response.model_dump_json(by_alias=True, exclude_none=True)
                await reply.write(line.encode() + b"\n")
        except RemoteError as exc:
            await reply.write(json.dumps({"error": {"type": exc.type, "message": exc.message}}).encode() + b"\n")
        except RequestTimeout as exc:
            await reply.write(json.dumps({"error": {"type": "timeout", "message": str(exc)}}).encode() + b"\n")
        await reply.write_eof()
        return reply

    async def _flow_import(self, request: web.Request) -> web.Response:
        """Publish one message on a flow's one-way interface (bulk triples, …); answers once it is sent."""
        flow_id, kind = request.match_info["flow"], request.match_info["kind"]
        if kind not in FLOW_IMPORTS:
            return _json_error(404, "unknown-service", f"no import {kind!r}; try one of {', '.join(FLOW_IMPORTS)}")
        message = await self._message(request, FLOW_IMPORTS[kind])
        if isinstance(message, web.Response):
            return message
        try:
            await self.send(flow_id, kind, message)
        except ConfigError as exc:
            return _json_error(404, "unknown-flow", str(exc))
        return web.json_response({})

    async def _message(self, request: web.Request, request_type) -> Any:
        """The request body as `request_type`, or the 400 response that says what is wrong with it."""
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _json_error(400, "bad-request", "request body is not valid JSON")
        if not isinstance(body, dict):
            return _json_error(400, "bad-request", "request body must be a JSON object")
        try:
            return request_type.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            return _json_error(400, "bad-request", f"{where}: {first['msg']}")

    async def _call(self, request: web.Request, client: RequestClient[Any, Any], request_type) -> web.Response:
        message = await self._message(request, request_type)
        if isinstance(message, web.Response):
            return message
        try:
            response = await client.request(message)
        except RemoteError as exc:
            return web.json_response({"error": {"type": exc.type, "message": exc.message}})
        except RequestTimeout as exc:
            return _json_error(504, "timeout", str(exc))
        return web.json_response(response.model_dump(mode="json", by_alias=True, exclude_none=True))
