"""Config and flow service messages, in upstream TrustGraph's shapes (kebab-case request keys)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from tracegraph.schemas.base import Message, ServiceResponse
from tracegraph.schemas.fields import Name


class ConfigKey(Message):
    type: str
    key: str


class ConfigValue(Message):
    type: str
    key: str
    value: str


class ConfigRequest(Message):
    """get / list / getvalues / put / delete / config (everything, with its version)."""

    schema_name: ClassVar[str] = "config-request"

    operation: Literal["get", "list", "getvalues", "put", "delete", "config"]
    keys: list[ConfigKey] = []
    values: list[ConfigValue] = []
    type: str | None = None


class ConfigResponse(ServiceResponse):
    schema_name: ClassVar[str] = "config-response"

    version: int | None = None
    values: list[ConfigValue] | None = None
    directory: list[str] | None = None
    config: dict[str, dict[str, str]] | None = None
    end_of_stream: bool = False


class ConfigPush(Message):
    """The whole configuration, sent to every processor each time it changes."""

    schema_name: ClassVar[str] = "config-push"

    version: int
    config: dict[str, dict[str, str]]


FlowOperation = Literal[
    "list-blueprints", "get-blueprint", "put-blueprint", "delete-blueprint",
    "list-flows", "get-flow", "start-flow", "stop-flow",
]


class FlowRequest(Message):
    schema_name: ClassVar[str] = "flow-request"

    operation: FlowOperation
    blueprint_name: Name | None = Field(None, alias="blueprint-name")
    blueprint_definition: str | None = Field(None, alias="blueprint-definition")
    description: str | None = None
    flow_id: Name | None = Field(None, alias="flow-id")
    parameters: dict[str, str] | None = None


class FlowResponse(ServiceResponse):
    schema_name: ClassVar[str] = "flow-response"

    blueprint_names: list[str] | None = Field(None, alias="blueprint-names")
    flow_ids: list[str] | None = Field(None, alias="flow-ids")
    blueprint_definition: str | None = Field(None, alias="blueprint-definition")
    flow: str | None = None
    description: str | None = None
    parameters: dict[str, str] | None = None
    end_of_stream: bool = False
