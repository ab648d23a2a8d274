"""The HTTP gateway: REST routes and the multiplexed WebSocket in front of the bus, in upstream
TrustGraph's shapes, plus the OpenAPI document and the live trace viewer.

`POST /api/v1/{config|flow|librarian}` reach the global services; `POST
/api/v1/flow/{flow}/service/{kind}` reaches a flow's interface and returns its final response, as do
the short routes `POST /api/v1/{search|sparql|review}?flow=` and, with a query string for a body,
`GET /api/v1/{temporal|review}` (see `query_routes`). The architecture routes `GET
/api/v1/{ownership|dependencies|memory}/{entity}` and `POST /api/v1/intent-check` answer 404 for an
unknown entity and 400 for a bad parameter. `GET /api/v1/processing?flow=` counts the messages waiting
at each stage queue of a flow (see `processing`).
Service errors come back as HTTP 200 with `{"error": {"type", "message"}}`, as upstream clients
expect; the gateway's own refusals and failures below it use 4xx/5xx with the same body (see
`limits` and `refusals`). Every request is bound to the caller's user (see `tenancy`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import socket
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from aiohttp import hdrs, web

from tracegraph.base.client import RequestClient
from tracegraph.base.errors import ConfigError, RemoteError
from tracegraph.base.interfaces import InterfaceUser
from tracegraph.flow.gateway.auth import Authenticator, Identity
from tracegraph.flow.gateway.dispatch import Dispatcher
from tracegraph.flow.gateway.limits import MAX_JSON_DEPTH, parse_json
from tracegraph.flow.gateway.openapi import openapi_document
from tracegraph.flow.gateway.processing import stage_backlogs
from tracegraph.flow.gateway.query_routes import ENTITY_ROUTES, INTENT_ROUTE, QUERY_ROUTES
from tracegraph.flow.gateway.refusals import GatewayError, error_body, failure_of, retry_after
from tracegraph.flow.gateway.services import DEFAULT_FLOW, GLOBAL_SERVICES, SHORTCUTS
from tracegraph.flow.gateway.socket import response_json, serve_socket
from tracegraph.schemas.config import ConfigRequest
from tracegraph.schemas.fields import max_question_bytes

log = logging.getLogger(__name__)

JSON_OVERHEAD = 1024 * 1024  # room for metadata around a base64 document
# The longest request line: room for a GET route's query string with every value at its longest, percent-encoded
# (see the unit test). Under aiohttp's default (8 KiB) such a request would be refused in plain text, with a logged
# traceback, before the gateway could answer it in its own shape.
MAX_REQUEST_LINE = 256 * 1024
STATIC = Path(__file__).parent / "static"
CONTENT_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
# The viewer's few small files, read once at import (serving them never touches the disk in the loop).
VIEWER_FILES = {f.name: (f.read_bytes(), CONTENT_TYPES[f.suffix]) for f in sorted(STATIC.glob("*"))
                if f.suffix in CONTENT_TYPES}
# Service errors the architecture routes answer with their HTTP meaning (other routes keep upstream's 200).
ARCHITECTURE_STATUS = {"not-found": 404, "unknown-collection": 404, "bad-request": 400}
PUBLIC_PATHS = ("/api/v1/health", "/api/v1/openapi.json", "/api/v1/socket", "/viewer")  # the socket authenticates in-band


def max_body(max_document_bytes: int) -> int:
    """The largest request body: a base64-encoded document of the librarian's limit, plus its JSON.

    >>> max_body(3 * 1024 * 1024)
    5242880
    """
    return (max_document_bytes + 2) // 3 * 4 + JSON_OVERHEAD


IDENTITY = web.RequestKey("identity", Identity)  # set by the auth middleware on every non-public request
OPENAPI = openapi_document()  # built at import: it reads package metadata from disk

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def port_taken(port: int) -> ConfigError:
    return ConfigError(f"port {port} is in use; choose another with --gateway-port")


def check_port_free(host: str, port: int) -> None:
    """ConfigError (`port_taken`) if `port` is already taken on `host`. Launchers ask before starting
    anything: the gateway starts last, after the processors have loaded their models."""
    if port == 0:
        return
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the gateway binds: TIME_WAIT is no owner
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise port_taken(port) from None
            # any other problem with the address is the gateway's to report when it binds


def _json_error(status: int, type_: str, message: str, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.json_response(error_body(type_, message), status=status, headers=headers)


class GatewayProcessor(InterfaceUser):
    """Serves REST, the WebSocket, the OpenAPI document and the viewer; follows config pushes
    to learn each flow's interfaces."""

    name = "gateway"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.port: int | None = None
        self._global: dict[str, RequestClient[Any, Any]] = {}
        self.auth = Authenticator(None)
        self.body_limit = max_body(self.settings.max_document_bytes)
        self.max_json_depth: int = getattr(self.settings, "gateway_max_json_depth", MAX_JSON_DEPTH)
        self.dispatcher = Dispatcher(self)

    async def start(self) -> None:
        try:
            max_question_bytes()  # a bad TG_MAX_QUESTION_BYTES stops the gateway here, not each request
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self.auth = await asyncio.to_thread(Authenticator.from_settings, self.settings)  # may read the token file
        await super().start()
        self._stack.push_async_callback(self._stop_global_clients)
        app = web.Application(client_max_size=self.body_limit,
                              middlewares=[self._errors_as_json, self._auth])
        app.router.add_post("/api/v1/flow/{flow}/service/{kind}", self._flow_service)
        app.router.add_post("/api/v1/flow/{flow}/import/{kind}", self._flow_import)
        app.router.add_get("/api/v1/socket", self._socket)
        app.router.add_get("/api/v1/health", self._health)
        app.router.add_get("/api/v1/openapi.json", self._openapi_json)
        for kind in SHORTCUTS:
            app.router.add_post(f"/api/v1/{kind}", self._shortcut)
        for kind in QUERY_ROUTES:
            app.router.add_get(f"/api/v1/{kind}", self._query_route)
        for kind in ENTITY_ROUTES:
            app.router.add_get(f"/api/v1/{kind}/{{entity:.+}}", self._entity_route)
        app.router.add_post(f"/api/v1/{INTENT_ROUTE}", self._intent_check)
        app.router.add_get("/api/v1/processing", self._processing)
        app.router.add_post("/api/v1/{kind}", self._global_service)
        app.router.add_get("/viewer", self._viewer_home)
        app.router.add_get("/viewer/{name:[a-z.]*}", self._viewer_file)
        runner = web.AppRunner(app, access_log=None, max_line_size=MAX_REQUEST_LINE)
        await runner.setup()
        self._stack.push_async_callback(runner.cleanup)
        host = self._listen_host()
        site = web.TCPSite(runner, host, self.settings.gateway_port)
        try:
            await site.start()
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise port_taken(self.settings.gateway_port) from None
            raise
        self.port = site._server.sockets[0].getsockname()[1]
        log.info("gateway listening on http://%s:%d/ (%s); trace viewer at /viewer/",
                 host, self.port, f"bearer tokens required, {self.auth.users} user(s)" if self.auth.required
                 else "no auth: loopback only")

    def _listen_host(self) -> str:
        """The configured address, unless no token is required: then loopback only, and say so."""
        host = self.settings.gateway_host
        if not self.auth.required:
            if host not in LOOPBACK:
                log.warning("no TG_GATEWAY_SECRET or TG_GATEWAY_TOKENS set: listening on 127.0.0.1, not %s", host)
                host = "127.0.0.1"
            log.warning("the gateway is open (no tokens required) and reachable from this machine only")
        return host

    async def global_client(self, kind: str) -> RequestClient[Any, Any]:
        """The one shared client of a service outside flows (config, flow, librarian)."""
        client = self._global.get(kind)
        if client is None:
            request_type, response_type, (request_topic, response_topic) = GLOBAL_SERVICES[kind]
            client = await RequestClient(self.backend, request_topic, response_topic, request_type, response_type,
                                         owner="gateway", timeout=self.settings.request_timeout,
                                         unavailable_after=self.settings.unavailable_timeout).start()
            if kind in self._global:  # another request won the race while we subscribed
                await client.stop()
            self._global.setdefault(kind, client)
        return self._global[kind]

    async def _stop_global_clients(self) -> None:
        clients, self._global = list(self._global.values()), {}
        for client in clients:
            await client.stop()

    @web.middleware
    async def _errors_as_json(self, request: web.Request, handler):
        """Every refusal and failure in our JSON error shape: aiohttp's own (413, 404, 405 keeping its
        `Allow` header, …), the gateway's, and what failed below it (`refusals.failure_of`)."""
        try:
            return await handler(request)
        except web.HTTPRequestEntityTooLarge:
            return _json_error(413, "too-large", f"request body over {self.body_limit:,} bytes "
                               "(documents are limited by TG_MAX_DOCUMENT_BYTES)")
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            type_ = exc.reason.lower().replace(" ", "-")
            kept = {name: exc.headers[name] for name in (hdrs.ALLOW, hdrs.WWW_AUTHENTICATE) if name in exc.headers}
            return _json_error(exc.status, type_, f"{request.method} {request.path}: {exc.reason}", kept)
        except Exception as exc:
            failure = failure_of(exc)
            return _json_error(failure.status, failure.type, failure.message,
                               retry_after(failure.status, self.settings.unavailable_timeout))

    @web.middleware
    async def _auth(self, request: web.Request, handler):
        if request.method == "GET" and request.path.startswith(PUBLIC_PATHS):
            return await handler(request)
        identity = self.auth.from_header(request.headers.get("Authorization"))
        if identity is None:
            return web.json_response({"error": "auth failure"}, status=401,
                                     headers={"WWW-Authenticate": 'Bearer realm="tracegraph"'})
        request[IDENTITY] = identity
        return await handler(request)

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "config-version": self.config_version,
                                  "flows": sorted(self.interfaces), "auth": self.auth.required})

    async def _viewer_home(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("/viewer/")

    async def _viewer_file(self, request: web.Request) -> web.Response:
        found = VIEWER_FILES.get(request.match_info["name"] or "viewer.html")
        if found is None:
            raise web.HTTPNotFound()
        body, content_type = found
        return web.Response(body=body, content_type=content_type, headers={"Cache-Control": "no-cache"})

    async def _openapi_json(self, request: web.Request) -> web.Response:
        return web.json_response(OPENAPI)

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        return await serve_socket(request, self.dispatcher, self.auth, self.settings.gateway_max_outstanding,
                                  self.settings.gateway_send_timeout, self.body_limit, self.max_json_depth)

    async def _global_service(self, request: web.Request) -> web.StreamResponse:
        return await self._call(request, request.match_info["kind"], None)

    async def _shortcut(self, request: web.Request) -> web.StreamResponse:
        """`POST /api/v1/search` = the search service of flow `?flow=` (default: "default")."""
        return await self._call(request, request.path.rsplit("/", 1)[1], request.query.get("flow", DEFAULT_FLOW))

    async def _flow_service(self, request: web.Request) -> web.StreamResponse:
        return await self._call(request, request.match_info["kind"], request.match_info["flow"])

    async def _query_route(self, request: web.Request) -> web.StreamResponse:
        """`GET /api/v1/temporal?at=2025-06-01&flow=F`: the query string is the flow service's request."""
        route = QUERY_ROUTES[request.path.rsplit("/", 1)[1]]
        flow, body = route.request(request.query)
        return await self._answer(request, route.service, flow, body)

    async def _entity_route(self, request: web.Request) -> web.StreamResponse:
        """`GET /api/v1/ownership/Skyline?flow=F`: the architecture service about one entity; an entity the
        collection does not hold is a 404 naming it (routes of our own, so HTTP statuses mean what they say)."""
        route = ENTITY_ROUTES[request.path.split("/")[3]]
        flow, body = route.request(request.query)
        return await self._architecture(request, flow, {**body, "entity": request.match_info["entity"]})

    async def _intent_check(self, request: web.Request) -> web.StreamResponse:
        """`POST /api/v1/intent-check?flow=F` with `{"change", "work-item", "threshold"?}`."""
        body = await self._json_body(request)
        if not isinstance(body, dict):
            raise GatewayError(400, "bad-request", "the body must be a JSON object with change and work-item")
        return await self._architecture(request, request.query.get("flow", DEFAULT_FLOW),
                                        {**body, "operation": "intent-check"})

    async def _processing(self, request: web.Request) -> web.Response:
        """`GET /api/v1/processing?flow=F`: the messages waiting at each stage queue of the flow."""
        flow = request.query.get("flow", DEFAULT_FLOW)
        config = await self.global_client("config")
        bound = (await config.request(ConfigRequest(operation="getvalues", type="active-flow"))).values or []
        try:
            stages = await stage_backlogs(self.backend, {value.key: value.value for value in bound}, flow)
        except ConfigError as exc:
            raise GatewayError(404, "unknown-flow", str(exc)) from None
        return web.json_response({"flow": flow, "stages": stages})

    async def _architecture(self, request: web.Request, flow: str, body: dict) -> web.StreamResponse:
        client, message = await self.dispatcher.open("architecture", flow, body, request[IDENTITY])
        try:
            response = await client.request(message)
        except RemoteError as exc:
            if exc.type not in ARCHITECTURE_STATUS:
                raise
            raise GatewayError(ARCHITECTURE_STATUS[exc.type], exc.type, exc.message) from None
        return web.json_response(response_json(response))

    async def _call(self, request: web.Request, service: str, flow: str | None) -> web.StreamResponse:
        return await self._answer(request, service, flow, await self._json_body(request))

    async def _answer(self, request: web.Request, service: str, flow: str | None, body: Any) -> web.StreamResponse:
        """A refusal or failure raised here is answered by `_errors_as_json`."""
        client, message = await self.dispatcher.open(service, flow, body, request[IDENTITY])
        if flow is not None and request.query.get("stream", "").lower() in {"1", "true", "yes"}:
            return await _stream(request, client, message)
        return web.json_response(response_json(await client.request(message)))

    async def _flow_import(self, request: web.Request) -> web.Response:
        """Publish one message on a flow's one-way interface (bulk triples, …); answers once it is sent."""
        body = await self._json_body(request)
        await self.dispatcher.publish(request.match_info["flow"], request.match_info["kind"], body,
                                      request[IDENTITY])
        return web.json_response({})

    async def _json_body(self, request: web.Request) -> Any:
        return parse_json(await request.read(), max_depth=self.max_json_depth)


async def _stream(request: web.Request, client: RequestClient[Any, Any], message: Any) -> web.StreamResponse:
    """Every response as it arrives, one JSON object per line (NDJSON); an error is the last line.
    A client that leaves before the end (`tg-invoke-graph-rag … | head -3`) is one INFO line, and its
    request is dropped: the processor finishes it and its late responses are discarded."""
    reply = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
    async with contextlib.aclosing(_ndjson_lines(client, message)) as lines:
        try:
            await reply.prepare(request)
            async for line in lines:
                await reply.write(line)
            await reply.write_eof()
        except ConnectionError:  # aiohttp's ClientConnectionResetError: the transport is gone
            log.info("client %s left before the end of its stream from %s; dropped the request",
                     request.remote, request.path)
    return reply


async def _ndjson_lines(client: RequestClient[Any, Any], message: Any) -> AsyncIterator[bytes]:
    """The responses as NDJSON lines; a failure of the request (not of the client's connection,
    which `_stream` meets when writing) is the last line, in the error shape."""
    try:
        async for response in client.stream(message):
            yield json.dumps(response_json(response)).encode() + b"\n"
    except Exception as exc:
        failure = failure_of(exc)
        yield json.dumps(error_body(failure.type, failure.message)).encode() + b"\n"
