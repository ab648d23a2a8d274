"""The config service: answers `config` and `flow` requests and broadcasts every change.

Everything lives in one SQLite file under the data directory, so blueprints, tools and running
flows survive a restart; each change is pushed whole (with its version) to every processor.
Packaged blueprints and agent tools fill in whatever names are missing at start, and a packaged
blueprint stored in an older version is upgraded (flow/config/upgrade.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping

from tracegraph.base.bus.protocol import Backend
from tracegraph.base.bus.topic import (
    CONFIG_PUSH_TOPIC, CONFIG_REQUEST_TOPIC, CONFIG_RESPONSE_TOPIC, FLOW_REQUEST_TOPIC, FLOW_RESPONSE_TOPIC,
)
from tracegraph.base.errors import ConfigError
from tracegraph.base.flow import Flow, TopicMap
from tracegraph.base.processor import Processor
from tracegraph.base.settings import RuntimeSettings
from tracegraph.base.specs import Producer, Service
from tracegraph.flow.agent.tool_config import CONFIG_TYPE as TOOL, parse_tool
from tracegraph.flow.config.blueprints import flow_parameters, parse_blueprint, resolve
from tracegraph.flow.config.store import ConfigStore
from tracegraph.flow.config.upgrade import ORIGIN, digest, outdated, rebind
from tracegraph.flow.triples.functional import CONFIG_TYPE as FUNCTIONAL
from tracegraph.schemas.config import (
    ConfigPush, ConfigRequest, ConfigResponse, ConfigValue, FlowRequest, FlowResponse,
)

BLUEPRINT = "flow-blueprint"
FLOW = "flow"
ACTIVE = "active-flow"

Seeds = Callable[[], Mapping[str, str]]  # key -> value text, read from packaged files
Superseded = Callable[[], Mapping[str, list[str]]]  # blueprint name -> digests of its earlier packaged texts
log = logging.getLogger(__name__)

# Values of these types are checked before they are stored; the error says what is wrong.
VALUE_CHECKS: dict[str, Callable[[str, str], object]] = {
    BLUEPRINT: lambda _name, text: parse_blueprint(text),
    TOOL: parse_tool,
}


def _any(_name: str, _text: str) -> None:
    """Values of this type are free text (a functional predicate's note)."""


class ConfigProcessor(Processor):
    """Holds blueprints (`flow-blueprint`), flows (`flow`), per-processor bindings (`active-flow`), agent
    tools (`tool`), single-valued predicates (`functional-predicate`) and any other config a processor reads."""

    name = "config"
    config = Service("config", ConfigRequest, ConfigResponse, prefetch=8)
    flow = Service("flow", FlowRequest, FlowResponse, prefetch=8)
    push = Producer("push", ConfigPush)

    def __init__(self, backend: Backend, settings: RuntimeSettings | None = None,
                 blueprints: Seeds | None = None, tools: Seeds | None = None,
                 superseded: Superseded | None = None, functional: Seeds | None = None) -> None:
        super().__init__(backend, settings)
        self.store = ConfigStore(self.settings.data_dir / "config.sqlite")
        # Read at start, off the event loop: they may be files.
        self.seeds = {type_: seeds for type_, seeds in ((BLUEPRINT, blueprints), (TOOL, tools),
                                                        (FUNCTIONAL, functional)) if seeds}
        self.superseded = superseded or dict
        self._flows_lock = asyncio.Lock()

    def fixed_topics(self) -> TopicMap:
        return {
            "config": {"request": str(CONFIG_REQUEST_TOPIC), "response": str(CONFIG_RESPONSE_TOPIC)},
            "flow": {"request": str(FLOW_REQUEST_TOPIC), "response": str(FLOW_RESPONSE_TOPIC)},
            "push": str(CONFIG_PUSH_TOPIC),
        }

    async def start(self) -> None:
        await self.store.open()
        self._stack.push_async_callback(self.store.close)
        missing = []
        for type_, seeds in self.seeds.items():
            existing = await self.store.items(type_)
            for name, text in (await asyncio.to_thread(seeds)).items():
                if name not in existing:
                    VALUE_CHECKS.get(type_, _any)(name, text)  # a broken packaged seed should stop start-up, loudly
                    missing.append((type_, name, text))
                    if type_ == BLUEPRINT:
                        missing.append((ORIGIN, name, digest(text)))
        if missing:
            await self.store.write(put=missing)
        if BLUEPRINT in self.seeds:
            await self._upgrade_blueprints(await asyncio.to_thread(self.seeds[BLUEPRINT]))
        await super().start()
        await self.broadcast()  # processors that started first learn the current state

    async def _upgrade_blueprints(self, packaged: Mapping[str, str]) -> None:
        """Replace stored blueprints that are older packaged versions, and rebind their running flows."""
        stored, origins = await self.store.items(BLUEPRINT), await self.store.items(ORIGIN)
        superseded = await asyncio.to_thread(self.superseded)
        for name, text in packaged.items():
            if name not in stored or digest(stored[name]) == digest(text):
                continue
            if not outdated(stored[name], text, origins.get(name), set(superseded.get(name, ()))):
                log.warning("flow blueprint %r differs from the packaged one and looks edited, so it is kept; "
                            "processors of this version may not join its flows. Replace it with the flow "
                            "service's put-blueprint (launch/blueprints/%s.json) and restart its flows", name, name)
                continue
            records, bound = rebind(name, text, await self.store.items(FLOW), await self.store.items(ACTIVE))
            await self.store.write(
                put=[(BLUEPRINT, name, text), (ORIGIN, name, digest(text)), *((FLOW, f, r) for f, r in records.items()),
                     *((ACTIVE, p, b) for p, b in bound.items() if b is not None)],
                delete=[(ACTIVE, p) for p, b in bound.items() if b is None])
            log.info("upgraded flow blueprint %r to the packaged version; rebound flow(s): %s", name,
                     ", ".join(records) or "none running")

    async def broadcast(self) -> int:
        version, config = await self.store.snapshot()
        await self.flows[""][self.push].send(ConfigPush(version=version, config=config))
        return version

    @config.handler
    async def answer_config(self, req: ConfigRequest, flow: Flow) -> AsyncIterator[ConfigResponse]:
        store = self.store
        if req.operation == "config":
            version, config = await store.snapshot()
            yield ConfigResponse(version=version, config=config)
        elif req.operation == "get":
            values = []
            for k in req.keys:
                value = await store.get(k.type, k.key)
                if value is None:
                    raise ConfigError(f"no config value {k.type}/{k.key}")
                values.append(ConfigValue(type=k.type, key=k.key, value=value))
            yield ConfigResponse(version=await store.version(), values=values)
        elif req.operation == "list":
            yield ConfigResponse(directory=sorted(await store.items(_need_type(req))))
        elif req.operation == "getvalues":
            type_ = _need_type(req)
            items = await store.items(type_)
            yield ConfigResponse(values=[ConfigValue(type=type_, key=k, value=v) for k, v in items.items()])
        else:  # put / delete
            reserved = {v.type for v in req.values} | {k.type for k in req.keys}
            if reserved & {BLUEPRINT, FLOW, ACTIVE, ORIGIN}:
                raise ConfigError("flow blueprints and flows are changed through the flow service")
            for v in req.values:
                if v.type in VALUE_CHECKS:
                    VALUE_CHECKS[v.type](v.key, v.value)
            await store.write(put=[(v.type, v.key, v.value) for v in req.values],
                              delete=[(k.type, k.key) for k in req.keys])
            yield ConfigResponse(version=await self.broadcast())

    @flow.handler
    async def answer_flow(self, req: FlowRequest, flow: Flow) -> AsyncIterator[FlowResponse]:
        op = req.operation
        if op == "list-blueprints":
            yield FlowResponse(blueprint_names=sorted(await self.store.items(BLUEPRINT)))
        elif op == "get-blueprint":
            yield FlowResponse(blueprint_definition=await self._blueprint_text(req))
        elif op == "list-flows":
            yield FlowResponse(flow_ids=sorted(await self.store.items(FLOW)))
        elif op == "get-flow":
            record = json.loads(await self._flow_text(req))
            yield FlowResponse(flow=json.dumps(record), description=record.get("description"),
                               parameters=record.get("parameters"))
        else:
            async with self._flows_lock:
                yield await self._change_flows(req)

    async def _change_flows(self, req: FlowRequest) -> FlowResponse:
        op = req.operation
        if op == "put-blueprint":
            name = _need(req.blueprint_name, "blueprint-name")
            parse_blueprint(_need(req.blueprint_definition, "blueprint-definition"))
            await self.store.write(put=[(BLUEPRINT, name, req.blueprint_definition)])
        elif op == "delete-blueprint":
            name = _need(req.blueprint_name, "blueprint-name")
            await self._blueprint_text(req)
            users = [fid for fid, text in (await self.store.items(FLOW)).items()
                     if json.loads(text).get("blueprint-name") == name]
            if users:
                raise ConfigError(f"blueprint {name!r} is used by running flow(s): {', '.join(users)}")
            await self.store.write(delete=[(BLUEPRINT, name)])
        elif op == "start-flow":
            await self._start_flow(req)
        elif op == "stop-flow":
            await self._stop_flow(req)
        await self.broadcast()
        return FlowResponse()

    async def _start_flow(self, req: FlowRequest) -> None:
        flow_id = _need(req.flow_id, "flow-id")
        if await self.store.get(FLOW, flow_id) is not None:
            raise ConfigError(f"flow {flow_id!r} is already running")
        blueprint = parse_blueprint(await self._blueprint_text(req))
        parameters = flow_parameters(blueprint, req.parameters)
        bindings, interfaces = resolve(blueprint, flow_id, parameters)
        record = {"blueprint-name": req.blueprint_name, "description": req.description or blueprint.get(
            "description", ""), "parameters": parameters, "interfaces": interfaces}
        puts = [(FLOW, flow_id, json.dumps(record))]
        active = await self.store.items(ACTIVE)
        for processor, binding in bindings.items():
            flows = json.loads(active.get(processor, "{}"))
            flows[flow_id] = binding
            puts.append((ACTIVE, processor, json.dumps(flows, sort_keys=True)))
        await self.store.write(put=puts)

    async def _stop_flow(self, req: FlowRequest) -> None:
        flow_id = _need(req.flow_id, "flow-id")
        await self._flow_text(req)
        puts, deletes = [], [(FLOW, flow_id)]
        for processor, text in (await self.store.items(ACTIVE)).items():
            flows = json.loads(text)
            if flows.pop(flow_id, None) is not None:
                if flows:
                    puts.append((ACTIVE, processor, json.dumps(flows, sort_keys=True)))
                else:
                    deletes.append((ACTIVE, processor))
        await self.store.write(put=puts, delete=deletes)

    async def _blueprint_text(self, req: FlowRequest) -> str:
        return await self._lookup(BLUEPRINT, _need(req.blueprint_name, "blueprint-name"), "flow blueprint", "known")

    async def _flow_text(self, req: FlowRequest) -> str:
        return await self._lookup(FLOW, _need(req.flow_id, "flow-id"), "flow", "running")

    async def _lookup(self, type_: str, key: str, what: str, others: str) -> str:
        """The stored value, or an error that lists what does exist."""
        text = await self.store.get(type_, key)
        if text is None:
            known = ", ".join(sorted(await self.store.items(type_))) or "none"
            raise ConfigError(f"unknown {what} {key!r} ({others}: {known})")
        return text


def _need(value: str | None, field: str) -> str:
    if not value:
        raise ConfigError(f"request needs {field!r}")
    return value


def _need_type(req: ConfigRequest) -> str:
    return _need(req.type, "type")
