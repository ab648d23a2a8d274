"""One SQLite file used from asyncio: every call runs in a worker thread, one at a time."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class SqliteDatabase:
    """WAL-mode SQLite with autocommit; `transaction(fn)` runs fn(db) inside BEGIN IMMEDIATE/COMMIT."""

    def __init__(self, path: Path, schema: str) -> None:
        self.path = path
        self.schema = schema
        self._db: sqlite3.Connection | None = None
        self._lock = asyncio.Lock()

    async def open(self) -> "SqliteDatabase":
        def connect() -> sqlite3.Connection:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(self.schema)
            return db
        self._db = await asyncio.to_thread(connect)
        return self

    async def close(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            await asyncio.to_thread(db.close)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """fn(db, *args) in the worker thread."""
        if self._db is None:
            raise RuntimeError(f"{self.path.name} is not open")
        async with self._lock:
            return await asyncio.to_thread(fn, self._db, *args)

    async def transaction(self, fn: Callable[..., T], *args: Any) -> T:
        """fn(db, *args) atomically: committed if it returns, rolled back if it raises."""
        def atomic(db: sqlite3.Connection) -> T:
            db.execute("BEGIN IMMEDIATE")
            try:
                result = fn(db, *args)
                db.execute("COMMIT")
            except BaseException:
                rollback(db)
                raise
            return result
        return await self.run(atomic)

    async def fetchall(self, sql: str, *params: Any) -> list[tuple]:
        return await self.run(lambda db: db.execute(sql, params).fetchall())

    async def fetchone(self, sql: str, *params: Any) -> tuple | None:
        return await self.run(lambda db: db.execute(sql, params).fetchone())


def rollback(db: sqlite3.Connection) -> None:
    """End a failed transaction. A COMMIT that met a full disk may leave it open (the next BEGIN would
    fail for good) or SQLite may have rolled it back already (a ROLLBACK would raise): both are handled."""
    if db.in_transaction:
        db.execute("ROLLBACK")
