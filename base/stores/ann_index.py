"""One space's HNSW index (usearch): a cache of its SQLite rows, saved to a file and caught up on load.

The index holds the rows' integer keys. Loading compares the saved file's keys with the live keys
in SQLite: keys no longer there are removed, newer rows are added. So a file saved at any moment
(or none at all, after kill -9 before the first save) still yields exactly the committed rows.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np
from usearch.index import Index

from tracegraph.base.stores import ann_rows

log = logging.getLogger(__name__)

CONNECTIVITY = 16  # graph edges per node (HNSW "M")
EXPANSION_ADD = 128  # candidate list while inserting ("ef_construction")
# Candidate list while searching ("ef"). bench/vector_index.py: recall@10 1.000 at 150k clustered
# vectors, 0.94-0.97 at 1M. At 1M, ef 256 gave 0.981 for p50 0.98 ms instead of 0.57 ms.
EXPANSION_SEARCH = 128
_ADD_BATCH = 2_048  # vectors added per hold of the lock, so searches interleave with a large upsert


class SpaceIndex:
    """The usearch index of one (user, collection, kind); every call on it holds `lock`.

    usearch's Python binding must not be searched and changed at once, nor searched from two
    threads at once (both share its per-thread search contexts), hence one lock per index.
    Below `exact_below` live vectors a search scans them all (exact, and still fast).
    """

    def __init__(self, space: ann_rows.Space, file: Path, exact_below: int) -> None:
        self.space = space
        self.file = file
        self.exact_below = exact_below
        self.lock = threading.Lock()
        self.unsaved = 0  # changes since the file was written
        self.index = _new(space.dim)

    @classmethod
    def load(cls, db: sqlite3.Connection, space: ann_rows.Space, file: Path, exact_below: int) -> SpaceIndex:
        """Read the saved index (if any, and sound) and bring it up to the committed rows."""
        started = time.monotonic()
        self = cls(space, file, exact_below)
        saved = _restore(file, space.dim)
        if saved is not None:
            self.index = saved
        live = ann_rows.keys(db, space.space)
        held = np.sort(np.asarray(self.index.keys, dtype=np.uint64))
        gone = np.setdiff1d(held, live, assume_unique=True)
        missing = np.setdiff1d(live, held, assume_unique=True)
        if len(gone):
            self.index.remove(gone)
        if len(missing):
            for keys, vectors in ann_rows.vectors_from(db, space.space, int(missing[0]), space.dim):
                wanted = np.isin(keys, missing, assume_unique=True)
                if wanted.any():
                    self.index.add(keys[wanted], vectors[wanted])
        self.unsaved = len(gone) + len(missing)
        if time.monotonic() - started > 1.0:
            log.info("vector index %s loaded in %.1f s: %s, %d removed, %d added from SQLite", file.name,
                     time.monotonic() - started, "saved file" if saved is not None else "no usable file", len(gone), len(missing))
        return self

    def __len__(self) -> int:
        return len(self.index)

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        for start in range(0, len(keys), _ADD_BATCH):
            with self.lock:
                self.index.add(keys[start:start + _ADD_BATCH], vectors[start:start + _ADD_BATCH])
        self.unsaved += len(keys)

    def remove(self, keys: np.ndarray) -> None:
        if len(keys):
            with self.lock:
                self.index.remove(keys)
            self.unsaved += len(keys)

    def search(self, query: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """(keys, cosine similarities) of the nearest `limit`, nearest first."""
        with self.lock:
            found = self.index.search(query, limit, exact=len(self.index) < self.exact_below, threads=1)
        return np.asarray(found.keys, dtype=np.uint64), 1.0 - np.asarray(found.distances, dtype=np.float64)

    def save(self) -> None:
        """Write the index to a temporary file, fsync it and rename it over the old one."""
        partial = self.file.with_suffix(".partial")
        with self.lock:
            self.index.save(os.fspath(partial))
        with open(partial, "rb+") as written:
            os.fsync(written.fileno())
        os.replace(partial, self.file)
        self.unsaved = 0


def _new(dim: int) -> Index:
    return Index(ndim=dim, metric="cos", dtype="f32", connectivity=CONNECTIVITY,
                 expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)


def _restore(file: Path, dim: int) -> Index | None:
    """The saved index, or None when there is none or it cannot be used (then it is rebuilt from SQLite)."""
    if not file.exists():
        return None
    try:
        index = Index.restore(os.fspath(file))
    except (ValueError, RuntimeError) as exc:
        log.warning("vector index %s is unreadable (%s): rebuilding it from SQLite", file, exc)
        return None
    if index is None or index.ndim != dim or index.dtype != _new(1).dtype:
        log.warning("vector index %s does not match its collection: rebuilding it from SQLite", file)
        return None
    index.expansion_add = EXPANSION_ADD
    index.expansion_search = EXPANSION_SEARCH
    return index
