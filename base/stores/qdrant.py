"""Qdrant engine for VectorStore: embedded (a local folder, no server) or a Qdrant server by URL.

Each (user, collection, kind) gets its own Qdrant collection, created on first upsert with the
size of that batch's vectors and cosine distance. Our string ids (IRIs) become UUIDv5 point ids.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import logging
import math
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from pydantic import SecretStr
from qdrant_client import AsyncQdrantClient, QdrantClient
from qdrant_client.common.version_check import is_compatible
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse
from qdrant_client.models import (Distance, FieldCondition, Filter, FilterSelector, MatchValue,
                                  PayloadSchemaType, PointIdsList, PointStruct, VectorParams)

from tracegraph.base.errors import ConfigError, TransientError
from tracegraph.base.stores.protocol import CollectionRef, OpenedOnEnter, latest_of_batch, VectorHit, VectorItem, VectorKind

T = TypeVar("T")
log = logging.getLogger(__name__)

KINDS: tuple[VectorKind, ...] = ("entity", "chunk")
ID_KEY = "_tg_id"  # payload key that keeps the original string id next to its UUID point id
MEMORY = ":memory:"
# Answers worth retrying: rate limiting and a server or proxy that is briefly unavailable.
_RETRYABLE_STATUS = frozenset({429, 502, 503, 504})


def point_id(id: str) -> str:
    """The Qdrant point id of one of our ids: UUIDv5 in the URL namespace, the same in every process."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, id))


def collection_name(ref: CollectionRef, kind: VectorKind) -> str:
    """`tg__{user}__{collection}__{kind}__{digest}`, one Qdrant collection per user, collection and kind.

    User and collection names may themselves contain "__", so the readable part alone could
    make ("a__b", "c") and ("a", "b__c") collide; the digest of the exact, case-sensitive
    "user/collection" ('/' is not allowed in either name) keeps every pair apart, also on a
    case-insensitive filesystem where local mode keeps "Alice" and "alice" in folders.
    """
    if kind not in KINDS:
        raise ConfigError(f"unknown vector kind {kind!r}: use one of {', '.join(KINDS)}")
    digest = hashlib.blake2b(str(ref).encode(), digest_size=8).hexdigest()
    return f"tg__{ref.user}__{ref.collection}__{kind}__{digest}"


class _Missing(Exception):
    """The Qdrant collection does not exist (internal: the public methods answer [] or 0)."""


class QdrantVectorStore(OpenedOnEnter):
    """Entity and chunk vectors per collection in Qdrant; implements the VectorStore Protocol.

    Give exactly one of:
    - `path`: local mode, embedded in this process (qdrant-client's `QdrantLocal`, no server).
      The folder is locked while open: one process (and one store) at a time; a second gets a
      ConfigError. Use a server to share vectors between processes. `":memory:"` keeps nothing.
      Local mode reads and writes its files (a SQLite database per collection, a metadata JSON)
      synchronously even through `AsyncQdrantClient`, which would stall the event loop, so this
      store drives the sync `QdrantClient` on one dedicated worker thread instead: every call is
      handed to that thread, which also serialises them as the local client requires. Local mode
      searches by brute force and commits each point to SQLite on its own, so it suits small
      data (Qdrant advises under ~20k points per collection).
    - `url` (with an optional `api_key`): a Qdrant server through the async REST client.
      Collections get keyword payload indexes on `indexed_keys`, the keys `delete_where` is used
      with (a server in strict mode refuses to filter on unindexed keys). An unreachable server,
      a timeout, 429 or 502-504 raise TransientError.

    Vector sizes are cached per process once seen; a collection dropped by another process is
    noticed on its next missing-collection answer. Use as `async with QdrantVectorStore(...)`, or
    call the methods directly (the first call opens) and `aclose()` at the end.
    """

    def __init__(self, *, path: str | os.PathLike[str] | None = None, url: str | None = None,
                 api_key: str | SecretStr | None = None, timeout: float = 30.0,
                 indexed_keys: Sequence[str] = ("document",), batch_size: int = 256) -> None:
        if (path is None) == (url is None):
            raise ConfigError("QdrantVectorStore needs exactly one of path= (local mode) or url= (a Qdrant server)")
        if api_key is not None and url is None:
            raise ConfigError("api_key= applies to a Qdrant server (url=), not to local mode")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        self.path = None if path is None else os.fspath(path)
        self.url = url
        self._api_key = api_key if isinstance(api_key, SecretStr) or api_key is None else SecretStr(api_key)
        self._timeout = timeout
        self._indexed_keys = tuple(indexed_keys)
        self._batch_size = batch_size
        self._client: QdrantClient | AsyncQdrantClient | None = None
        self._thread: ThreadPoolExecutor | None = None  # local mode only
        self._closed = False
        self._open_lock = asyncio.Lock()
        self._create_lock = asyncio.Lock()
        self._sizes: dict[str, int] = {}  # Qdrant collection name -> vector size

    @property
    def where(self) -> str:
        return f"local folder {self.path}" if self.path is not None else f"server {self.url}"

    async def open(self) -> QdrantVectorStore:
        """Open the folder (taking its lock) or connect to the server; later calls do nothing."""
        async with self._open_lock:
            if self._closed:
                raise ConfigError(f"this QdrantVectorStore ({self.where}) is closed")
            if self._client is not None:
                return self
            if self.path is not None:
                thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qdrant-local")
                try:
                    self._client = await self._in(thread, partial(_open_local, self.path))
                finally:
                    if self._client is None:
                        thread.shutdown(wait=False)
                    else:
                        self._thread = thread
            else:
                # The client reads package metadata and CA files when built: off the event loop.
                client, version = await asyncio.to_thread(self._connect)
                try:
                    server = await client.info()
                except (ResponseHandlingException, UnexpectedResponse) as exc:
                    await client.close()
                    raise TransientError(f"cannot reach Qdrant at {self.url}: {_reason(exc)}") from exc
                if not is_compatible(version, server.version):
                    log.warning("qdrant-client %s may not work with the Qdrant %s server at %s "
                                "(major versions must match, minor ones differ by at most 1)",
                                version, server.version, self.url)
                self._client = client
        return self

    def _connect(self) -> tuple[AsyncQdrantClient, str]:
        # Our own version check replaces the client's, which makes a blocking request on a thread of its own.
        client = AsyncQdrantClient(url=self.url, timeout=math.ceil(self._timeout), check_compatibility=False,
                                   api_key=None if self._api_key is None else self._api_key.get_secret_value())
        return client, importlib.metadata.version("qdrant-client")

    async def aclose(self) -> None:
        """Release the folder lock or the connections; idempotent."""
        async with self._open_lock:
            self._closed = True
            client, self._client = self._client, None
            thread, self._thread = self._thread, None
        if isinstance(client, QdrantClient) and thread is not None:
            try:
                await self._in(thread, client.close)
            finally:
                thread.shutdown(wait=False)  # idle now: nothing left to wait for
        elif isinstance(client, AsyncQdrantClient):
            await client.close()

    async def upsert(self, ref: CollectionRef, kind: VectorKind, items: Sequence[VectorItem]) -> None:
        """Insert or overwrite by id; the collection is created by the first batch, at its vector size."""
        name = collection_name(ref, kind)
        if not items:
            return
        latest, size = latest_of_batch(ref, kind, items)
        points = [_point(item) for item in latest.values()]
        for attempt in (1, 2):
            await self._ensure(name, size, ref, kind)
            try:
                for start in range(0, len(points), self._batch_size):
                    await self._call("upsert", collection_name=name,
                                     points=points[start:start + self._batch_size], wait=True)
                return
            except _Missing:  # dropped behind our back since we cached its size: create it again
                self._sizes.pop(name, None)
                if attempt == 2:
                    raise TransientError(f"Qdrant collection {name} vanished twice during one upsert") from None

    async def search(self, ref: CollectionRef, kind: VectorKind, vector: Sequence[float],
                     limit: int = 10) -> list[VectorHit]:
        """Nearest first by cosine similarity (score in [-1, 1]); an unknown collection gives []."""
        name = collection_name(ref, kind)
        query = _floats(vector)
        size = await self._size(name)
        if size is None or limit < 1:
            return []
        if len(query) != size:
            raise ConfigError(_size_mismatch(ref, kind, size, len(query), "query vector"))
        try:
            answer = await self._call("query_points", collection_name=name, query=query, limit=limit,
                                      with_payload=True, with_vectors=False)
        except _Missing:
            self._sizes.pop(name, None)
            return []
        hits = []
        for point in answer.points:
            payload = dict(point.payload or {})
            hits.append(VectorHit(id=str(payload.pop(ID_KEY, point.id)), score=float(point.score), payload=payload))
        return hits

    async def get(self, ref: CollectionRef, kind: VectorKind, ids: Sequence[str],
                  with_vectors: bool = False) -> list[VectorHit]:
        """The stored items of these ids (payload, the vector if asked, score 0), in the order asked;
        unknown ids are left out."""
        name = collection_name(ref, kind)
        wanted = list(dict.fromkeys(ids))
        if not wanted or await self._size(name) is None:
            return []
        try:
            found = await self._call("retrieve", collection_name=name, ids=[point_id(i) for i in wanted],
                                     with_payload=True, with_vectors=with_vectors)
        except _Missing:
            return []
        payloads, vectors = {}, {}
        for point in found:
            payload = dict(point.payload or {})
            id = str(payload.pop(ID_KEY, point.id))
            payloads[id] = payload
            if with_vectors and isinstance(point.vector, list):  # one unnamed vector per point
                vectors[id] = [float(x) for x in point.vector]
        return [VectorHit(id=i, score=0.0, payload=payloads[i], vector=vectors.get(i)) for i in wanted if i in payloads]

    async def delete(self, ref: CollectionRef, kind: VectorKind, ids: Sequence[str]) -> int:
        """Delete these ids; returns how many existed."""
        name = collection_name(ref, kind)
        wanted = list(dict.fromkeys(point_id(i) for i in ids))
        if not wanted:
            return 0
        try:
            found = await self._call("retrieve", collection_name=name, ids=wanted,
                                     with_payload=False, with_vectors=False)
            if found:
                await self._call("delete", collection_name=name,
                                 points_selector=PointIdsList(points=[p.id for p in found]), wait=True)
        except _Missing:
            return 0
        return len(found)

    async def delete_where(self, ref: CollectionRef, kind: VectorKind, key: str, value: str) -> int:
        """Delete every vector whose payload[key] == value; returns how many matched just before.

        `key` is a Qdrant payload path: "a.b" means key "b" inside the object under "a".
        """
        name = collection_name(ref, kind)
        where = Filter(must=[FieldCondition(key=key, match=MatchValue(value=value))])
        try:
            matched = (await self._call("count", collection_name=name, count_filter=where, exact=True)).count
            if matched:
                await self._call("delete", collection_name=name, points_selector=FilterSelector(filter=where),
                                 wait=True)
        except _Missing:
            return 0
        return matched

    async def drop(self, ref: CollectionRef) -> None:
        """Delete this user's collection: its entity and chunk vectors; nothing if it does not exist."""
        for kind in KINDS:
            name = collection_name(ref, kind)
            self._sizes.pop(name, None)
            try:
                await self._call("delete_collection", collection_name=name)
            except _Missing:
                pass

    async def _size(self, name: str) -> int | None:
        """Vector size of a Qdrant collection, None if it does not exist."""
        size = self._sizes.get(name)
        if size is None:
            try:
                info = await self._call("get_collection", collection_name=name)
            except _Missing:
                return None
            vectors = info.config.params.vectors
            if not isinstance(vectors, VectorParams):
                raise ConfigError(f"Qdrant collection {name} has named vectors: it was not made by tracegraph")
            size = self._sizes[name] = vectors.size
        return size

    async def _ensure(self, name: str, size: int, ref: CollectionRef, kind: VectorKind) -> None:
        """Create the collection at `size` unless it exists; an existing one must have that size."""
        have = await self._size(name)
        if have is None:
            async with self._create_lock:
                have = await self._size(name)
                if have is None:
                    try:
                        await self._call("create_collection", collection_name=name,
                                         vectors_config=VectorParams(size=size, distance=Distance.COSINE))
                    except (_Missing, UnexpectedResponse, ValueError) as exc:
                        have = await self._size(name)  # another process may have created it first
                        if have is None and isinstance(exc, _Missing):
                            raise ConfigError(f"Qdrant ({self.where}) answered 'not found' to creating "
                                              f"collection {name}: is the URL right?") from exc
                        if have is None:
                            raise
                    else:
                        have = self._sizes[name] = size
                        await self._index_payload(name)
        if have != size:
            raise ConfigError(_size_mismatch(ref, kind, have, size, "batch"))

    async def _index_payload(self, name: str) -> None:
        if isinstance(self._client, AsyncQdrantClient):  # local mode has no payload indexes (and warns)
            for key in self._indexed_keys:
                await self._call("create_payload_index", collection_name=name, field_name=key,
                                 field_schema=PayloadSchemaType.KEYWORD, wait=True)

    async def _call(self, method: str, /, **kwargs: Any) -> Any:
        """Run one client method: on the worker thread in local mode, awaited on a server."""
        client = self._client
        if client is None:
            await self.open()
            client = self._client
        if isinstance(client, QdrantClient):
            assert self._thread is not None
            return await self._in(self._thread, partial(_local_call, client, method, kwargs))
        assert isinstance(client, AsyncQdrantClient)
        try:
            return await getattr(client, method)(**kwargs)
        except UnexpectedResponse as exc:
            if exc.status_code == 404:
                raise _Missing(kwargs.get("collection_name")) from exc
            if exc.status_code in _RETRYABLE_STATUS:
                raise TransientError(f"Qdrant at {self.url} is unavailable ({method}): {_reason(exc)}") from exc
            raise
        except ResponseHandlingException as exc:  # connection refused, reset or timed out
            raise TransientError(f"cannot reach Qdrant at {self.url} ({method}): {_reason(exc)}") from exc

    @staticmethod
    async def _in(thread: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(thread, fn)


def _open_local(path: str) -> QdrantClient:
    """Runs on the worker thread: opening reads the folder and takes its lock."""
    try:
        return QdrantClient(location=MEMORY) if path == MEMORY else QdrantClient(path=path)
    except RuntimeError as exc:
        if "already accessed" not in str(exc):
            raise
        raise ConfigError(
            f"Qdrant local folder {path} is locked by another process or store: local mode allows one "
            f"at a time. Stop the other one, give each its own path, or share a Qdrant server (url=)") from exc


def _local_call(client: QdrantClient, method: str, kwargs: Mapping[str, Any]) -> Any:
    """Runs on the worker thread; a missing collection becomes _Missing, as a server's 404 does."""
    name = kwargs.get("collection_name")
    if name is not None and method != "create_collection" and not client.collection_exists(name):
        raise _Missing(name)
    return getattr(client, method)(**kwargs)


def _floats(vector: Sequence[float]) -> list[float]:
    tolist = getattr(vector, "tolist", None)  # numpy arrays convert much faster this way
    return tolist() if tolist is not None else [float(x) for x in vector]


def _point(item: VectorItem) -> PointStruct:
    if ID_KEY in item.payload:
        raise ConfigError(f"payload key {ID_KEY!r} is reserved for the vector id (item {item.id!r})")
    return PointStruct(id=point_id(item.id), vector=_floats(item.vector), payload={**item.payload, ID_KEY: item.id})


def _size_mismatch(ref: CollectionRef, kind: VectorKind, have: int, got: int, what: str) -> str:
    return (f"vector size mismatch in {ref} ({kind} vectors): the collection holds {have}-dimensional "
            f"vectors, the {what} has {got}. A new embedding model needs drop() of the collection first")


def _reason(exc: Exception) -> str:
    if isinstance(exc, ResponseHandlingException):
        return f"{type(exc.source).__name__}: {exc.source}" if str(exc.source) else type(exc.source).__name__
    return str(exc).splitlines()[0]
