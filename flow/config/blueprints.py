"""Flow blueprints: JSON that maps each processor's specs to topics, resolved for one flow id.

    {"description": "...",
     "parameters": {"chunk-size": {"default": "2000", "description": "..."}},
     "processors": {"chunker": {"input": "persistent://tg/flow/chunk-load:{id}",
                                "chunk-size": "{chunk-size}"}},
     "interfaces": {"document-load": "persistent://tg/flow/document-load:{id}"}}

`{id}` becomes the flow id and `{name}` a parameter's value; a request/response spec maps
to `{"request": topic, "response": topic}`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from tracegraph.base.bus.topic import Topic
from tracegraph.base.errors import ConfigError, TopicNotFound

_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_-]+)\}")
_FLOW_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def parse_blueprint(text: str) -> dict[str, Any]:
    """Parse and check a blueprint definition; errors say what is wrong and where."""
    try:
        blueprint = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"blueprint is not valid JSON: {exc}") from None
    if not isinstance(blueprint, dict):
        raise ConfigError("blueprint must be a JSON object")
    for section in ("processors", "interfaces", "parameters"):
        if not isinstance(blueprint.get(section, {}), dict):
            raise ConfigError(f"blueprint section {section!r} must be an object")
    if not blueprint.get("processors"):
        raise ConfigError("blueprint names no processors")
    # Resolving with dummy values checks every topic and placeholder up front.
    params = {name: "x" for name in blueprint.get("parameters", {})}
    resolve(blueprint, "check", params)
    return blueprint


def flow_parameters(blueprint: Mapping[str, Any], given: Mapping[str, str] | None) -> dict[str, str]:
    """Blueprint defaults overlaid with the parameters given at start; unknown names are refused."""
    declared: Mapping[str, Any] = blueprint.get("parameters", {})
    unknown = sorted(set(given or {}) - set(declared))
    if unknown:
        raise ConfigError(f"unknown flow parameter(s) {', '.join(unknown)}; "
                          f"this blueprint takes: {', '.join(sorted(declared)) or 'none'}")
    values = {name: str(spec.get("default")) for name, spec in declared.items()
              if isinstance(spec, Mapping) and spec.get("default") is not None}
    values.update({k: str(v) for k, v in (given or {}).items()})
    missing = sorted(set(declared) - set(values))
    if missing:
        raise ConfigError(f"flow parameter(s) without a value or default: {', '.join(missing)}")
    return values


def resolve(blueprint: Mapping[str, Any], flow_id: str, parameters: Mapping[str, str]
            ) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Per-processor bindings and the flow's interfaces, with placeholders filled in."""
    if not _FLOW_ID.match(flow_id):
        raise ConfigError(f"invalid flow id {flow_id!r}: use letters, digits, '.', '_' or '-' (max 64)")
    values = {**parameters, "id": flow_id}

    def fill(node: Any, where: str, is_topic: bool) -> Any:
        if isinstance(node, Mapping):
            return {k: fill(v, f"{where}.{k}", is_topic) for k, v in node.items()}
        if not isinstance(node, str):
            raise ConfigError(f"{where}: expected a string, got {type(node).__name__}")
        text = _PLACEHOLDER.sub(lambda m: _value(m.group(1), values, where), node)
        if is_topic and "://" in text:
            try:
                Topic.parse(text)
            except TopicNotFound as exc:
                raise ConfigError(f"{where}: {exc}") from None
        return text

    bindings: dict[str, dict[str, Any]] = {}
    for processor, specs in blueprint.get("processors", {}).items():
        if not isinstance(specs, Mapping):
            raise ConfigError(f"processors.{processor} must be an object of spec -> topic")
        resolved = fill(specs, f"processors.{processor}", True)
        bindings[processor] = {"topics": resolved, "parameters": dict(parameters)}
    interfaces = fill(blueprint.get("interfaces", {}), "interfaces", True)
    return bindings, interfaces


def _value(name: str, values: Mapping[str, str], where: str) -> str:
    if name not in values:
        raise ConfigError(f"{where}: placeholder {{{name}}} is neither 'id' nor a declared parameter")
    return values[name]
