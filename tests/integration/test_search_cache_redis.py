"""The subgraph-query cache on a real Redis (database 15): the shared cache contract, the key layout,
sharing between processes, and answering uncached while Redis is down.

Skipped when no Redis listens on 127.0.0.1:6379, unless TG_REQUIRE_REDIS=1 (then it fails). Every
test writes under its own key prefix and deletes only that prefix afterwards."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid

import pytest
import redis.asyncio as aioredis

from tracegraph.base.retrieval.cache import RedisCache
from unit.test_search_cache import ALICE, N1, N2, CacheContract

REDIS_URL = "redis://127.0.0.1:6379/15"
# Read now: the autouse clean_environ fixture removes TG_* variables before each test runs.
REQUIRE_REDIS = os.environ.get("TG_REQUIRE_REDIS") == "1"

pytestmark = pytest.mark.timeout(60)


def _redis_listening() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module", autouse=True)
def redis_up() -> None:
    if not _redis_listening():
        if REQUIRE_REDIS:
            pytest.fail("Redis required (TG_REQUIRE_REDIS=1) but nothing listens on 127.0.0.1:6379")
        pytest.skip("no Redis on 127.0.0.1:6379; start redis-server or set TG_REQUIRE_REDIS=1 to insist")


@pytest.fixture
async def prefix():
    """A key prefix no other test uses; its keys are deleted afterwards (never FLUSHDB/FLUSHALL)."""
    name = f"tg:test:{uuid.uuid4().hex}"
    yield name
    admin = aioredis.Redis.from_url(REDIS_URL)
    keys = [key async for key in admin.scan_iter(match=f"{name}:*", count=500)]
    if keys:
        await admin.delete(*keys)
    await admin.aclose()


@pytest.fixture
async def make_cache(prefix):
    opened: list[RedisCache] = []

    async def make(ttl: float = 900.0, **options) -> RedisCache:
        cache = RedisCache(REDIS_URL, ttl, prefix=prefix, **options)
        opened.append(cache)
        return cache

    yield make
    for cache in reversed(opened):
        await cache.aclose()


@pytest.fixture
def pass_time():
    return asyncio.sleep


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class TestRedisCache(CacheContract):
    async def test_keys_follow_the_documented_layout_with_expiry(self, make_cache, prefix):
        cache = await make_cache(ttl=60)
        await cache.put(("al:ice", "pa pers"), "k", {"x": 1}, ["http://ex.org/a:b"])
        admin = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
        try:
            value_key = f"{prefix}:v:al%3Aice:pa%20pers:k"
            node_key = f"{prefix}:n:al%3Aice:pa%20pers:http%3A%2F%2Fex.org%2Fa%3Ab"
            assert await admin.get(value_key) == '{"x":1}'
            assert await admin.smembers(node_key) == {"k"}
            assert await admin.smembers(f"{prefix}:s:al%3Aice:pa%20pers") == {"k"}
            for key in (value_key, node_key):
                assert 0 < await admin.pttl(key) <= 60_000
        finally:
            await admin.aclose()

    async def test_two_processes_share_entries_and_invalidations(self, make_cache):
        writer, reader = await make_cache(), await make_cache()
        await writer.put(ALICE, "a", "A", [N1])
        await writer.put(ALICE, "b", "B", [N2])
        assert await reader.get(ALICE, "a") == "A"
        assert await reader.invalidate(ALICE, [N1]) == 1
        assert await writer.get(ALICE, "a") is None
        assert await writer.get(ALICE, "b") == "B"

    async def test_redis_down_answers_uncached_and_warns_once(self, caplog):
        cache = RedisCache(f"redis://127.0.0.1:{unused_port()}/15", 60, retry_after=0)
        try:
            with caplog.at_level(logging.WARNING, logger="tracegraph.base.retrieval.cache"):
                async with asyncio.timeout(30):  # a guard against hanging, not a stopwatch: each try is bounded
                    assert await cache.get(ALICE, "k") is None
                    await cache.put(ALICE, "k", "v", [N1])
                    assert await cache.invalidate(ALICE, [N1]) == 0
                    assert await cache.invalidate_all(ALICE) == 0
                    assert await cache.get(ALICE, "k") is None
            warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
            assert len(warnings) == 1 and "Redis unreachable" in warnings[0].getMessage()
            assert (cache.hits, cache.misses) == (0, 2)
        finally:
            await cache.aclose()

    async def test_invalidation_missed_during_an_outage_is_replayed_once_redis_is_back(self, make_cache):
        cache = await make_cache(retry_after=0)
        await cache.put(ALICE, "a", "A", [N1])
        await cache.put(ALICE, "b", "B", [N2])
        # Stand in for an outage: for a while the cache talks through a client of a dead port.
        dead = RedisCache(f"redis://127.0.0.1:{unused_port()}/15")
        reachable, cache._redis = cache._redis, dead._redis
        assert await cache.invalidate(ALICE, [N1]) == 0
        cache._redis = reachable
        await dead.aclose()
        assert await cache.get(ALICE, "a") is None  # replayed before this read
        assert await cache.get(ALICE, "b") == "B"
        assert cache.invalidated == 1
