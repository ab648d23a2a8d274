"""The multiplexed WebSocket (`/api/v1/socket`), in upstream TrustGraph's framing.

In:  `{"type": "auth", "token": …}` first, then `{"id", "service", "flow"?, "workspace"?, "request"}`.
Out: `{"type": "auth-ok" | "auth-failed", …}`, then per request any number of
`{"id", "response", "complete": false}` and one `complete: true` — or `{"id", "error", "complete": true}`
when the gateway refuses the request itself.

Bounds: at most `gateway_max_outstanding` requests in flight per socket; a client that does not
read for `gateway_send_timeout` seconds is disconnected, so a slow reader holds at most one
response per request in memory. A frame is checked as a REST body is (`limits`), and any failure
of one request — bad input, a service or bus that is down — is an error frame for that request,
never a closed socket. When a client goes away its requests are dropped here, in one INFO line; the
processors finish them as usual and their late responses are discarded.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from aiohttp import WSMsgType, web

from tracegraph.base.errors import RemoteError
from tracegraph.flow.gateway.auth import Authenticator, Identity
from tracegraph.flow.gateway.dispatch import Dispatcher
from tracegraph.flow.gateway.limits import MAX_JSON_DEPTH, leading_id, parse_json
from tracegraph.flow.gateway.refusals import GatewayError, error_body, failure_of
from tracegraph.schemas.base import ServiceResponse
from tracegraph.schemas.fields import shown

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 30.0


def response_json(response: ServiceResponse) -> dict[str, Any]:
    """A response as the wire shows it: dashed aliases, absent fields left out."""
    return response.model_dump(mode="json", by_alias=True, exclude_none=True)


class ClientLeft(ConnectionResetError):
    """A frame found the client gone (or cut off for not reading): nothing more can reach it."""


def _refusal(request_id: Any, type_: str, message: str) -> dict[str, Any]:
    return {"id": request_id, **error_body(type_, message), "complete": True}


def _failure_frame(request_id: str, exc: Exception) -> dict[str, Any]:
    """A service's own error inside a response, as upstream frames it; anything else as a refusal."""
    if isinstance(exc, RemoteError):
        return {"id": request_id, "response": error_body(exc.type, exc.message), "complete": True}
    failure = failure_of(exc)
    return _refusal(request_id, failure.type, failure.message)


class SocketSession:
    """One client connection: authenticates it, runs its requests concurrently, writes their frames."""

    def __init__(self, ws: web.WebSocketResponse, dispatcher: Dispatcher, auth: Authenticator,
                 max_outstanding: int, send_timeout: float, max_depth: int = MAX_JSON_DEPTH) -> None:
        self.ws = ws
        self.dispatcher = dispatcher
        self.auth = auth
        self.max_outstanding = max_outstanding
        self.send_timeout = send_timeout
        self.max_depth = max_depth
        self.identity: Identity | None = None if auth.required else auth.identify(None)
        self.requests: dict[str, asyncio.Task[None]] = {}
        self.undelivered = 0  # replies that found the client gone
        self._sending = asyncio.Lock()

    async def run(self) -> None:
        try:
            async for frame in self.ws:
                if frame.type == WSMsgType.TEXT:
                    await self._on_text(frame.data)
                elif frame.type == WSMsgType.BINARY:
                    await self._send(_refusal(None, "bad-request", "frames must be JSON text, not binary"))
        except ClientLeft:
            self.undelivered += 1
        finally:
            await self._drop_requests()

    async def _drop_requests(self) -> None:
        """Cancel what is still in flight; a client that left with requests unanswered is one INFO line."""
        tasks, self.requests = list(self.requests.values()), {}
        unanswered = sum(not task.done() for task in tasks) + self.undelivered
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if unanswered:
            log.info("socket client left with %d request(s) unanswered; dropped them", unanswered)

    async def _on_text(self, text: str) -> None:
        try:
            frame = parse_json(text, "frame", self.max_depth)
        except GatewayError as exc:
            await self._send(_refusal(leading_id(text), exc.type, exc.message))
            return
        if not isinstance(frame, dict):
            await self._send(_refusal(None, "bad-request", "frame must be a JSON object"))
        elif frame.get("type") == "auth":
            await self._authenticate(frame.get("token"))
        else:
            await self._start_request(frame)

    async def _authenticate(self, token: Any) -> None:
        identity = self.auth.identify(token if isinstance(token, str) else None)
        if identity is None:
            await self._send({"type": "auth-failed", "error": "auth failure"})
            return
        self.identity = identity
        await self._send({"type": "auth-ok", "default_workspace": identity.user or "default"})

    async def _start_request(self, frame: dict[str, Any]) -> None:
        request_id = frame.get("id")
        if not isinstance(request_id, str) or not request_id:
            await self._send(_refusal(request_id, "bad-request", "every request needs a string 'id'"))
        elif self.identity is None:
            await self._send(_refusal(request_id, "auth-required", "auth failure"))
        elif request_id in self.requests:
            await self._send(_refusal(request_id, "bad-request", f"request {shown(request_id)} is already in flight"))
        elif len(self.requests) >= self.max_outstanding:
            await self._send(_refusal(request_id, "too-many-requests",
                                      f"at most {self.max_outstanding} requests may be in flight per socket"))
        elif not isinstance(frame.get("service"), str) or "request" not in frame:
            await self._send(_refusal(request_id, "bad-request", "a request frame needs 'service' and 'request'"))
        else:
            task = asyncio.create_task(self._serve(request_id, frame, self.identity), name=f"ws:{request_id}")
            self.requests[request_id] = task
            task.add_done_callback(lambda _t: self.requests.pop(request_id, None))

    async def _serve(self, request_id: str, frame: dict[str, Any], identity: Identity) -> None:
        """Answer one request; whatever fails, the socket and its other requests carry on."""
        try:
            await self._answer(request_id, frame, identity)
        except ClientLeft:
            self.undelivered += 1  # told in one line when the session ends
        except Exception as exc:
            try:
                await self._send(_failure_frame(request_id, exc))
            except ClientLeft:
                self.undelivered += 1

    async def _answer(self, request_id: str, frame: dict[str, Any], identity: Identity) -> None:
        flow = frame.get("flow")
        workspace = frame.get("workspace")
        async for response in self.dispatcher.stream(
                frame["service"], flow if isinstance(flow, str) and flow else None, frame["request"], identity,
                workspace if isinstance(workspace, str) else None):
            await self._send({"id": request_id, "response": response_json(response),
                              "complete": response.ends_request})

    async def _send(self, frame: dict[str, Any]) -> None:
        """One frame at a time; a client that stops reading is cut off after `send_timeout`.
        Raises ClientLeft when the frame cannot reach the client."""
        if self.ws.closed:
            raise ClientLeft("socket closed")
        async with self._sending:
            try:
                async with asyncio.timeout(self.send_timeout):
                    await self.ws.send_str(json.dumps(frame))
            except TimeoutError:
                log.warning("socket client has not read for %gs; closing it", self.send_timeout)
                await self.ws.close(code=1008, message=b"client too slow")
                raise ClientLeft("client too slow") from None
            except ConnectionError as exc:  # aiohttp's ClientConnectionResetError: the transport is gone
                raise ClientLeft(str(exc)) from None


async def serve_socket(request: web.Request, dispatcher: Dispatcher, auth: Authenticator, max_outstanding: int,
                       send_timeout: float, max_frame: int, max_depth: int) -> web.WebSocketResponse:
    ws = web.WebSocketResponse(heartbeat=HEARTBEAT_SECONDS, max_msg_size=max_frame)
    await ws.prepare(request)
    await SocketSession(ws, dispatcher, auth, max_outstanding, send_timeout, max_depth).run()
    return ws
