"""The library's records: document and processing metadata in SQLite, document bytes in a blob store."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from tracegraph.base.errors import ConfigError
from tracegraph.base.stores.files import FileBlobStore
from tracegraph.base.stores.protocol import CollectionRef
from tracegraph.base.stores.sqlite import SqliteDatabase
from tracegraph.schemas.fields import shown
from tracegraph.schemas.library import DocumentMetadata, ProcessingMetadata

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (user TEXT NOT NULL, id TEXT NOT NULL, collection TEXT NOT NULL,
    type TEXT NOT NULL, metadata TEXT NOT NULL, PRIMARY KEY (user, id));
CREATE TABLE IF NOT EXISTS processing (user TEXT NOT NULL, id TEXT NOT NULL, document TEXT NOT NULL,
    metadata TEXT NOT NULL, PRIMARY KEY (user, id));
CREATE INDEX IF NOT EXISTS processing_by_document ON processing (user, document);
CREATE TABLE IF NOT EXISTS removed (user TEXT NOT NULL, id TEXT NOT NULL, time TEXT NOT NULL,
    flows TEXT NOT NULL, metadata TEXT NOT NULL, PRIMARY KEY (user, id));
CREATE INDEX IF NOT EXISTS documents_by_path ON documents (user, collection, json_extract(metadata, '$.path'));
"""


class Library:
    """Per-user records; a user never sees another user's documents, even with the same id."""

    def __init__(self, root: Path) -> None:
        self.db = SqliteDatabase(root / "library.sqlite", _SCHEMA)
        self.blobs = FileBlobStore(root / "blobs")

    async def open(self) -> "Library":
        await self.db.open()
        return self

    async def close(self) -> None:
        await self.db.close()

    async def add(self, meta: DocumentMetadata, content: bytes) -> bool:
        """Store a document; False if the same id is already there (same content: nothing to do)."""
        existing = await self.get(meta.user, meta.id)
        if existing is not None:
            if existing.size == len(content) and await self.content(existing) == content:
                return False
            raise ConfigError(f"document {shown(meta.id)} already exists with other content; remove it first")
        await self.blobs.put(_ref(meta), meta.id, content)
        await self.db.run(lambda db: db.execute(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?)",
            (meta.user, meta.id, meta.collection, meta.document_type, meta.model_dump_json(by_alias=True))))
        await self.db.run(lambda db: db.execute("DELETE FROM removed WHERE user=? AND id=?", (meta.user, meta.id)))
        return True

    async def get(self, user: str, document_id: str) -> DocumentMetadata | None:
        row = await self.db.fetchone("SELECT metadata FROM documents WHERE user=? AND id=?", user, document_id)
        return DocumentMetadata.model_validate_json(row[0]) if row else None

    async def require(self, user: str, document_id: str) -> DocumentMetadata:
        meta = await self.get(user, document_id)
        if meta is None:
            raise ConfigError(f"no document {shown(document_id)} in the library of user {shown(user)}")
        return meta

    async def content(self, meta: DocumentMetadata) -> bytes:
        return await self.blobs.get(_ref(meta), meta.id)

    async def documents(self, user: str, collection: str | None, document_type: str | None = None
                        ) -> list[DocumentMetadata]:
        sql, params = "SELECT metadata FROM documents WHERE user=?", [user]
        if collection:
            sql, params = sql + " AND collection=?", params + [collection]
        if document_type:
            sql, params = sql + " AND type=?", params + [document_type]
        rows = await self.db.fetchall(sql + " ORDER BY id", *params)
        return [DocumentMetadata.model_validate_json(r[0]) for r in rows]

    async def at_path(self, user: str, collection: str, path: str) -> list[DocumentMetadata]:
        """The documents stored at `path` in a collection: one, or for a moment two while one replaces the other."""
        rows = await self.db.fetchall("SELECT metadata FROM documents WHERE user=? AND collection=? AND "
                                      "json_extract(metadata, '$.path')=? ORDER BY id", user, collection, path)
        return [DocumentMetadata.model_validate_json(r[0]) for r in rows]

    async def remove(self, meta: DocumentMetadata) -> None:
        def delete(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM documents WHERE user=? AND id=?", (meta.user, meta.id))
            db.execute("DELETE FROM processing WHERE user=? AND document=?", (meta.user, meta.id))
        await self.db.transaction(delete)
        await self.blobs.delete(_ref(meta), meta.id)

    async def mark_removed(self, meta: DocumentMetadata, flows: list[str], at: str) -> None:
        """The tombstone, kept after the record goes: the flows to sweep again if it is removed again.
        A removal retried after a failure keeps the first time and adds any flow it had not recorded."""
        earlier = await self.removed(meta.user, meta.id)
        if earlier is not None:
            flows, at = list(dict.fromkeys([*earlier.flows, *flows])), earlier.time
        await self.db.run(lambda db: db.execute(
            "INSERT OR REPLACE INTO removed VALUES (?, ?, ?, ?, ?)",
            (meta.user, meta.id, at, json.dumps(flows), meta.model_dump_json(by_alias=True))))

    async def removed(self, user: str, document_id: str) -> "Removed | None":
        row = await self.db.fetchone("SELECT time, flows, metadata FROM removed WHERE user=? AND id=?",
                                     user, document_id)
        return Removed(row[0], json.loads(row[1]), DocumentMetadata.model_validate_json(row[2])) if row else None

    async def add_processing(self, record: ProcessingMetadata) -> None:
        await self.db.run(lambda db: db.execute(
            "INSERT OR REPLACE INTO processing VALUES (?, ?, ?, ?)",
            (record.user, record.id, record.document_id, record.model_dump_json(by_alias=True))))

    async def processing(self, user: str, document_id: str | None = None) -> list[ProcessingMetadata]:
        sql, params = "SELECT metadata FROM processing WHERE user=?", [user]
        if document_id:
            sql, params = sql + " AND document=?", params + [document_id]
        rows = await self.db.fetchall(sql + " ORDER BY id", *params)
        return [ProcessingMetadata.model_validate_json(r[0]) for r in rows]

    async def remove_processing(self, user: str, processing_id: str) -> bool:
        cursor = await self.db.run(lambda db: db.execute(
            "DELETE FROM processing WHERE user=? AND id=?", (user, processing_id)))
        return cursor.rowcount > 0


@dataclass(frozen=True)
class Removed:
    """A removed document's tombstone: when, the flows that had processed it, and its last record."""

    time: str
    flows: list[str]
    meta: DocumentMetadata


def _ref(meta: DocumentMetadata) -> CollectionRef:
    return CollectionRef(meta.user, meta.collection)
