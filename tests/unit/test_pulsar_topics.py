"""The Pulsar engine's topic-name mapping, and that building the engine touches no network."""

from __future__ import annotations

import re

import pulsar
import pulsar.asyncio
import pytest

from tracegraph.base.bus import pulsar as engine
from tracegraph.base.bus.pulsar import PulsarBackend, pulsar_topic, topic_from_pulsar
from tracegraph.base.bus.topic import Topic
from tracegraph.base.errors import BusError, ConnectError, TopicNotFound

# What every Pulsar topic name accepts: scheme, tenant, namespace, local name without ':' or '/'.
_SAFE = re.compile(r"(persistent|non-persistent)://[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


@pytest.mark.parametrize(("ours", "theirs"), [
    ("persistent://tg/flow/chunk-load:default", "persistent://tg/flow/chunk-load__default"),
    ("non-persistent://tg/request/graph-rag:default", "persistent://tg/request/graph-rag__default"),
    ("non-persistent://tg/response/config", "non-persistent://tg/response/config"),
    ("persistent://tg/flow/text_load:flow_1", "persistent://tg/flow/text_uload__flow_u1"),
])
def test_known_names_map_as_documented(ours: str, theirs: str) -> None:
    assert pulsar_topic(Topic.parse(ours)) == theirs


def test_durability_is_kept() -> None:
    assert pulsar_topic(Topic(True, "tg", "flow", "x")).startswith("persistent://")
    assert pulsar_topic(Topic(False, "tg", "flow", "x")).startswith("non-persistent://")


TRICKY = ["a:b", "a__b", "a::b", "a_:b", "a:_b", ":", "_", "__", "_u", "a_u", "a:", "x.y-z", "a_b:c_d"]


@pytest.mark.parametrize("name", TRICKY)
@pytest.mark.parametrize("persistent", [True, False])
def test_round_trip_and_no_colon(name: str, persistent: bool) -> None:
    topic = Topic(persistent, "tg", "flow", name)
    mapped = pulsar_topic(topic)
    assert _SAFE.fullmatch(mapped), mapped
    assert topic_from_pulsar(mapped) == topic


def test_mapping_is_injective() -> None:
    mapped = {pulsar_topic(Topic(True, "tg", "flow", name)) for name in TRICKY}
    assert len(mapped) == len(TRICKY)


@pytest.mark.parametrize("topic", [
    Topic(True, "tg", "flow", ""),
    Topic(True, "tg", "flow", "a/b"),
    Topic(True, "tg", "flow", "has space"),
    Topic(True, "tg", "flow", ".."),
    Topic(True, "tg", "flow", "chunk-load-partition-3"),
    Topic(True, "", "flow", "x"),
    Topic(True, "tg", "a/b", "x"),
    Topic(True, "tg", "fl:ow", "x"),
])
def test_names_pulsar_cannot_take_raise(topic: Topic) -> None:
    with pytest.raises(TopicNotFound):
        pulsar_topic(topic)


@pytest.mark.parametrize("name", [
    "persistent://tg/flow/a_b",        # lone escape character
    "persistent://tg/flow/a_",
    "persistent://tg/flow",
    "http://tg/flow/x",
    "persistent://tg/flow/a/b",
])
def test_inverse_rejects_foreign_names(name: str) -> None:
    with pytest.raises(TopicNotFound):
        topic_from_pulsar(name)


async def test_construction_does_not_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[object] = []
    monkeypatch.setattr(pulsar.asyncio, "Client", lambda *a, **k: made.append(a))
    backend = PulsarBackend()
    assert backend.url == "pulsar://127.0.0.1:6650"
    assert PulsarBackend("pulsar://broker:6650").url == "pulsar://broker:6650"
    assert made == []
    await backend.aclose()  # closing a backend that never connected is a no-op
    assert made == []


async def test_bad_url_is_a_connect_error_without_password() -> None:
    with pytest.raises(ConnectError) as caught:
        await PulsarBackend("pulsar://bob:s3cret@host:6650").connect()
    assert "s3cret" not in str(caught.value)
    assert "bob:***@host" in str(caught.value)


@pytest.mark.parametrize(("result", "expected"), [
    (pulsar.Result.ConnectError, ConnectError),
    (pulsar.Result.Timeout, ConnectError),
    (pulsar.Result.InvalidTopicName, TopicNotFound),
    (pulsar.Result.ProducerQueueIsFull, BusError),
])
def test_pulsar_errors_map_to_our_tree(result: pulsar.Result, expected: type[BusError]) -> None:
    error = engine._wrap(pulsar.asyncio.PulsarException(result), "publish to x failed")
    assert type(error) is expected
    assert str(error).startswith("publish to x failed")
