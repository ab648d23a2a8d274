"""The subgraph-query cache: the behaviour every implementation shares (written once, reused by the
Redis integration tests), plus what only the in-process cache has: an LRU bound and a fake clock."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tracegraph.base.retrieval.cache import InProcessCache, RedisCache, cache_for, cache_key

ALICE = ("alice", "papers")
BOB = ("bob", "papers")
N1, N2, N3 = "http://ex.org/n1", "http://ex.org/n2", "http://ex.org/n3"


class CacheContract:
    """Subclasses provide the fixtures `make_cache(ttl=...)` and `pass_time(seconds)` (awaitable)."""

    async def test_put_then_get_gives_an_equal_copy(self, make_cache):
        cache = await make_cache()
        value = {"candidates": [{"iri": N1, "score": 0.5}], "strategy": "bm25"}
        await cache.put(ALICE, "k", value, [N1])
        got = await cache.get(ALICE, "k")
        assert got == value
        got["candidates"].clear()  # mutating an answer must not reach into the cache
        assert await cache.get(ALICE, "k") == value
        assert await cache.get(ALICE, "absent") is None
        assert (cache.hits, cache.misses) == (2, 1)

    async def test_entry_expires_after_ttl(self, make_cache, pass_time):
        cache = await make_cache(ttl=1.0)
        await cache.put(ALICE, "k", [1, 2], [N1])
        assert await cache.get(ALICE, "k") == [1, 2]
        await pass_time(1.3)
        assert await cache.get(ALICE, "k") is None

    async def test_invalidation_drops_exactly_the_entries_touching_changed_nodes(self, make_cache):
        cache = await make_cache()
        await cache.put(ALICE, "a", "A", [N1, N2])
        await cache.put(ALICE, "b", "B", [N2])
        await cache.put(ALICE, "c", "C", [N3])
        assert await cache.invalidate(ALICE, [N2, "http://ex.org/unrelated"]) == 2
        assert await cache.get(ALICE, "a") is None
        assert await cache.get(ALICE, "b") is None
        assert await cache.get(ALICE, "c") == "C"
        assert cache.invalidated == 2
        assert await cache.invalidate(ALICE, [N1]) == 0  # already gone with N2
        assert await cache.invalidate(ALICE, []) == 0

    async def test_other_scope_is_untouched(self, make_cache):
        cache = await make_cache()
        await cache.put(ALICE, "k", "alice's", [N1])
        await cache.put(BOB, "k", "bob's", [N1])
        assert await cache.invalidate(ALICE, [N1]) == 1
        assert await cache.get(BOB, "k") == "bob's"
        assert await cache.invalidate_all(ALICE) == 0
        assert await cache.get(BOB, "k") == "bob's"

    async def test_invalidate_all_drops_every_entry_of_the_scope(self, make_cache):
        cache = await make_cache()
        await cache.put(ALICE, "a", 1, [N1])
        await cache.put(ALICE, "b", 2, [])
        await cache.put(BOB, "a", 3, [N1])
        assert await cache.invalidate_all(ALICE) == 2
        assert await cache.get(ALICE, "a") is None and await cache.get(ALICE, "b") is None
        assert await cache.get(BOB, "a") == 3
        await cache.put(ALICE, "a", 4, [N2])  # the scope works normally afterwards
        assert await cache.invalidate(ALICE, [N2]) == 1

    async def test_replacing_an_entry_keeps_it_reachable_by_its_new_nodes(self, make_cache):
        cache = await make_cache()
        await cache.put(ALICE, "k", "old", [N1])
        await cache.put(ALICE, "k", "new", [N2])
        assert await cache.get(ALICE, "k") == "new"
        assert await cache.invalidate(ALICE, [N2]) == 1
        assert await cache.get(ALICE, "k") is None

    async def test_colons_in_names_cannot_collide(self, make_cache):
        cache = await make_cache()
        await cache.put(("a:b", "c"), "k", "first", ["x:y"])
        await cache.put(("a", "b:c"), "k", "second", ["x"])
        assert await cache.get(("a:b", "c"), "k") == "first"
        assert await cache.get(("a", "b:c"), "k") == "second"
        assert await cache.invalidate(("a", "b:c"), ["x"]) == 1
        assert await cache.get(("a:b", "c"), "k") == "first"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class TestInProcessCache(CacheContract):
    @pytest.fixture
    def clock(self) -> FakeClock:
        return FakeClock()

    @pytest.fixture
    def make_cache(self, clock):
        async def make(ttl: float = 900.0, max_entries: int = 100) -> InProcessCache:
            return InProcessCache(ttl, max_entries, clock=clock)
        return make

    @pytest.fixture
    def pass_time(self, clock):
        async def advance(seconds: float) -> None:
            clock.now += seconds
        return advance

    async def test_least_recently_used_entry_goes_first_and_leaves_no_index_behind(self, make_cache):
        cache = await make_cache(max_entries=2)
        await cache.put(ALICE, "a", 1, [N1])
        await cache.put(ALICE, "b", 2, [N2])
        await cache.get(ALICE, "a")  # b is now the least recently used
        await cache.put(ALICE, "c", 3, [N2])
        assert len(cache) == 2
        assert await cache.get(ALICE, "b") is None
        assert await cache.get(ALICE, "a") == 1 and await cache.get(ALICE, "c") == 3
        assert await cache.invalidate(ALICE, [N2]) == 1  # only c: the evicted b is out of the index

    async def test_bytes_held_are_bounded_too(self, clock):
        cache = InProcessCache(900.0, 100, max_bytes=2_000, clock=clock)
        for key in "abcd":
            await cache.put(ALICE, key, "x" * 600, [N1])
        assert await cache.get(ALICE, "a") is None and await cache.get(ALICE, "d") == "x" * 600
        assert cache.bytes <= 2_000 and len(cache) == 2
        await cache.put(ALICE, "huge", "x" * 5_000, [N2])  # over the whole budget: not kept, nothing evicted
        assert await cache.get(ALICE, "huge") is None and len(cache) == 2
        await cache.invalidate(ALICE, [N1])
        assert cache.bytes == 0 and len(cache) == 0

    async def test_expired_entries_are_not_counted_as_invalidated(self, make_cache, pass_time):
        cache = await make_cache(ttl=10)
        await cache.put(ALICE, "a", 1, [N1])
        await pass_time(11)
        assert await cache.invalidate(ALICE, [N1]) == 0
        assert len(cache) == 0


def test_cache_key_ignores_dict_order_and_tells_queries_apart():
    key = cache_key(ALICE, "bm25", {"q": "who wrote it", "k": 10, "filters": {"a": 1, "b": 2}})
    assert key == cache_key(ALICE, "bm25", {"filters": {"b": 2, "a": 1}, "k": 10, "q": "who wrote it"})
    assert len(key) == 64 and int(key, 16) >= 0
    assert key != cache_key(ALICE, "bm25", {"q": "who wrote it", "k": 11, "filters": {"a": 1, "b": 2}})
    assert key != cache_key(BOB, "bm25", {"q": "who wrote it", "k": 10, "filters": {"a": 1, "b": 2}})
    assert key != cache_key(ALICE, "vector", {"q": "who wrote it", "k": 10, "filters": {"a": 1, "b": 2}})
    assert cache_key(("a:b", "c"), "s", {}) != cache_key(("a", "b:c"), "s", {})


def test_cache_key_is_pinned_so_every_process_and_version_agrees():
    # sha256 of '[["alice","papers"],"bm25",{"k":3,"q":"é"}]'; a change here orphans shared Redis entries.
    assert cache_key(ALICE, "bm25", {"q": "é", "k": 3}) == (
        "c564dfd1f02c296b6e5efbf1b158a1f2a386c2623b2713b67c30d5dd8175b878")


async def test_cache_for_follows_settings():
    memory = cache_for(SimpleNamespace(redis_url=None, search_cache_ttl=5.0, search_cache_entries=7,
                                       search_cache_bytes=4096))
    assert (memory.name, memory.ttl, memory.max_entries, memory.max_bytes) == ("in-process", 5.0, 7, 4096)
    shared = cache_for(SimpleNamespace(redis_url="redis://127.0.0.1:1/0", search_cache_ttl=5.0,
                                       search_cache_entries=7))
    assert isinstance(shared, RedisCache) and (shared.name, shared.ttl) == ("redis", 5.0)
    await shared.aclose()
