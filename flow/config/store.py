"""Durable key/value config in SQLite: (type, key) -> value, with one version number for the whole."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterable
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS config (type TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                                   PRIMARY KEY (type, key));
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('version', 0);
"""


class ConfigStore:
    """One SQLite file; each write is one transaction that also bumps the version.

    sqlite3 blocks, so every call runs in a worker thread, one at a time.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._lock = asyncio.Lock()

    async def open(self) -> "ConfigStore":
        def connect() -> sqlite3.Connection:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            return db
        self._db = await asyncio.to_thread(connect)
        return self

    async def close(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            await asyncio.to_thread(db.close)

    async def _run(self, fn, *args):
        if self._db is None:
            raise RuntimeError("config store is not open")
        async with self._lock:
            return await asyncio.to_thread(fn, self._db, *args)

    async def version(self) -> int:
        return await self._run(lambda db: db.execute("SELECT value FROM meta WHERE name='version'").fetchone()[0])

    async def get(self, type: str, key: str) -> str | None:
        row = await self._run(lambda db: db.execute(
            "SELECT value FROM config WHERE type=? AND key=?", (type, key)).fetchone())
        return row[0] if row else None

    async def items(self, type: str) -> dict[str, str]:
        rows = await self._run(lambda db: db.execute(
            "SELECT key, value FROM config WHERE type=? ORDER BY key", (type,)).fetchall())
        return dict(rows)

    async def snapshot(self) -> tuple[int, dict[str, dict[str, str]]]:
        """The version and every value, read in one transaction."""
        def read(db: sqlite3.Connection) -> tuple[int, dict[str, dict[str, str]]]:
            db.execute("BEGIN")
            try:
                version = db.execute("SELECT value FROM meta WHERE name='version'").fetchone()[0]
                config: dict[str, dict[str, str]] = {}
                for type_, key, value in db.execute("SELECT type, key, value FROM config ORDER BY type, key"):
                    config.setdefault(type_, {})[key] = value
                return version, config
            finally:
                db.execute("COMMIT")
        return await self._run(read)

    async def write(self, put: Iterable[tuple[str, str, str]] = (),
                    delete: Iterable[tuple[str, str]] = ()) -> int:
        """Apply puts and deletes atomically; returns the new version."""
        put, delete = list(put), list(delete)

        def apply(db: sqlite3.Connection) -> int:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany("INSERT OR REPLACE INTO config VALUES (?, ?, ?)", put)
                db.executemany("DELETE FROM config WHERE type=? AND key=?", delete)
                db.execute("UPDATE meta SET value = value + 1 WHERE name='version'")
                version = db.execute("SELECT value FROM meta WHERE name='version'").fetchone()[0]
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return version
        return await self._run(apply)
