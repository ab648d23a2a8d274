"""Python client of the gateway's REST API; every `tg-*` command goes through it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from tracegraph.base.errors import ConnectError, RemoteError, TraceGraphError

DEFAULT_URL = "http://127.0.0.1:8888/"


def unreachable(url: str, exc: aiohttp.ClientConnectorError) -> ConnectError:
    return ConnectError(f"cannot reach the gateway at {url} ({exc.os_error}); is tg-launch running? (--url / TG_URL)")


def lost(service: str, answered: bool, how: str) -> TraceGraphError:
    """A gateway that went away (or sent a body cut short) while a streamed answer was being read."""
    when = "mid-answer; the trace may be incomplete" if answered else f"before {service} answered"
    return TraceGraphError(f"gateway connection lost {when} ({how})")


def service_error(reply: Any) -> RemoteError | None:
    """The `{"error": {"type", "message"}}` a reply carries, as an exception; None if it carries none."""
    error = reply.get("error") if isinstance(reply, dict) else None
    return RemoteError(error.get("type", "error"), error.get("message", "")) if isinstance(error, dict) else None


def _refused(token: str | None) -> TraceGraphError:
    given = "the token given was not accepted" if token else "it requires a token"
    return TraceGraphError(f"gateway refused the request: {given} (--token / TG_TOKEN)")


class Api:
    """`await Api(url, token).request("flow", {...})` -> the service's response as a dict.

    Raises RemoteError for a service error, ConnectError when the gateway is unreachable.
    """

    def __init__(self, url: str | None = None, token: str | None = None, timeout: float = 120.0) -> None:
        self.url = (url or DEFAULT_URL).rstrip("/") + "/"
        self.token = token
        self.timeout = aiohttp.ClientTimeout(total=timeout)

    @property
    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def request(self, path: str, body: dict[str, Any], params: dict[str, str] | None = None) -> dict[str, Any]:
        """POST `body` to `api/v1/{path}` (with `params` as its query string)."""
        return await self._call("POST", path, params, body)

    async def get(self, path: str, params: dict[str, str]) -> dict[str, Any]:
        """GET `api/v1/{path}?params` (the gateway's query-string routes, such as `temporal`)."""
        return await self._call("GET", path, params, None)

    async def _call(self, method: str, path: str, params: dict[str, str] | None,
                    body: dict[str, Any] | None) -> dict[str, Any]:
        target = f"{self.url}api/v1/{path}"
        try:
            async with aiohttp.ClientSession(timeout=self.timeout) as session:
                async with session.request(method, target, json=body, params=params,
                                           headers=self._headers) as response:
                    payload = await response.json(content_type=None)
        except aiohttp.ClientConnectorError as exc:
            raise unreachable(self.url, exc) from None
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise TraceGraphError(f"gateway request {path} failed: {exc or type(exc).__name__}") from None
        if response.status == 401:
            raise _refused(self.token)
        refused = service_error(payload)
        if refused:
            raise refused
        if isinstance(payload, dict) and payload.get("error"):
            raise RemoteError("gateway", str(payload["error"]))
        if response.status != 200:
            raise TraceGraphError(f"gateway answered HTTP {response.status} to {path}")
        return payload

    async def flow(self, operation: str, **fields: Any) -> dict[str, Any]:
        """A flow-service call; keyword names use underscores for the wire's dashes."""
        body = {"operation": operation, **{k.replace("_", "-"): v for k, v in fields.items() if v is not None}}
        return await self.request("flow", body)

    async def config(self, operation: str, **fields: Any) -> dict[str, Any]:
        return await self.request("config", {"operation": operation, **fields})

    async def flow_service(self, flow: str, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self.request(f"flow/{flow}/service/{kind}", body)

    async def stream(self, flow: str, kind: str, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """Every response of a streaming flow service as it arrives (the gateway's NDJSON form)."""
        target = f"{self.url}api/v1/flow/{flow}/service/{kind}?stream=true"
        answered = False
        try:
            async with aiohttp.ClientSession(timeout=self.timeout) as session:
                async with session.post(target, json=body, headers=self._headers) as response:
                    if response.status == 401:
                        raise _refused(self.token)
                    if response.status != 200:
                        try:
                            payload = await response.json(content_type=None)
                        except ValueError:  # a proxy's HTML page, say
                            payload = None
                        raise service_error(payload) or TraceGraphError(f"gateway answered HTTP {response.status}")
                    async for line in response.content:
                        if not line.strip():
                            continue
                        item = json.loads(line)
                        refused = service_error(item)
                        if refused:
                            raise refused
                        answered = True
                        yield item
        except aiohttp.ClientConnectorError as exc:
            raise unreachable(self.url, exc) from None
        # Errors while reading the body: ClientPayloadError (cut short), ServerDisconnectedError, a reset,
        # or a last line cut in half (ValueError from json).
        except (aiohttp.ClientError, ValueError) as exc:
            raise lost(kind, answered, type(exc).__name__) from None
        except TimeoutError:
            raise TraceGraphError(f"no complete answer from {kind} within {self.timeout.total:g}s") from None
