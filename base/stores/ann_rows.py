"""The source of truth of the ANN vector store: every vector and payload as a SQLite row.

The HNSW index (`ann_index.py`) is only a cache of these rows. Each row gets a fresh integer key,
never reused (AUTOINCREMENT), so a key names one version of one id; re-upserting an id retires its
old key. All functions here are synchronous and take a connection: the store calls them on its
worker threads, writes under its write lock.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tracegraph.base.errors import ConfigError

SCHEMA = """
CREATE TABLE IF NOT EXISTS spaces (
    space INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL, collection TEXT NOT NULL, kind TEXT NOT NULL, dim INTEGER NOT NULL,
    UNIQUE (user, collection, kind));
CREATE TABLE IF NOT EXISTS items (
    key INTEGER PRIMARY KEY AUTOINCREMENT,
    space INTEGER NOT NULL, id TEXT NOT NULL, vector BLOB NOT NULL, payload TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS items_by_id ON items (space, id);
CREATE INDEX IF NOT EXISTS items_by_document ON items (space, json_extract(payload, '$.document'));
"""
# delete_where on this key uses the expression index above; any other key scans the space's rows.
INDEXED_KEY = "document"
_CHUNK = 500  # ids per IN (...) list, well under SQLite's bound on variables
_SCAN = 50_000  # rows per batch when streaming vectors into an index


@dataclass(frozen=True, slots=True)
class Space:
    """One (user, collection, kind): its row id in `spaces` and its vector size."""

    space: int
    dim: int


def connect(path: Path) -> sqlite3.Connection:
    """A WAL-mode connection in autocommit; commits survive the process being killed (synchronous=NORMAL)."""
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30.0)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


def create(db: sqlite3.Connection) -> None:
    db.executescript(SCHEMA)


def find_space(db: sqlite3.Connection, user: str, collection: str, kind: str) -> Space | None:
    row = db.execute("SELECT space, dim FROM spaces WHERE user = ? AND collection = ? AND kind = ?",
                     (user, collection, kind)).fetchone()
    return None if row is None else Space(*row)


def add_space(db: sqlite3.Connection, user: str, collection: str, kind: str, dim: int) -> Space:
    (space,) = db.execute("INSERT INTO spaces (user, collection, kind, dim) VALUES (?, ?, ?, ?) RETURNING space",
                          (user, collection, kind, dim)).fetchone()
    return Space(space, dim)


def space_ids(db: sqlite3.Connection) -> set[int]:
    return {space for (space,) in db.execute("SELECT space FROM spaces")}


def write(db: sqlite3.Connection, space: int, ids: Sequence[str], vectors: np.ndarray,
          payloads: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Store these rows (ids unique); returns (keys retired from earlier versions, new keys). Call in a transaction."""
    retired = _keys_of(db, space, ids)
    db.executemany("DELETE FROM items WHERE key = ?", ((int(k),) for k in retired))
    (last,) = db.execute("SELECT coalesce(max(key), 0) FROM items").fetchone()
    (used,) = db.execute("SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'items'").fetchone()
    first = max(last, used) + 1  # never a key used before, even by a deleted row
    keys = np.arange(first, first + len(ids), dtype=np.uint64)
    db.executemany("INSERT INTO items (key, space, id, vector, payload) VALUES (?, ?, ?, ?, ?)",
                   ((int(key), space, id, vector.tobytes(), json.dumps(payload, ensure_ascii=False))
                    for key, id, vector, payload in zip(keys, ids, vectors, payloads)))
    return retired, keys


def delete_ids(db: sqlite3.Connection, space: int, ids: Sequence[str]) -> np.ndarray:
    """Delete the rows of these ids; returns their keys. Call in a transaction."""
    keys = _keys_of(db, space, ids)
    db.executemany("DELETE FROM items WHERE key = ?", ((int(k),) for k in keys))
    return keys


def delete_where(db: sqlite3.Connection, space: int, key: str, value: str) -> np.ndarray:
    """Delete the rows whose payload[key] == value ("a.b" is key b inside a); returns their keys."""
    if key == INDEXED_KEY:
        found = db.execute("DELETE FROM items WHERE space = ? AND json_extract(payload, '$.document') = ? "
                           "RETURNING key", (space, value))
    else:
        found = db.execute("DELETE FROM items WHERE space = ? AND json_extract(payload, ?) = ? RETURNING key",
                           (space, json_path(key), value))
    return np.array([k for (k,) in found], dtype=np.uint64)


def drop_space(db: sqlite3.Connection, space: int) -> None:
    db.execute("DELETE FROM items WHERE space = ?", (space,))
    db.execute("DELETE FROM spaces WHERE space = ?", (space,))


def keys(db: sqlite3.Connection, space: int) -> np.ndarray:
    """Every live key of a space, ascending."""
    return np.fromiter((k for (k,) in db.execute("SELECT key FROM items WHERE space = ? ORDER BY key", (space,))),
                       dtype=np.uint64)


def vectors_from(db: sqlite3.Connection, space: int, first_key: int, dim: int
                 ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(keys, vectors) of the rows with key >= first_key, in batches: catching an index up streams these."""
    rows = db.execute("SELECT key, vector FROM items WHERE space = ? AND key >= ? ORDER BY key", (space, first_key))
    while batch := rows.fetchmany(_SCAN):
        found = np.array([k for k, _ in batch], dtype=np.uint64)
        matrix = np.frombuffer(b"".join(v for _, v in batch), dtype=np.float32).reshape(len(batch), dim)
        yield found, matrix


def rows_of_keys(db: sqlite3.Connection, keys: Sequence[int]) -> dict[int, tuple[str, dict[str, Any]]]:
    """key -> (id, payload) of the rows that still exist."""
    found: dict[int, tuple[str, dict[str, Any]]] = {}
    for start in range(0, len(keys), _CHUNK):
        part = [int(k) for k in keys[start:start + _CHUNK]]
        marks = ",".join("?" * len(part))
        for key, id, payload in db.execute(f"SELECT key, id, payload FROM items WHERE key IN ({marks})", part):
            found[key] = (id, json.loads(payload))
    return found


def payloads_of_ids(db: sqlite3.Connection, space: int, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids), _CHUNK):
        part = list(ids[start:start + _CHUNK])
        marks = ",".join("?" * len(part))
        for id, payload in db.execute(f"SELECT id, payload FROM items WHERE space = ? AND id IN ({marks})",
                                      (space, *part)):
            found[id] = json.loads(payload)
    return found


def vectors_of_ids(db: sqlite3.Connection, space: int, ids: Sequence[str]) -> dict[str, list[float]]:
    """The stored vectors of these ids (as written, float32 rows), for readers that would otherwise embed again."""
    found: dict[str, list[float]] = {}
    for start in range(0, len(ids), _CHUNK):
        part = list(ids[start:start + _CHUNK])
        marks = ",".join("?" * len(part))
        for id, vector in db.execute(f"SELECT id, vector FROM items WHERE space = ? AND id IN ({marks})",
                                     (space, *part)):
            found[id] = np.frombuffer(vector, dtype=np.float32).tolist()
    return found


def json_path(key: str) -> str:
    """A payload key as a SQLite JSON path: "a.b" is key b inside the object under a, as in Qdrant."""
    parts = key.split(".")
    if not key or any(not part or '"' in part for part in parts):
        raise ConfigError(f"payload key {key!r}: use non-empty names without '\"', joined by '.'")
    return "$" + "".join(f'."{part}"' for part in parts)


def _keys_of(db: sqlite3.Connection, space: int, ids: Sequence[str]) -> np.ndarray:
    found: list[int] = []
    for start in range(0, len(ids), _CHUNK):
        part = list(ids[start:start + _CHUNK])
        marks = ",".join("?" * len(part))
        found.extend(k for (k,) in db.execute(f"SELECT key FROM items WHERE space = ? AND id IN ({marks})",
                                               (space, *part)))
    return np.array(found, dtype=np.uint64)
