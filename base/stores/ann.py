"""Embedded vector store with approximate nearest-neighbour search: the default when no Qdrant server is set.

SQLite keeps every vector and payload (the truth); a usearch HNSW index per (user, collection, kind),
a cache of those rows, answers top-k in under a millisecond at 150k vectors, where Qdrant's local
mode scans them all. Why usearch (bench/vector_index.py): hnswlib built and searched faster here
but has had no release since 2023 and installs from source (a C++ compiler on every machine);
faiss's HNSW index cannot remove vectors. usearch is actively released, ships wheels, removes by
key and saves and loads a file; all three find the true top 10 (recall@10 1.000 at 150k).
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from tracegraph.base.errors import ConfigError
from tracegraph.base.stores import ann_rows
from tracegraph.base.stores.ann_index import SpaceIndex
from tracegraph.base.stores.sqlite import rollback
from tracegraph.base.stores.protocol import CollectionRef, OpenedOnEnter, latest_of_batch, VectorHit, VectorItem, VectorKind

T = TypeVar("T")
log = logging.getLogger(__name__)

KINDS: tuple[VectorKind, ...] = ("entity", "chunk")
RESERVED_KEY = "_tg_id"  # refused as in the Qdrant engine, so a payload is valid on every engine
DATABASE = "vectors.sqlite3"
LOCK = "LOCK"
INDEXES = "index"


class AnnVectorStore(OpenedOnEnter):
    """Entity and chunk vectors in a local folder, searched through HNSW; implements the VectorStore Protocol.

    Files: `vectors.sqlite3` (WAL) holds every vector and payload, the truth; `index/<n>.usearch`
    is a saved HNSW index per (user, collection, kind), a cache. Scores are cosine similarities.

    Durability: `upsert`, `delete` and `delete_where` commit to SQLite before they return, so a
    process killed with SIGKILL afterwards loses nothing. A power loss may lose the last commits
    (synchronous=NORMAL), never corrupt them. An index is saved on `aclose()` and once its unsaved
    changes reach `save_every` (or a twentieth of its size, if larger); on first use after a restart the
    saved file is loaded and caught up from SQLite (removed keys dropped, newer rows added), so
    recovery costs the unsaved changes, or a full rebuild when there is no file.

    One process per folder: opening takes an exclusive lock on `LOCK`, and a second store (in this
    process or another) gets a ConfigError. Share vectors between processes through a Qdrant server.

    Blocking work runs on the store's own threads, never on the event loop. Searches run while
    writes commit; index changes and searches of one collection take turns on its lock. Below
    `exact_below` vectors a collection is searched exhaustively (exact, and still fast).
    """

    def __init__(self, path: str | os.PathLike[str], *, exact_below: int = 4_096, save_every: int = 10_000,
                 threads: int = 4) -> None:
        self.path = Path(path)
        self.exact_below = exact_below
        self.save_every = save_every
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="ann-vectors")
        self._open_lock = asyncio.Lock()
        # One writer at a time: its SQLite transaction, then the index change. Loading an index
        # holds it too, so that no commit lands between reading the rows and using the index.
        self._write_lock = threading.RLock()
        self._spaces: dict[int, SpaceIndex] = {}
        self._readers = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._db: sqlite3.Connection | None = None  # the writer's connection
        self._lock_file: int | None = None
        self._closed = False

    async def open(self) -> AnnVectorStore:
        """Lock the folder and open SQLite; later calls do nothing. Indexes load on first use."""
        async with self._open_lock:
            if self._closed:
                raise ConfigError(f"this AnnVectorStore ({self.path}) is closed")
            if self._db is None:
                await asyncio.get_running_loop().run_in_executor(self._pool, self._open)
        return self

    def _open(self) -> None:
        if (self.path / "meta.json").exists() and not (self.path / DATABASE).exists():
            raise ConfigError(f"vector folder {self.path} holds Qdrant local-mode data, which this engine does not "
                              f"read: set TG_VECTOR_ENGINE=qdrant-local to keep using it, or move it away and "
                              f"ingest again")
        (self.path / INDEXES).mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ConfigError(f"vector folder {self.path} is locked by another process or store: one at a time. "
                              f"Stop the other one, give each its own folder, or share a Qdrant server "
                              f"(TG_QDRANT_URL)") from None
        try:
            db = self._connect()
            ann_rows.create(db)
            known = ann_rows.space_ids(db)
        except BaseException:
            os.close(fd)
            raise
        self._lock_file = fd
        for file in (self.path / INDEXES).iterdir():  # of dropped collections, or half-written, left by a crash
            if file.suffix != ".usearch" or not file.stem.isdigit() or int(file.stem) not in known:
                file.unlink()
        self._db = db

    async def aclose(self) -> None:
        """Save the indexes with unsaved changes, close SQLite and release the folder; idempotent."""
        async with self._open_lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._db is not None:
                    await self._run(self._close)
            finally:
                self._pool.shutdown(wait=False)

    def _close(self) -> None:
        with self._write_lock:
            try:
                for index in list(self._spaces.values()):
                    if index.unsaved:
                        index.save()
            finally:
                self._spaces.clear()
                for db in self._connections:
                    db.close()
                self._connections.clear()
                self._db = None
                if self._lock_file is not None:
                    os.close(self._lock_file)  # releases the flock
                    self._lock_file = None

    async def upsert(self, ref: CollectionRef, kind: VectorKind, items: Sequence[VectorItem]) -> None:
        """Insert or overwrite by id; the first batch fixes the collection's vector size."""
        _check_kind(kind)
        if not items:
            return
        latest, size = latest_of_batch(ref, kind, items)
        for item in latest.values():
            if RESERVED_KEY in item.payload:
                raise ConfigError(f"payload key {RESERVED_KEY!r} is reserved for the vector id (item {item.id!r})")
        matrix = _unit_rows(np.array([np.asarray(item.vector, dtype=np.float32) for item in latest.values()]))
        if not np.isfinite(matrix).all():
            raise ConfigError(f"a vector in a batch for {ref} ({kind}) is not finite (NaN or infinity)")
        ids = list(latest)
        payloads = [dict(item.payload) for item in latest.values()]
        await self._write(lambda db: self._upsert(db, ref, kind, ids, matrix, payloads))

    def _upsert(self, db: sqlite3.Connection, ref: CollectionRef, kind: VectorKind, ids: list[str],
                matrix: np.ndarray, payloads: list[dict[str, Any]]) -> Callable[[], None]:
        space = ann_rows.find_space(db, ref.user, ref.collection, kind)
        if space is None:
            space = ann_rows.add_space(db, ref.user, ref.collection, kind, matrix.shape[1])
        elif space.dim != matrix.shape[1]:
            raise ConfigError(_size_mismatch(ref, kind, space.dim, matrix.shape[1], "batch"))
        retired, keys = ann_rows.write(db, space.space, ids, matrix, payloads)

        return lambda: self._apply(space, retired, keys, matrix)

    async def search(self, ref: CollectionRef, kind: VectorKind, vector: Sequence[float],
                     limit: int = 10) -> list[VectorHit]:
        """Nearest first by cosine similarity (score in [-1, 1]); an unknown collection gives []."""
        _check_kind(kind)
        query = _unit_rows(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]
        return await self._run(self._search, ref, kind, query, limit)

    def _search(self, ref: CollectionRef, kind: VectorKind, query: np.ndarray, limit: int) -> list[VectorHit]:
        db = self._reader()
        space = ann_rows.find_space(db, ref.user, ref.collection, kind)
        if space is None or limit < 1:
            return []
        if len(query) != space.dim:
            raise ConfigError(_size_mismatch(ref, kind, space.dim, len(query), "query vector"))
        keys, scores = self._index(space).search(query, limit)
        rows = ann_rows.rows_of_keys(db, keys)  # a key deleted since the search has no row: left out
        return [VectorHit(id=rows[k][0], score=float(score), payload=rows[k][1])
                for k, score in zip(keys.tolist(), scores.tolist()) if k in rows]

    async def get(self, ref: CollectionRef, kind: VectorKind, ids: Sequence[str],
                  with_vectors: bool = False) -> list[VectorHit]:
        """The stored items of these ids (payload, the vector if asked, score 0), in the order asked;
        unknown ids are left out."""
        _check_kind(kind)
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []

        def get() -> list[VectorHit]:
            db = self._reader()
            space = ann_rows.find_space(db, ref.user, ref.collection, kind)
            if space is None:
                return []
            payloads = ann_rows.payloads_of_ids(db, space.space, wanted)
            vectors = ann_rows.vectors_of_ids(db, space.space, wanted) if with_vectors else {}
            return [VectorHit(id=i, score=0.0, payload=payloads[i], vector=vectors.get(i))
                    for i in wanted if i in payloads]
        return await self._run(get)

    async def delete(self, ref: CollectionRef, kind: VectorKind, ids: Sequence[str]) -> int:
        """Delete these ids; returns how many existed."""
        _check_kind(kind)
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return 0
        return await self._remove(ref, kind, lambda db, space: ann_rows.delete_ids(db, space, wanted))

    async def delete_where(self, ref: CollectionRef, kind: VectorKind, key: str, value: str) -> int:
        """Delete every vector whose payload[key] == value ("a.b": key b inside a); returns how many matched."""
        _check_kind(kind)
        ann_rows.json_path(key)  # a bad key fails here, before any work
        return await self._remove(ref, kind, lambda db, space: ann_rows.delete_where(db, space, key, value))

    async def _remove(self, ref: CollectionRef, kind: VectorKind,
                      rows: Callable[[sqlite3.Connection, int], np.ndarray]) -> int:
        removed = 0

        def remove(db: sqlite3.Connection) -> Callable[[], None]:
            nonlocal removed
            space = ann_rows.find_space(db, ref.user, ref.collection, kind)
            if space is None:
                return lambda: None
            keys = rows(db, space.space)
            removed = len(keys)
            return lambda: self._apply(space, keys)
        await self._write(remove)
        return removed

    async def drop(self, ref: CollectionRef) -> None:
        """Delete this user's collection: its entity and chunk vectors; nothing if it does not exist."""
        def drop(db: sqlite3.Connection) -> Callable[[], None]:
            spaces = [s for kind in KINDS if (s := ann_rows.find_space(db, ref.user, ref.collection, kind))]
            for space in spaces:
                ann_rows.drop_space(db, space.space)

            def apply() -> None:
                for space in spaces:
                    self._spaces.pop(space.space, None)
                    self._file(space.space).unlink(missing_ok=True)
            return apply
        await self._write(drop)

    async def _write(self, change: Callable[[sqlite3.Connection], Callable[[], None]]) -> None:
        """Run `change` in one SQLite transaction, then (after the commit) the index update it returns."""
        def write() -> None:
            with self._write_lock:
                db = self._writer()
                db.execute("BEGIN IMMEDIATE")
                try:
                    apply = change(db)
                    db.execute("COMMIT")
                except BaseException:
                    rollback(db)  # a COMMIT that met a full disk must not leave the writer in its transaction
                    raise
                apply()
        await self._run(write)

    def _apply(self, space: ann_rows.Space, retired: np.ndarray, added: np.ndarray | None = None,
               vectors: np.ndarray | None = None) -> None:
        """After a commit, under the write lock: change the loaded index, or load it (then it has the commit).

        The commit stands whatever happens here: an index that fails to change or save is dropped
        from memory, and caught up from SQLite again on its next use.
        """
        try:
            index = self._spaces.get(space.space)
            if index is None:
                index = self._index(space)
            else:
                if added is not None and vectors is not None:  # new keys first: a search never misses a replaced id
                    index.add(added, vectors)
                index.remove(retired)
            self._maybe_save(index)
        except Exception:
            log.exception("vector index of space %d failed to change or save: it will be reloaded from SQLite",
                          space.space)
            self._spaces.pop(space.space, None)

    def _index(self, space: ann_rows.Space) -> SpaceIndex:
        """The loaded index of a space, loading (and catching up) its saved file on first use."""
        index = self._spaces.get(space.space)
        if index is None:
            with self._write_lock:
                index = self._spaces.get(space.space)
                if index is None:
                    index = SpaceIndex.load(self._writer(), space, self._file(space.space), self.exact_below)
                    self._spaces[space.space] = index
        return index

    def _maybe_save(self, index: SpaceIndex) -> None:
        if index.unsaved >= max(self.save_every, len(index) // 20):
            index.save()

    def _file(self, space: int) -> Path:
        return self.path / INDEXES / f"{space}.usearch"

    def _writer(self) -> sqlite3.Connection:
        if self._db is None:
            raise ConfigError(f"this AnnVectorStore ({self.path}) is closed")
        return self._db

    def _reader(self) -> sqlite3.Connection:
        """This worker thread's own connection: WAL lets readers run beside the writer."""
        self._writer()
        db = getattr(self._readers, "db", None)
        if db is None:
            db = self._readers.db = self._connect()
        return db

    def _connect(self) -> sqlite3.Connection:
        db = ann_rows.connect(self.path / DATABASE)
        self._connections.append(db)
        return db

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        """fn(*args) on the store's threads, opening the store first if needed."""
        if self._db is None:
            await self.open()
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ConfigError(f"unknown vector kind {kind!r}: use one of {', '.join(KINDS)}")


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero), so that a dot product is the cosine."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.where(norms == 0, 1.0, norms), dtype=np.float32)


def _size_mismatch(ref: CollectionRef, kind: VectorKind, have: int, got: int, what: str) -> str:
    return (f"vector size mismatch in {ref} ({kind} vectors): the collection holds {have}-dimensional "
            f"vectors, the {what} has {got}. A new embedding model needs drop() of the collection first")

