"""The search service's subgraph-query cache (RSN-13): a strategy's ranked candidates for one question
are kept for a TTL together with the graph nodes they touched, so that a graph update drops exactly
the cached answers it could have changed and nothing else.

Two implementations share one Protocol: `InProcessCache` (one process, LRU-bounded in entries and in
bytes) and `RedisCache` (shared by every search replica). `cache_for(settings)` picks one. Values are
JSON-serialisable objects; both caches store them as JSON text, so a caller never gets back an object
it can mutate inside the cache, and both behave the same.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import quote

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError, WatchError

try:
    from redis.driver_info import DriverInfo
except ImportError:  # redis < 7 looks its own version up once, at import
    _CLIENT_INFO: dict[str, Any] = {}
else:  # looked up now: redis would otherwise stat package metadata on the event loop per connection
    _CLIENT_INFO = {"driver_info": DriverInfo()}

log = logging.getLogger(__name__)

Scope = tuple[str, str]  # (user, collection)
T = TypeVar("T")


def cache_key(scope: Scope, strategy: str, params: Mapping[str, Any]) -> str:
    """sha256 of canonical JSON (sorted keys, no spaces): the same query gets the same key in any process."""
    canonical = json.dumps([list(scope), strategy, dict(params)], sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class SubgraphCache(Protocol):
    """Cached sub-query results, each tagged with the node IRIs it touched."""

    name: str  # "in-process" or "redis", shown in the explain trace
    hits: int
    misses: int
    invalidated: int

    async def get(self, scope: Scope, key: str) -> Any | None: ...
    async def put(self, scope: Scope, key: str, value: Any, nodes: Iterable[str]) -> None: ...
    async def invalidate(self, scope: Scope, nodes: Iterable[str]) -> int: ...
    async def invalidate_all(self, scope: Scope) -> int: ...
    async def aclose(self) -> None: ...


def _encode(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@dataclass(frozen=True, slots=True)
class _Entry:
    payload: str
    nodes: frozenset[str]
    expires: float
    size: int  # bytes it holds, roughly: see _size


# What one more string costs beside its characters (object header, hash slots in the entry's node
# set and in the node index): an estimate, so that the byte bound follows what an entry really holds.
_PER_STRING = 120


def _size(payload: str, nodes: frozenset[str]) -> int:
    return len(payload) + _PER_STRING + sum(len(node) + _PER_STRING for node in nodes)


class InProcessCache:
    """One process's cache: entries expire after `ttl` seconds, and the least recently used go first
    beyond `max_entries` or beyond `max_bytes` held (a walk over a large graph caches a large result,
    so a count alone would not bound memory). Indexes from (scope, node) and from scope to keys follow
    every drop."""

    name = "in-process"

    def __init__(self, ttl: float = 900.0, max_entries: int = 10_000, *, max_bytes: int = 64 * 2**20,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._bytes = 0
        self._clock = clock
        self._entries: OrderedDict[tuple[Scope, str], _Entry] = OrderedDict()  # oldest use first
        self._by_node: dict[tuple[Scope, str], set[str]] = {}
        self._by_scope: dict[Scope, set[str]] = {}
        self.hits = self.misses = self.invalidated = 0

    async def get(self, scope: Scope, key: str) -> Any | None:
        entry = self._entries.get((scope, key))
        if entry is not None and entry.expires <= self._clock():
            self._drop(scope, key)
            entry = None
        if entry is None:
            self.misses += 1
            return None
        self._entries.move_to_end((scope, key))
        self.hits += 1
        return json.loads(entry.payload)

    async def put(self, scope: Scope, key: str, value: Any, nodes: Iterable[str]) -> None:
        payload, touched = _encode(value), frozenset(nodes)
        entry = _Entry(payload, touched, self._clock() + self.ttl, _size(payload, touched))
        self._drop(scope, key)
        if entry.size > self.max_bytes:
            return  # it would push out everything else
        self._entries[(scope, key)] = entry
        self._bytes += entry.size
        self._by_scope.setdefault(scope, set()).add(key)
        for node in entry.nodes:
            self._by_node.setdefault((scope, node), set()).add(key)
        self._evict()

    async def invalidate(self, scope: Scope, nodes: Iterable[str]) -> int:
        keys = set().union(*(self._by_node.get((scope, node), ()) for node in set(nodes)))
        return self._drop_counted(scope, keys)

    async def invalidate_all(self, scope: Scope) -> int:
        return self._drop_counted(scope, set(self._by_scope.get(scope, ())))

    async def aclose(self) -> None:
        self._entries.clear()
        self._by_node.clear()
        self._by_scope.clear()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def bytes(self) -> int:
        """Roughly what the entries hold, the figure `max_bytes` bounds."""
        return self._bytes

    def _drop_counted(self, scope: Scope, keys: set[str]) -> int:
        dropped = sum(self._drop(scope, key) for key in keys)
        self.invalidated += dropped
        return dropped

    def _drop(self, scope: Scope, key: str) -> bool:
        """Forget one entry and its index rows; True when it had not yet expired."""
        entry = self._entries.pop((scope, key), None)
        if entry is None:
            return False
        self._bytes -= entry.size
        _discard(self._by_scope, scope, key)
        for node in entry.nodes:
            _discard(self._by_node, (scope, node), key)
        return entry.expires > self._clock()

    def _evict(self) -> None:
        """Drop least recently used entries beyond the bounds, and expired ones found at that end."""
        now = self._clock()
        while self._entries:
            (scope, key), oldest = next(iter(self._entries.items()))
            if len(self._entries) <= self.max_entries and self._bytes <= self.max_bytes and oldest.expires > now:
                return
            self._drop(scope, key)


def _discard(index: dict[Any, set[str]], at: Any, key: str) -> None:
    keys = index.get(at)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[at]


class RedisCache:
    """A cache shared by every search process through Redis (redis.asyncio only).

    Layout, each name component percent-quoted so that ':' in a user, collection or node IRI
    cannot make two names collide:
      `{prefix}:v:{user}:{collection}:{key}`  the value as JSON, expiring after `ttl`
      `{prefix}:n:{user}:{collection}:{node}` set of keys whose result touched the node
      `{prefix}:s:{user}:{collection}`        set of all keys of the scope, for invalidate_all
    Index sets get their expiry refreshed to `ttl` on every put, so they outlive the values they
    list. A key left in a set after its value is gone can only cause a spurious drop, never a
    missed one. Invalidation WATCHes the sets it reads, so a concurrent put is never half-dropped.

    A Redis that is down or slow never breaks a search: `get` answers None (a miss), `put` does
    nothing and `invalidate` answers 0, with one warning per outage; for `retry_after` seconds after
    a failure Redis is not even tried, so the service answers uncached without waiting on timeouts.
    Invalidations that failed are kept and replayed before the next operation that reaches Redis,
    so an outage cannot leave an entry stale that an update should have dropped, provided this
    process lives on until Redis is back.
    """

    name = "redis"

    def __init__(self, url: str, ttl: float = 900.0, *, prefix: str = "tg:search", retry_after: float = 5.0,
                 connect_timeout: float = 1.0, timeout: float = 2.0) -> None:
        self.ttl = ttl
        self.prefix = prefix
        self.retry_after = retry_after
        self._redis = aioredis.Redis.from_url(
            url, decode_responses=True, socket_connect_timeout=connect_timeout, socket_timeout=timeout,
            retry=Retry(NoBackoff(), 1),  # one quick retry covers a pooled connection Redis closed
            **_CLIENT_INFO)
        self._pending: dict[Scope, set[str] | None] = {}  # failed invalidations; None = everything
        self._skip_until = 0.0
        self._failing = False
        self.hits = self.misses = self.invalidated = 0

    async def get(self, scope: Scope, key: str) -> Any | None:
        payload = await self._guarded(lambda: self._redis.get(self._value_key(scope, key)), None)
        if payload is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(payload)

    async def put(self, scope: Scope, key: str, value: Any, nodes: Iterable[str]) -> None:
        payload = _encode(value)
        await self._guarded(lambda: self._write(scope, key, payload, set(nodes)), None)

    async def invalidate(self, scope: Scope, nodes: Iterable[str]) -> int:
        nodes = set(nodes)
        if not nodes:
            return 0
        dropped = await self._guarded(lambda: self._drop_nodes(scope, nodes), None)
        if dropped is None:
            self._remember(scope, nodes)
            return 0
        return dropped

    async def invalidate_all(self, scope: Scope) -> int:
        dropped = await self._guarded(lambda: self._drop_scope(scope), None)
        if dropped is None:
            self._remember(scope, None)
            return 0
        return dropped

    async def aclose(self) -> None:
        await self._redis.aclose()

    # Names

    def _scope_name(self, kind: str, scope: Scope) -> str:
        user, collection = scope
        return f"{self.prefix}:{kind}:{quote(user, safe='')}:{quote(collection, safe='')}"

    def _value_key(self, scope: Scope, key: str) -> str:
        return f"{self._scope_name('v', scope)}:{quote(key, safe='')}"

    def _node_key(self, scope: Scope, node: str) -> str:
        return f"{self._scope_name('n', scope)}:{quote(node, safe='')}"

    # Redis operations (they raise when Redis is unreachable; _guarded decides what that means)

    async def _write(self, scope: Scope, key: str, payload: str, nodes: set[str]) -> None:
        ttl_ms = max(1, int(self.ttl * 1000))
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.set(self._value_key(scope, key), payload, px=ttl_ms)
            for index in [self._scope_name("s", scope), *(self._node_key(scope, node) for node in nodes)]:
                pipe.sadd(index, key)
                pipe.pexpire(index, ttl_ms)
            await pipe.execute()

    async def _drop_nodes(self, scope: Scope, nodes: set[str]) -> int:
        """Drop the values listed in the nodes' sets, and those sets, in one WATCHed transaction."""
        node_keys = [self._node_key(scope, node) for node in sorted(nodes)]
        return await self._drop_listed(scope, node_keys, lambda pipe: pipe.sunion(node_keys))

    async def _drop_scope(self, scope: Scope) -> int:
        """Drop every value of the scope; its node sets expire on their own (see the class docstring)."""
        scope_set = self._scope_name("s", scope)
        return await self._drop_listed(scope, [scope_set], lambda pipe: pipe.smembers(scope_set))

    async def _drop_listed(self, scope: Scope, index_keys: list[str],
                           read: Callable[[Any], Awaitable[set[str]]]) -> int:
        """Read keys from index sets, then delete those values and the index sets atomically.

        A put that touches an index set in between aborts the transaction, which is then retried."""
        async with self._redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(*index_keys)
                    keys = sorted(await read(pipe))
                    pipe.multi()
                    pipe.delete(*index_keys)
                    if keys:
                        pipe.delete(*(self._value_key(scope, key) for key in keys))
                        pipe.srem(self._scope_name("s", scope), *keys)
                    results = await pipe.execute()
                except WatchError:
                    continue
                dropped = results[1] if keys else 0
                self.invalidated += dropped
                return dropped

    # Outage handling

    async def _guarded(self, operation: Callable[[], Awaitable[T]], fallback: T) -> T:
        """Run one Redis operation after any owed invalidations; on failure answer `fallback`."""
        if time.monotonic() < self._skip_until:
            return fallback
        try:
            await self._replay()
            result = await operation()
        except (RedisError, OSError) as exc:
            self._skip_until = time.monotonic() + self.retry_after
            if not self._failing:
                self._failing = True
                log.warning("search cache: Redis unreachable (%s); answering uncached, retrying every %gs",
                            exc, self.retry_after)
            return fallback
        if self._failing:
            self._failing = False
            log.info("search cache: Redis reachable again")
        return result

    def _remember(self, scope: Scope, nodes: set[str] | None) -> None:
        owed = self._pending.get(scope, set())
        self._pending[scope] = None if nodes is None or owed is None else owed | nodes

    async def _replay(self) -> None:
        for scope, nodes in list(self._pending.items()):
            if nodes is None:
                await self._drop_scope(scope)
            else:
                await self._drop_nodes(scope, nodes)
            del self._pending[scope]


def cache_for(settings: Any) -> SubgraphCache:
    """Redis when `settings.redis_url` is set (shared by replicas), else a cache in this process."""
    if settings.redis_url:
        return RedisCache(settings.redis_url, settings.search_cache_ttl)
    return InProcessCache(settings.search_cache_ttl, settings.search_cache_entries, max_bytes=settings.search_cache_bytes)
