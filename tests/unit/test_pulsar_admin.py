"""The Pulsar engine's use of the admin REST API: where it is, what topic stats mean, what an outage means."""

from __future__ import annotations

import time

import pytest
from aiohttp import web

from tracegraph.base.bus import pulsar as engine
from tracegraph.base.bus.pulsar import PulsarBackend
from tracegraph.base.bus.pulsar_admin import (
    PulsarAdmin, UnknownStats, admin_url, has_subscriptions, stats_path, subscription_backlog,
    subscription_consumers,
)
from tracegraph.base.bus.topic import Topic, request_topic
from tracegraph.base.errors import NoRoute
from support.local_http import served

STATS = {"subscriptions": {
    "service": {"consumers": [{"consumerName": "a"}, {"consumerName": "b"}], "msgBacklog": 7, "unackedMessages": 2},
    "idle": {"consumers": [], "msgBacklog": 3, "unackedMessages": 0},
}}


def test_admin_url_follows_the_service_host_unless_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    assert admin_url("pulsar://10.0.0.5:6650") == "http://10.0.0.5:8080"
    assert admin_url("pulsar+ssl://user:pw@broker:6651") == "https://broker:8443"
    assert admin_url("pulsar://b:6650", "http://admin:9090/") == "http://admin:9090"
    monkeypatch.setenv("TG_PULSAR_ADMIN_URL", "http://elsewhere:8081")
    assert admin_url("pulsar://b:6650") == "http://elsewhere:8081"


def test_stats_path_keeps_the_topic_shape() -> None:
    assert stats_path("persistent://tg/request/echo__f1") == "/admin/v2/persistent/tg/request/echo__f1/stats"


def test_stats_are_read_per_subscription() -> None:
    assert subscription_consumers(STATS, "service") == 2
    assert subscription_consumers(STATS, "idle") == 0
    assert subscription_consumers(STATS, "absent") == 0
    assert subscription_consumers(None, "service") == 0  # no such topic
    assert subscription_backlog(STATS, "service") == 5  # delivered but unacked ones are not waiting
    assert subscription_backlog(STATS, "idle") == 3
    assert has_subscriptions(STATS) and not has_subscriptions({"subscriptions": {}}) and not has_subscriptions(None)


@pytest.fixture
async def admin_server():
    """A stand-in admin API: one known topic, one that errors, the rest unknown."""
    async def stats(request: web.Request) -> web.Response:
        topic = request.match_info["topic"]
        if topic == "known":
            return web.json_response(STATS)
        if topic == "broken":
            return web.Response(status=500)
        return web.Response(status=404)

    app = web.Application()
    app.router.add_get("/admin/v2/persistent/tg/request/{topic}/stats", stats)
    async with served(app) as url:
        yield url


async def test_admin_tells_missing_topics_from_unanswered_questions(admin_server: str) -> None:
    admin = PulsarAdmin(admin_server)
    try:
        assert (await admin.topic_stats("persistent://tg/request/known")) == STATS
        assert await admin.topic_stats("persistent://tg/request/nothing") is None
        with pytest.raises(UnknownStats):
            await admin.topic_stats("persistent://tg/request/broken")
    finally:
        await admin.aclose()
    with pytest.raises(UnknownStats):
        await PulsarAdmin("http://127.0.0.1:1").topic_stats("persistent://tg/request/known")


async def test_backend_counts_consumers_and_refuses_unroutable_requests(admin_server: str) -> None:
    backend = PulsarBackend("pulsar://127.0.0.1:1", admin=admin_server)
    try:
        assert await backend.consumers(request_topic("known"), "service") == 2
        assert await backend.consumers(request_topic("nothing"), "service") == 0
        assert await backend.consumers(request_topic("broken"), "service") is None  # cannot tell, not zero
        assert await backend.backlog(request_topic("known"), "idle") == 3
        with pytest.raises(NoRoute, match="nothing is subscribed"):
            await backend.publish(request_topic("nothing"), b"lost", {})  # refused before any broker is needed
    finally:
        await backend.aclose()


def test_request_topics_are_persistent_on_pulsar_and_map_back() -> None:
    topic = Topic.parse("non-persistent://tg/request/echo:f1")
    assert engine.pulsar_topic(topic) == "persistent://tg/request/echo__f1"
    assert engine.topic_from_pulsar("persistent://tg/request/echo__f1") == topic
    assert engine.pulsar_topic(Topic.parse("non-persistent://tg/response/echo:f1")).startswith("non-persistent://")


def test_expiry_property_is_honoured() -> None:
    assert engine._expired(repr(time.time() - 1))
    assert not engine._expired(repr(time.time() + 60))
    assert not engine._expired(None) and not engine._expired("garbage")
