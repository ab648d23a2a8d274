"""Processor and FlowProcessor: long-running services that learn their topics from flows.

A `Processor` binds its specs to fixed topics (the config service does this). A
`FlowProcessor` asks the config service which flows use it, starts one `Flow` per running
flow, and follows config pushes as flows start and stop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, ClassVar

from tracegraph.base.bus import codec
from tracegraph.base.bus.protocol import Backend
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import DecodeError, RequestTimeout, ServiceUnavailable, TraceGraphError
from tracegraph.base.flow import Flow, TopicMap
from tracegraph.base.settings import RuntimeSettings
from tracegraph.base.specs import Spec
from tracegraph.base.bus.topic import CONFIG_PUSH_TOPIC, CONFIG_REQUEST_TOPIC, CONFIG_RESPONSE_TOPIC
from tracegraph.schemas.config import ConfigPush, ConfigRequest, ConfigResponse

log = logging.getLogger(__name__)
RESYNC_CHECK_SECONDS = 2.0  # how often a processor checks whether its broker connection was lost


@dataclass
class ProcessorStats:
    """Counters a processor keeps about the messages it handled."""

    handled: int = 0
    failed: int = 0
    undecodable: int = 0


class Processor:
    """A service on the bus; subclasses set `name` and declare specs as class attributes."""

    name: ClassVar[str] = ""
    specs: ClassVar[dict[str, Spec]] = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        specs: dict[str, Spec] = {}
        for klass in reversed(cls.__mro__):
            specs.update({s.name: s for s in vars(klass).values() if isinstance(s, Spec)})
        cls.specs = specs

    def __init__(self, backend: Backend, settings: RuntimeSettings | None = None) -> None:
        if not self.name:
            raise TypeError(f"{type(self).__qualname__} must set a processor name")
        self.backend = backend
        self.settings = settings or RuntimeSettings()
        self.instance = uuid.uuid4().hex[:8]
        self.stats = ProcessorStats()
        self.flows: dict[str, Flow] = {}
        self._stack = AsyncExitStack()

    @property
    def subscription(self) -> str:
        """Copies of one processor share this subscription, so they compete for its messages."""
        return self.name

    def fixed_topics(self) -> TopicMap | None:
        """Topics of a processor that serves outside flows; None for flow processors."""
        return None

    async def start(self) -> None:
        topics = self.fixed_topics()
        if topics is not None:
            await self.start_flow("", topics, {})
        log.info("%s started (instance %s)", self.name, self.instance)

    async def start_flow(self, flow_id: str, topics: TopicMap, parameters: Mapping[str, Any]) -> None:
        flow = Flow(self, flow_id, topics, parameters)
        await flow.start()
        self.flows[flow_id] = flow
        if flow_id:
            log.info("%s joined flow %r", self.name, flow_id)

    async def stop_flow(self, flow_id: str) -> None:
        flow = self.flows.pop(flow_id, None)
        if flow is not None:
            await flow.stop()
            log.info("%s left flow %r", self.name, flow_id)

    async def gave_up(self, spec: Spec, message: Any, flow: Flow, error: str) -> None:
        """A consumed message failed transiently `max-attempts` times; the broker forgets it now.
        Processors whose users wait on the outcome record it where they look (kg-extract marks the
        chunk's extraction failed); the runtime has logged it already."""

    async def stop(self) -> None:
        """Stop flows (newest first), then whatever start() entered, in reverse order."""
        for flow_id in reversed(list(self.flows)):
            await self.stop_flow(flow_id)
        await self._stack.aclose()

    async def __aenter__(self) -> "Processor":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class FlowProcessor(Processor):
    """A processor whose topics come from the flows the config service says it belongs to."""

    def __init__(self, backend: Backend, settings: RuntimeSettings | None = None) -> None:
        super().__init__(backend, settings)
        self.config_version = -1
        self._applying = asyncio.Lock()
        self._wanted: dict[str, str] = {}  # flow id -> JSON of its binding, to spot changes

    async def start(self) -> None:
        # Subscribe to pushes first, so no change made while we fetch the snapshot is missed.
        pushes = await self._stack.enter_async_context(self.backend.subscribe(
            CONFIG_PUSH_TOPIC, f"{self.name}-{self.instance}", prefetch=4, auto_ack=True))
        task = asyncio.create_task(self._follow(pushes), name=f"{self.name}:config-push")
        self._stack.push_async_callback(_cancel, task)
        config = await self._stack.enter_async_context(RequestClient(
            self.backend, CONFIG_REQUEST_TOPIC, CONFIG_RESPONSE_TOPIC, ConfigRequest, ConfigResponse,
            owner=self.name, unavailable_after=self.settings.unavailable_timeout))
        snapshot = await self._fetch_config(config)
        await self.apply_config(snapshot.version or 0, snapshot.config or {})
        resync = asyncio.create_task(self._resync_after_reconnects(config), name=f"{self.name}:config-resync")
        self._stack.push_async_callback(_cancel, resync)
        topics = self.fixed_topics()
        if topics is not None:  # a service of its own besides the flows (e.g. the librarian)
            await self.start_flow("", topics, {})
        log.info("%s started (instance %s), in %d flow(s)", self.name, self.instance, len(self.flows))

    async def _fetch_config(self, client: RequestClient[ConfigRequest, ConfigResponse]) -> ConfigResponse:
        """Ask the config service for everything, waiting (with backoff) until it answers."""
        delay = 0.2
        while True:
            try:
                return await client.request(ConfigRequest(operation="config"), timeout=min(5.0, delay * 5))
            except (RequestTimeout, ServiceUnavailable):
                log.warning("%s: config service not answering yet; retrying in %.1fs", self.name, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    async def _resync_after_reconnects(self, config: RequestClient[ConfigRequest, ConfigResponse]) -> None:
        """Config pushes sent while the broker connection was down are lost to this process: after
        each reconnect, ask for the whole configuration again (apply_config ignores what it has)."""
        seen = self.backend.epoch
        while True:
            await asyncio.sleep(RESYNC_CHECK_SECONDS)
            if self.backend.epoch == seen:
                continue
            seen = self.backend.epoch
            snapshot = await self._fetch_config(config)
            try:
                await self.apply_config(snapshot.version or 0, snapshot.config or {})
            except TraceGraphError as exc:
                log.error("%s: could not apply config version %s: %s", self.name, snapshot.version, exc)

    async def _follow(self, pushes) -> None:
        async for delivery in pushes:
            try:
                push = codec.decode(delivery.body, delivery.properties, ConfigPush)
            except DecodeError as exc:
                log.error("%s: bad config push: %s", self.name, exc)
                continue
            try:
                await self.apply_config(push.version, push.config)
            except TraceGraphError as exc:
                log.error("%s: could not apply config version %d: %s", self.name, push.version, exc)

    async def apply_config(self, version: int, config: Mapping[str, Mapping[str, str]]) -> None:
        """Start flows that now include this processor, stop those that no longer do."""
        async with self._applying:
            if version <= self.config_version:
                return
            self.config_version = version
            raw = config.get("active-flow", {}).get(self.name)
            wanted: dict[str, Any] = json.loads(raw) if raw else {}
            for flow_id in [f for f in self.flows if f and (f not in wanted or
                            _binding_key(wanted[f]) != self._wanted.get(f))]:
                await self.stop_flow(flow_id)
                self._wanted.pop(flow_id, None)
            for flow_id, binding in wanted.items():
                if flow_id in self.flows:
                    continue
                try:
                    await self.start_flow(flow_id, binding.get("topics", {}), binding.get("parameters", {}))
                except TraceGraphError as exc:
                    log.error("%s: cannot join flow %r: %s", self.name, flow_id, exc)
                    continue
                self._wanted[flow_id] = _binding_key(binding)


def _binding_key(binding: Any) -> str:
    return json.dumps(binding, sort_keys=True)


async def _cancel(task: asyncio.Task[Any]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)

