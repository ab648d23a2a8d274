"""A set of processors sharing one backend: started in order, stopped in reverse, failures collected."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence

from tracegraph.base.bus.protocol import Backend
from tracegraph.base.client import RequestClient
from tracegraph.base.bus.topic import (
    CONFIG_REQUEST_TOPIC, CONFIG_RESPONSE_TOPIC, FLOW_REQUEST_TOPIC, FLOW_RESPONSE_TOPIC,
)
from tracegraph.base.errors import ConfigError
from tracegraph.base.processor import Processor
from tracegraph.base.settings import RuntimeSettings
from tracegraph.launch.data_lock import DataDirLock
from tracegraph.launch.registry import ProcessorFactory, processor_factory
from tracegraph.schemas.config import ConfigRequest, ConfigResponse, FlowRequest, FlowResponse

log = logging.getLogger(__name__)


class Stack:
    """`async with Stack(backend, settings, ["config", "ping"]) as stack:` runs those processors, holding
    `settings.data_dir` (DataDirLock) so that a second stack on the same folder is refused before it starts."""

    def __init__(self, backend: Backend, settings: RuntimeSettings,
                 processors: Sequence[str | ProcessorFactory]) -> None:
        self.backend = backend
        self.settings = settings
        self.factories = [processor_factory(p) if isinstance(p, str) else p for p in processors]
        self.processors: list[Processor] = []
        self.data_lock = DataDirLock(settings.data_dir)

    def __getitem__(self, name: str) -> Processor:
        for processor in self.processors:
            if processor.name == name:
                return processor
        raise KeyError(name)

    async def __aenter__(self) -> "Stack":
        await asyncio.to_thread(self.data_lock.acquire)
        try:
            for factory in self.factories:
                processor = factory(self.backend, self.settings)
                await processor.start()
                self.processors.append(processor)
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def joined(self, flow_id: str, timeout: float = 30.0) -> None:
        """Return once every processor of this stack that `flow_id` uses has joined it. A persistent
        topic keeps messages only for subscriptions that exist, so until then a document loaded into
        a new flow could pass a processor by."""
        async with RequestClient(self.backend, CONFIG_REQUEST_TOPIC, CONFIG_RESPONSE_TOPIC, ConfigRequest,
                                 ConfigResponse, owner="launcher", timeout=timeout) as config:
            active = ((await config.request(ConfigRequest(operation="config"))).config or {}).get("active-flow", {})
        users = [p for p in self.processors if flow_id in json.loads(active.get(p.name) or "{}")]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while waiting := [p.name for p in users if flow_id not in p.flows]:
            if loop.time() > deadline:
                raise ConfigError(f"flow {flow_id!r} not joined within {timeout:g}s by {', '.join(waiting)}")
            await asyncio.sleep(0.05)

    async def aclose(self) -> None:
        """Stop every processor, newest first; raise one group if any stop failed."""
        failures: list[Exception] = []
        while self.processors:
            processor = self.processors.pop()
            try:
                await processor.stop()
            except Exception as exc:  # keep stopping the others
                failures.append(exc)
        await asyncio.to_thread(self.data_lock.release)
        if failures:
            raise ExceptionGroup("processors failed to stop cleanly", failures)


async def ensure_flow(backend: Backend, flow_id: str, blueprint: str, timeout: float = 30.0) -> bool:
    """Start `flow_id` from `blueprint` unless it is running; True if this call started it."""
    async with RequestClient(backend, FLOW_REQUEST_TOPIC, FLOW_RESPONSE_TOPIC, FlowRequest, FlowResponse,
                             owner="launcher", timeout=timeout) as flows:
        running = await flows.request(FlowRequest(operation="list-flows"))
        if flow_id in (running.flow_ids or []):
            return False
        await flows.request(FlowRequest(operation="start-flow", flow_id=flow_id, blueprint_name=blueprint))
        log.info("started flow %r from blueprint %r", flow_id, blueprint)
        return True
