"""The librarian service: documents in and out, processing requests that send a document into a
flow, and removal that asks each flow's stores to forget what the document contributed.

A document's identity is its path (relative to the folder it was loaded from) in its user's collection.
Adding a document at a path another document already holds with other content replaces that one, in
this order: the new version is stored first (its blob, then its row: the row is the commit), then each
older version at the path is removed as `remove-document` removes it (in every flow that processed it,
its facts are retracted, the history keeping them; then its record and bytes). A crash in between leaves
both versions stored, never neither; the next add at that path (loading the file again, which finds the
new version already stored) finishes the replacement, because every add looks for other documents at its
path, not only an add that stored something. (Removing first would lose both versions if the process
died before the new version was written; one transaction for both is not possible, since the
removal is a round of requests to other processors.) Adds at one path take turns, so two concurrent
versions cannot each remove the other. The older version's facts are retracted when the new version is
stored, before it is processed (the caller asks for that next): for that moment the current graph holds
neither, and a fact both versions state is retracted and then stated again, which the history records.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from tracegraph.base.bus.topic import LIBRARIAN_REQUEST_TOPIC, LIBRARIAN_RESPONSE_TOPIC
from tracegraph.base.disk_space import refusal_for_full_disk, require_free_space
from tracegraph.base.errors import ConfigError, DiskFullRefusal, RemoteError, RequestTimeout, is_out_of_space
from tracegraph.base.flow import Flow, TopicMap
from tracegraph.base.interfaces import InterfaceUser
from tracegraph.base.provenance.extraction import document_triples
from tracegraph.base.specs import Service
from tracegraph.base.documents import PDF, TEXT_KINDS, check
from tracegraph.flow.librarian.library import Library
from tracegraph.schemas.dates import now, parse_instant
from tracegraph.schemas.embeddings import VectorRemovalRequest, VectorRemovalResponse
from tracegraph.schemas.fields import MAX_ID_CHARS, shown
from tracegraph.schemas.ingest import DocumentLoad, Metadata, Triples
from tracegraph.schemas.library import (
    DocumentMetadata, LibrarianRequest, LibrarianResponse, RemovalCounts,
)
from tracegraph.schemas.triples import DocumentRemovalRequest, DocumentRemovalResponse

log = logging.getLogger(__name__)


class LibrarianProcessor(InterfaceUser):
    """Serves `librarian` requests (upstream's operations) for every user, on fixed topics."""

    name = "librarian"
    service = Service("librarian", LibrarianRequest, LibrarianResponse, prefetch=8)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.library = Library(self.settings.data_dir / "library")
        self._paths = PathLocks()

    def fixed_topics(self) -> TopicMap:
        return {"librarian": {"request": str(LIBRARIAN_REQUEST_TOPIC), "response": str(LIBRARIAN_RESPONSE_TOPIC)}}

    async def start(self) -> None:
        await self.library.open()
        self._stack.push_async_callback(self.library.close)
        await super().start()

    @service.handler
    async def answer(self, req: LibrarianRequest, flow: Flow) -> AsyncIterator[LibrarianResponse]:
        handler = getattr(self, "op_" + req.operation.replace("-", "_"))
        try:
            answer = await handler(req)
        except Exception as exc:
            if is_out_of_space(exc) and not isinstance(exc, DiskFullRefusal):
                raise refusal_for_full_disk(req.operation) from None
            raise
        yield answer

    async def op_add_document(self, req: LibrarianRequest) -> LibrarianResponse:
        meta = req.document_metadata
        if meta is None or req.content is None:
            raise ConfigError("add-document needs document-metadata and content (base64)")
        try:
            content = base64.b64decode(req.content, validate=True)
        except (binascii.Error, ValueError):
            raise ConfigError("content is not valid base64") from None
        pages = check(content, meta.kind, self.settings.max_document_bytes)
        collection = req.collection or meta.collection
        meta = meta.model_copy(update={
            "date": _document_date(meta.date),
            "id": meta.id or _minted_id(content, collection, meta.path),
            "user": req.user, "collection": collection,
            "time": meta.time or now(), "size": len(content), "title": meta.title or meta.path or meta.id})
        await asyncio.to_thread(require_free_space, self.settings.data_dir / "library", self.settings.min_free_mb,
                                len(content))
        held = self._paths.held((meta.user, meta.collection, meta.path)) if meta.path else contextlib.nullcontext()
        async with held:
            added = await self.library.add(meta, content)
            stored = meta if added else await self.library.require(meta.user, meta.id)
            replaced, counts = await self._replace_older(stored) if stored.path else ([], RemovalCounts())
        log.info("%s document %s (%d bytes, %d page(s)) for %s/%s%s", "added" if added else "already had",
                 meta.id, len(content), pages, meta.user, meta.collection,
                 f", replacing {', '.join(replaced)} at {stored.path}" if replaced else "")
        return LibrarianResponse(document_metadata=stored, replaced=replaced or None,
                                 removed=counts if replaced else None)

    async def _replace_older(self, meta: DocumentMetadata) -> tuple[list[str], RemovalCounts]:
        """Remove every other document at `meta`'s path (see the module's docstring for the order)."""
        replaced, counts = [], RemovalCounts()
        for older in await self.library.at_path(meta.user, meta.collection, meta.path):
            if older.id == meta.id:
                continue
            try:
                counts = await self._remove(older, counts)
            except ConfigError as exc:
                raise ConfigError(f"{exc}; {shown(meta.id)} is stored at {shown(meta.path)} and replaces it: "
                                  "add it again to finish") from exc
            replaced.append(older.id)
        return replaced, counts

    async def op_get_document_metadata(self, req: LibrarianRequest) -> LibrarianResponse:
        return LibrarianResponse(document_metadata=await self.library.require(req.user, _need_id(req)))

    async def op_get_document_content(self, req: LibrarianRequest) -> LibrarianResponse:
        meta = await self.library.require(req.user, _need_id(req))
        content = await self.library.content(meta)
        return LibrarianResponse(document_metadata=meta, content=base64.b64encode(content).decode())

    async def op_list_documents(self, req: LibrarianRequest) -> LibrarianResponse:
        return LibrarianResponse(document_metadatas=await self.library.documents(req.user, req.collection))

    async def op_list_processing(self, req: LibrarianRequest) -> LibrarianResponse:
        return LibrarianResponse(processing_metadatas=await self.library.processing(req.user, req.document_id))

    async def op_remove_processing(self, req: LibrarianRequest) -> LibrarianResponse:
        if not req.processing_id or not await self.library.remove_processing(req.user, req.processing_id):
            raise ConfigError(f"no processing record {shown(req.processing_id or '')}")
        return LibrarianResponse()

    async def op_add_processing(self, req: LibrarianRequest) -> LibrarianResponse:
        record = req.processing_metadata
        if record is None:
            raise ConfigError("add-processing needs processing-metadata (document-id, flow)")
        meta = await self.library.require(req.user, record.document_id)
        if meta.kind not in TEXT_KINDS | {PDF}:
            raise ConfigError(f"document {shown(meta.id)} of kind {shown(meta.kind)} cannot be processed")
        record_id = record.id or f"{meta.id}/processing/{record.flow}"
        if len(record_id) > MAX_ID_CHARS:  # the record could not be read back
            raise ConfigError(f"processing id {shown(record_id)} would be over {MAX_ID_CHARS:,} characters; "
                              "give processing-metadata a shorter id")
        record = record.model_copy(update={
            "id": record_id, "user": req.user,
            "collection": meta.collection, "time": record.time or now()})
        self.topics(record.flow, "document-load")  # fail before recording if the flow is unknown
        await self.library.add_processing(record)
        metadata = Metadata(id=meta.id, root=meta.id, user=meta.user, collection=meta.collection, time=meta.time,
                            date=meta.date)
        description = document_triples(meta.id, title=meta.title or meta.id, mime_type=meta.kind, date=meta.time,
                                       source=meta.source or None, creator=meta.author or None)
        await self.send(record.flow, "triples-store", Triples(metadata=metadata, triples=description))
        await self.send(record.flow, "document-load", DocumentLoad(metadata=metadata, kind=meta.kind,
                                                                   title=meta.title, path=meta.path))
        return LibrarianResponse(processing_metadatas=[record])

    async def op_remove_document(self, req: LibrarianRequest) -> LibrarianResponse:
        meta = await self.library.get(req.user, _need_id(req))
        if meta is None and (tomb := await self.library.removed(req.user, _need_id(req))) is not None:
            counts = await self._sweep(tomb.meta, tomb.flows)
            return LibrarianResponse(document_metadata=tomb.meta, removed=counts, already_removed=True)
        meta = meta or await self.library.require(req.user, _need_id(req))
        counts = await self._remove(meta, RemovalCounts())
        return LibrarianResponse(document_metadata=meta, removed=counts)

    async def _remove(self, meta: DocumentMetadata, counts: RemovalCounts) -> RemovalCounts:
        """Mark the document removed (its tombstone), forget it in every flow that processed it (each flow's
        triples service tombstones it first, refusing late work), then drop its record and bytes."""
        flows = [record.flow for record in await self.library.processing(meta.user, meta.id)]
        await self.library.mark_removed(meta, flows, now())
        for flow_id in flows:
            counts = await self._forget(flow_id, meta, counts)
        await self.library.remove(meta)
        log.info("removed document %s: %s", meta.id, counts.model_dump())
        return counts

    async def _sweep(self, meta: DocumentMetadata, flows: list[str]) -> RemovalCounts:
        """A removed document removed again: what late writers left behind is removed by the same rule."""
        counts = RemovalCounts()
        for flow_id in flows:
            counts = await self._forget(flow_id, meta, counts)
        log.info("document %s was already removed; swept again: %s", meta.id, counts.model_dump())
        return counts

    async def _forget(self, flow_id: str, meta: DocumentMetadata, counts: RemovalCounts) -> RemovalCounts:
        """Ask one flow's stores to drop what the document contributed."""
        try:
            triples = await (await self.client(flow_id, "triples-remove", DocumentRemovalRequest,
                                               DocumentRemovalResponse)).request(
                DocumentRemovalRequest(document=meta.id, user=meta.user, collection=meta.collection))
            chunks = await (await self.client(flow_id, "document-embeddings-remove", VectorRemovalRequest,
                                              VectorRemovalResponse)).request(
                VectorRemovalRequest(document=meta.id, user=meta.user, collection=meta.collection))
            entities = await (await self.client(flow_id, "graph-embeddings-remove", VectorRemovalRequest,
                                                VectorRemovalResponse)).request(
                VectorRemovalRequest(ids=triples.orphaned_entities, user=meta.user, collection=meta.collection))
        except (ConfigError, RemoteError, RequestTimeout) as exc:
            raise ConfigError(f"could not remove {shown(meta.id)} from flow {shown(flow_id)}: {exc}; "
                              "the document is kept so removal can be retried") from exc
        return RemovalCounts(chunks=counts.chunks + len(triples.chunks),
                             vectors=counts.vectors + chunks.removed + entities.removed,
                             triples=counts.triples + triples.removed, flows=[*counts.flows, flow_id])


class PathLocks:
    """One lock per (user, collection, path), so two adds at one path replace one after the other instead
    of each removing the other; a lock lives only while somebody holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[tuple[str, str, str], tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def held(self, key: tuple[str, str, str]) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)


def _minted_id(content: bytes, collection: str, path: str) -> str:
    """The id of a document given without one: from its content, and when it has a path from its
    collection and path too, so identical files at two paths stay two documents (each replaced on its own)."""
    digest = hashlib.sha256(f"{collection}\0{path}\0".encode() + content if path else content)
    return f"urn:trustgraph:doc:{digest.hexdigest()[:32]}"


def _document_date(given: str) -> str:
    """The document's own date as canonical UTC text ("" when none is given); a bad one is refused,
    naming the field, before anything is stored."""
    try:
        return parse_instant(given, "date") if given.strip() else ""
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _need_id(req: LibrarianRequest) -> str:
    if not req.document_id:
        raise ConfigError("request needs document-id")
    return req.document_id
