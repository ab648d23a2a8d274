"""Python client of the gateway's multiplexed WebSocket: one connection, many concurrent requests.

    async with SocketClient(url, token) as socket:
        async for response in socket.stream("graph-rag", {"query": "…"}, flow="default"):
            ...

Responses are routed to their request by `id`; a service error raises RemoteError, a gateway
refusal raises RemoteError with the gateway's type (`auth-required`, `unknown-flow`, …).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from tracegraph.base.errors import RemoteError, TraceGraphError
from tracegraph.cli.api import DEFAULT_URL, lost, service_error, unreachable

_CLOSED = object()  # queued to every open request when the socket goes away


def socket_url(url: str) -> str:
    """The WebSocket address behind a gateway URL.

    >>> socket_url("https://tg.example.com/base/")
    'wss://tg.example.com/base/api/v1/socket'
    """
    base = url.rstrip("/") + "/"
    if base.startswith("http"):
        base = "ws" + base[4:]
    return base + "api/v1/socket"


class SocketClient:
    """An authenticated connection; `stream()` and `request()` may run concurrently on it."""

    def __init__(self, url: str | None = None, token: str | None = None, timeout: float = 120.0) -> None:
        self.url = socket_url(url or DEFAULT_URL)
        self.token = token
        self.timeout = timeout
        self.user: str | None = None
        self._ids = (f"req-{n}" for n in itertools.count(1))
        self._waiting: dict[str, asyncio.Queue[Any]] = {}
        self._session: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> "SocketClient":
        self._session = aiohttp.ClientSession()
        try:
            self._ws = await self._session.ws_connect(self.url, max_msg_size=0)
            await self._ws.send_json({"type": "auth", "token": self.token or ""})
            reply = await self._ws.receive_json(timeout=self.timeout)
        except aiohttp.ClientConnectorError as exc:
            await self._session.close()
            raise unreachable(self.url, exc) from None
        except BaseException:
            await self._session.close()
            raise
        if reply.get("type") != "auth-ok":
            await self.__aexit__()
            raise RemoteError("auth-failed", "the gateway refused the token (--token / TG_TOKEN)")
        self.user = reply.get("default_workspace")
        self._reader = asyncio.create_task(self._route())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        if self._ws is not None:
            await self._ws.close()
        if self._session is not None:
            await self._session.close()

    async def _route(self) -> None:
        assert self._ws is not None
        try:
            async for frame in self._ws:
                if frame.type != aiohttp.WSMsgType.TEXT:
                    break
                message = json.loads(frame.data)
                queue = self._waiting.get(message.get("id"))
                if queue is not None:
                    queue.put_nowait(message)
        finally:
            for queue in self._waiting.values():
                queue.put_nowait(_CLOSED)

    async def stream(self, service: str, request: dict[str, Any], flow: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """Every response to one request, ending with the one marked complete."""
        if self._ws is None:
            raise TraceGraphError("use SocketClient in `async with`")
        request_id = next(self._ids)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._waiting[request_id] = queue
        frame = {"id": request_id, "service": service, "request": request, **({"flow": flow} if flow else {})}
        answered = False
        try:
            await self._ws.send_json(frame)
            while True:
                try:
                    message = await asyncio.wait_for(queue.get(), self.timeout)
                except TimeoutError:
                    raise TraceGraphError(f"no response to {service} within {self.timeout:g}s") from None
                if message is _CLOSED:
                    raise lost(service, answered, "the gateway closed the socket")
                # The gateway's own refusals sit on the frame, a service's errors inside its response.
                refused = service_error(message) or service_error(message.get("response"))
                if refused:
                    raise refused
                answered = True
                yield message.get("response", {})
                if message.get("complete"):
                    return
        finally:
            self._waiting.pop(request_id, None)

    async def request(self, service: str, request: dict[str, Any], flow: str | None = None) -> dict[str, Any]:
        """The final response of one request."""
        last: dict[str, Any] = {}
        async for last in self.stream(service, request, flow):
            pass
        return last
