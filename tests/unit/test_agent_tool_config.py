"""Agent tools in configuration: the packaged defaults, what a tool must look like, groups, and the
config service seeding the defaults and refusing a bad tool with the reason."""

import json

import pytest

from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.bus.topic import CONFIG_REQUEST_TOPIC, CONFIG_RESPONSE_TOPIC
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import ConfigError, RemoteError
from tracegraph.base.settings import RuntimeSettings
from tracegraph.flow.agent.tool_config import parse_tool, select_tools, tools_from_config
from tracegraph.launch.registry import config_service, packaged_tools
from tracegraph.schemas.config import ConfigKey, ConfigRequest, ConfigResponse, ConfigValue

DEFAULT_TOOLS = packaged_tools()  # read here: reading files inside an async test would block its loop
CALCULATOR = {"type": "calculator", "description": "Arithmetic.", "arguments": [{"name": "expression"}]}


def test_packaged_tools_are_valid_and_cover_every_tool_type():
    tools = tools_from_config({"tool": DEFAULT_TOOLS})
    assert {t.type for t in tools.values()} == {"knowledge-query", "document-query", "text-completion", "calculator"}
    assert all(t.arguments and t.description for t in tools.values())


@pytest.mark.parametrize("name, text, message", [
    ("calc", "{", "tool 'calc' is not valid JSON"),
    ("calc", "[]", "must be a JSON object"),
    ("calc", json.dumps({**CALCULATOR, "type": "web-search"}), "type: Input should be 'knowledge-query'"),
    ("calc", json.dumps({"type": "calculator"}), "description: Field required"),
    ("calc", json.dumps({**CALCULATOR, "arguments": [{"type": "string"}]}), "arguments.0.name: Field required"),
    ("two words", json.dumps(CALCULATOR), "must be one word"),
])
def test_a_bad_tool_is_refused_with_the_reason(name, text, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        parse_tool(name, text)


def test_upstream_style_extra_keys_are_ignored_and_the_key_is_the_name():
    tool = parse_tool("calc", json.dumps({**CALCULATOR, "name": "other", "mcp-tool": "x"}))
    assert tool.name == "calc" and tool.input_of({"expression": "1+1"}) == "1+1"
    assert tool.input_of({"input": "2+2"}) == "2+2"
    with pytest.raises(ConfigError, match="needs 'expression'"):
        tool.input_of({})


def test_groups_filter_tools_as_upstream_does():
    tools = {"calc": parse_tool("calc", json.dumps(CALCULATOR)),
             "research": parse_tool("research", json.dumps({**CALCULATOR, "group": ["research"]})),
             "both": parse_tool("both", json.dumps({**CALCULATOR, "group": ["research", "default"]}))}
    assert sorted(select_tools(tools, None)) == ["both", "calc"]
    assert sorted(select_tools(tools, ["research"])) == ["both", "research"]
    assert sorted(select_tools(tools, ["*"])) == ["both", "calc", "research"]


def test_a_stored_bad_tool_is_skipped_not_fatal():
    assert list(tools_from_config({"tool": {"bad": "{", "calc": json.dumps(CALCULATOR)}})) == ["calc"]


async def test_config_service_seeds_the_default_tools_and_refuses_a_bad_put(tmp_path):
    backend = InprocBackend()
    service = config_service(backend, RuntimeSettings(data_dir=tmp_path))
    await service.start()
    try:
        async with RequestClient(backend, CONFIG_REQUEST_TOPIC, CONFIG_RESPONSE_TOPIC, ConfigRequest,
                                 ConfigResponse, timeout=10) as config:
            listed = await config.request(ConfigRequest(operation="list", type="tool"))
            assert listed.directory == sorted(DEFAULT_TOOLS)

            bad = ConfigValue(type="tool", key="search", value=json.dumps({**CALCULATOR, "type": "web-search"}))
            with pytest.raises(RemoteError, match="tool 'search' is not valid: type: Input should be"):
                await config.request(ConfigRequest(operation="put", values=[bad]))
            with pytest.raises(RemoteError, match="not valid JSON"):
                await config.request(ConfigRequest(operation="put", values=[bad.model_copy(update={"value": "{"})]))

            good = ConfigValue(type="tool", key="sum", value=json.dumps(CALCULATOR))
            await config.request(ConfigRequest(operation="put", values=[good]))
            await config.request(ConfigRequest(operation="delete", keys=[ConfigKey(type="tool", key="calculator")]))
            listed = await config.request(ConfigRequest(operation="list", type="tool"))
            assert "sum" in listed.directory and "search" not in listed.directory
    finally:
        await service.stop()
        await backend.aclose()
