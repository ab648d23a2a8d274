"""Durable key/value config in SQLite: (type, key) -> value, with one version number for the whole."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from tracegraph.base.stores.sqlite import SqliteDatabase

_SCHEMA = """
CREATE TABLE IF NOT EXISTS config (type TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                                   PRIMARY KEY (type, key));
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('version', 0);
"""
_VERSION = "SELECT value FROM meta WHERE name='version'"


class ConfigStore:
    """Each write is one transaction that also bumps the version, so pushes are totally ordered."""

    def __init__(self, path: Path) -> None:
        self.db = SqliteDatabase(path, _SCHEMA)

    async def open(self) -> "ConfigStore":
        await self.db.open()
        return self

    async def close(self) -> None:
        await self.db.close()

    async def version(self) -> int:
        return (await self.db.fetchone(_VERSION))[0]

    async def get(self, type: str, key: str) -> str | None:
        row = await self.db.fetchone("SELECT value FROM config WHERE type=? AND key=?", type, key)
        return row[0] if row else None

    async def items(self, type: str) -> dict[str, str]:
        return dict(await self.db.fetchall("SELECT key, value FROM config WHERE type=? ORDER BY key", type))

    async def snapshot(self) -> tuple[int, dict[str, dict[str, str]]]:
        """The version and every value, read in one transaction."""
        def read(db: sqlite3.Connection) -> tuple[int, dict[str, dict[str, str]]]:
            config: dict[str, dict[str, str]] = {}
            for type_, key, value in db.execute("SELECT type, key, value FROM config ORDER BY type, key"):
                config.setdefault(type_, {})[key] = value
            return db.execute(_VERSION).fetchone()[0], config
        return await self.db.transaction(read)

    async def write(self, put: Iterable[tuple[str, str, str]] = (),
                    delete: Iterable[tuple[str, str]] = ()) -> int:
        """Apply puts and deletes atomically; returns the new version."""
        put, delete = list(put), list(delete)

        def apply(db: sqlite3.Connection) -> int:
            db.executemany("INSERT OR REPLACE INTO config VALUES (?, ?, ?)", put)
            db.executemany("DELETE FROM config WHERE type=? AND key=?", delete)
            db.execute("UPDATE meta SET value = value + 1 WHERE name='version'")
            return db.execute(_VERSION).fetchone()[0]
        return await self.db.transaction(apply)
