"""Calling a flow's published interfaces from outside the flow (the gateway, the librarian).

`InterfaceUser` follows config pushes like any flow processor, but instead of joining flows
it keeps each flow's `interfaces` map and opens request clients and producers on demand.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any, TypeVar

from tracegraph.base.bus import codec
from tracegraph.base.bus.topic import Topic
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import ConfigError
from tracegraph.base.processor import FlowProcessor
from tracegraph.schemas.base import Message, ServiceResponse

Q = TypeVar("Q", bound=Message)
R = TypeVar("R", bound=ServiceResponse)


class InterfaceUser(FlowProcessor):
    """A processor that uses flows' interfaces; `interfaces[flow_id][kind]` is a topic or a pair."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.interfaces: dict[str, dict[str, Any]] = {}
        self._clients: dict[tuple[str, str], RequestClient[Any, Any]] = {}
        self._opening = asyncio.Lock()

    async def start(self) -> None:
        await super().start()
        self._stack.push_async_callback(self._stop_clients)

    async def apply_config(self, version: int, config: Mapping[str, Mapping[str, str]]) -> None:
        async with self._applying:
            if version <= self.config_version:
                return
            self.config_version = version
            flows = {fid: json.loads(text).get("interfaces", {}) for fid, text in config.get("flow", {}).items()}
            stale = [k for k in self._clients if flows.get(k[0]) != self.interfaces.get(k[0])]
            self.interfaces = flows
            for key in stale:
                await self._clients.pop(key).stop()

    def topics(self, flow_id: str, kind: str) -> Any:
        """The interface's topic (or request/response pair); ConfigError names what exists."""
        interfaces = self.interfaces.get(flow_id)
        if interfaces is None:
            raise ConfigError(f"no running flow {flow_id!r}; running: {', '.join(sorted(self.interfaces)) or 'none'}")
        if kind not in interfaces:
            raise ConfigError(f"flow {flow_id!r} has no {kind!r} interface; it has: {', '.join(sorted(interfaces))}")
        return interfaces[kind]

    async def client(self, flow_id: str, kind: str, request: type[Q], response: type[R]) -> RequestClient[Q, R]:
        """A started client of a flow's request/response interface, reused across calls."""
        key = (flow_id, kind)
        client = self._clients.get(key)
        if client is None:
            async with self._opening:
                client = self._clients.get(key)
                if client is None:
                    pair = self.topics(flow_id, kind)
                    if not isinstance(pair, Mapping):
                        raise ConfigError(f"interface {kind!r} of flow {flow_id!r} is not a request/response service")
                    client = await RequestClient(
                        self.backend, Topic.parse(pair["request"]), Topic.parse(pair["response"]),
                        request, response, owner=self.name, timeout=self.settings.request_timeout,
                        unavailable_after=self.settings.unavailable_timeout).start()
                    self._clients[key] = client
        return client

    async def send(self, flow_id: str, kind: str, message: Message) -> None:
        """Publish on a flow's one-way interface (e.g. document-load)."""
        topic = self.topics(flow_id, kind)
        if not isinstance(topic, str):
            raise ConfigError(f"interface {kind!r} of flow {flow_id!r} is a service, not a topic")
        body, props = codec.encode(message)
        await self.backend.publish(Topic.parse(topic), body, props)

    async def _stop_clients(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.stop()
