"""A data directory seeded with an older packaged blueprint is upgraded at start, so processors of the
new version can join its flows; a blueprint the user edited is kept. Real config service, real SQLite
store, the in-process bus and the echo processor."""

from __future__ import annotations

import copy
import json
import logging

import pytest

from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.flow.config.processor import ConfigProcessor
from tracegraph.flow.config.store import ConfigStore
from tracegraph.flow.config.upgrade import ORIGIN, digest
from tracegraph.launch.registry import packaged_blueprints, superseded_blueprints
from tracegraph.launch.stack import Stack
from tracegraph.schemas.config import FlowRequest

from support.echo import ECHO_BLUEPRINT, EchoProcessor
from support.stack import echo_client, flow_client, settings_for, start_flow, until_answered

pytestmark = pytest.mark.timeout(60)

NEW = json.dumps(ECHO_BLUEPRINT)
OLD = copy.deepcopy(ECHO_BLUEPRINT)
del OLD["processors"]["echo"]["request"]  # an older version: the echo processor cannot join its flows
OLD = json.dumps(OLD)


def config_with(blueprint: str, superseded: list[str] | None = None):
    def build(backend, settings) -> ConfigProcessor:
        return ConfigProcessor(backend, settings, blueprints=lambda: {"echo": blueprint},
                               superseded=lambda: {"echo": superseded or []})
    return build


async def seeded_flow(tmp_path, edit: str | None = None) -> None:
    """A data dir whose flow `f` runs from the OLD blueprint (or from the user's `edit` of it)."""
    bus = InprocBackend()
    async with Stack(bus, settings_for(tmp_path), [config_with(OLD)]):
        if edit:
            async with flow_client(bus) as flows:
                await flows.request(FlowRequest(operation="put-blueprint", blueprint_name="echo",
                                                blueprint_definition=edit))
        await start_flow(bus, "f")
    await bus.aclose()


async def answers_after_restart(tmp_path, superseded: list[str] | None = None) -> bool:
    bus = InprocBackend()
    try:
        async with Stack(bus, settings_for(tmp_path), [config_with(NEW, superseded), EchoProcessor]):
            async with echo_client(bus, "f") as client:
                await until_answered(client, within=5)
                return True
    finally:
        await bus.aclose()


async def stored_blueprint(tmp_path) -> str:
    store = await ConfigStore(tmp_path / "config.sqlite").open()
    try:
        return (await store.items("flow-blueprint"))["echo"]
    finally:
        await store.close()


async def test_a_blueprint_seeded_by_an_older_version_is_upgraded_and_its_flow_rebound(tmp_path):
    await seeded_flow(tmp_path)
    assert await answers_after_restart(tmp_path)
    assert digest(await stored_blueprint(tmp_path)) == digest(NEW)


async def test_an_older_version_known_only_by_its_digest_is_upgraded(tmp_path):
    await seeded_flow(tmp_path)
    store = await ConfigStore(tmp_path / "config.sqlite").open()
    await store.write(delete=[(ORIGIN, "echo")])  # a data dir from before the origin was recorded
    await store.close()
    assert await answers_after_restart(tmp_path, superseded=[digest(OLD)])
    assert digest(await stored_blueprint(tmp_path)) == digest(NEW)


async def test_a_blueprint_the_user_edited_is_kept_with_a_warning(tmp_path, caplog):
    edited = json.dumps({**json.loads(OLD), "description": "my own echo"})
    await seeded_flow(tmp_path, edit=edited)
    with caplog.at_level(logging.WARNING), pytest.raises(Exception):
        await answers_after_restart(tmp_path)  # the echo processor still cannot join the edited flow
    assert json.loads(await stored_blueprint(tmp_path))["description"] == "my own echo"
    assert any("looks edited, so it is kept" in r.getMessage() for r in caplog.records)


def test_the_shipped_blueprints_are_not_listed_as_superseded():
    superseded = superseded_blueprints()
    for name, text in packaged_blueprints().items():
        assert digest(text) not in superseded.get(name, []), f"{name}: the current version is marked superseded"
