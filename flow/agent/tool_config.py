"""The agent's tools as the configuration holds them: type `tool`, key = the tool's name, value = JSON

    {"type": "knowledge-query", "description": "Ask the knowledge graph",
     "arguments": [{"name": "question", "type": "string", "description": "the question"}],
     "collection": "optional: always query this collection", "group": ["optional", "groups"]}

The config service checks a tool when it is put (a bad one is refused there, with the reason); the
agent reads the current set from every config push it receives.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tracegraph.base.errors import ConfigError

log = logging.getLogger(__name__)

CONFIG_TYPE = "tool"
ToolType = Literal["knowledge-query", "document-query", "text-completion", "calculator"]
DEFAULT_GROUP = "default"  # the group of a tool that names none, and of a request that asks for none
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")  # one token: the model writes it after "Action:"


class ToolArgument(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str = Field(min_length=1)
    type: str = "string"
    description: str = ""


class ToolDefinition(BaseModel):
    """One configured tool; `name` is its config key."""

    model_config = ConfigDict(frozen=True, extra="ignore")  # upstream's tool configs carry more keys

    name: str
    type: ToolType
    description: str = Field(min_length=1)
    arguments: tuple[ToolArgument, ...] = ()
    collection: str | None = None
    group: tuple[str, ...] | None = None

    def input_of(self, arguments: Mapping[str, str]) -> str:
        """The text the tool works on: its first declared argument, else the only value given."""
        for argument in self.arguments[:1]:
            if argument.name in arguments:
                return arguments[argument.name]
        if len(arguments) == 1:
            return next(iter(arguments.values()))
        wanted = self.arguments[0].name if self.arguments else "an input"
        raise ConfigError(f"tool {self.name!r} needs {wanted!r}; it was given {sorted(arguments) or 'nothing'}")

    def in_groups(self, groups: Iterable[str]) -> bool:
        wanted = set(groups)
        return "*" in wanted or bool(wanted & set(self.group or (DEFAULT_GROUP,)))


def parse_tool(name: str, text: str) -> ToolDefinition:
    """A tool from its config key and JSON value; ConfigError says what is wrong with it."""
    if not _NAME.match(name):
        raise ConfigError(f"tool name {name!r} must be one word of letters, digits, '.', '_' or '-' (max 64)")
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"tool {name!r} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"tool {name!r} must be a JSON object")
    try:
        return ToolDefinition.model_validate({**value, "name": name})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"tool {name!r} is not valid: {problems}") from None


def tools_from_config(config: Mapping[str, Mapping[str, str]]) -> dict[str, ToolDefinition]:
    """Every valid tool of a config snapshot; one stored before checks existed is skipped, with a warning."""
    tools: dict[str, ToolDefinition] = {}
    for name, text in config.get(CONFIG_TYPE, {}).items():
        try:
            tools[name] = parse_tool(name, text)
        except ConfigError as exc:
            log.warning("agent: ignoring %s", exc)
    return tools


def select_tools(tools: Mapping[str, ToolDefinition], groups: Sequence[str] | None) -> dict[str, ToolDefinition]:
    """The tools a request may use: those in one of its `group`s ("*" = every tool). As upstream, a tool or a
    request that names no group is in the "default" group."""
    return {name: tool for name, tool in tools.items() if tool.in_groups(groups or (DEFAULT_GROUP,))}
