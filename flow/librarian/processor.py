"""The librarian service: documents in and out, processing requests that send a document into a
flow, and removal that asks each flow's stores to forget what the document contributed."""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from tracegraph.base.bus.topic import LIBRARIAN_REQUEST_TOPIC, LIBRARIAN_RESPONSE_TOPIC
from tracegraph.base.errors import ConfigError, RemoteError, RequestTimeout
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

    def fixed_topics(self) -> TopicMap:
        return {"librarian": {"request": str(LIBRARIAN_REQUEST_TOPIC), "response": str(LIBRARIAN_RESPONSE_TOPIC)}}

    async def start(self) -> None:
        await self.library.open()
        self._stack.push_async_callback(self.library.close)
        await super().start()

    @service.handler
    async def answer(self, req: LibrarianRequest, flow: Flow) -> AsyncIterator[LibrarianResponse]:
        handler = getattr(self, "op_" + req.operation.replace("-", "_"))
        yield await handler(req)

    async def op_add_document(self, req: LibrarianRequest) -> LibrarianResponse:
        meta = req.document_metadata
        if meta is None or req.content is None:
            raise ConfigError("add-document needs document-metadata and content (base64)")
        try:
            content = base64.b64decode(req.content, validate=True)
        except (binascii.Error, ValueError):
            raise ConfigError("content is not valid base64") from None
        pages = check(content, meta.kind, self.settings.max_document_bytes)
        meta = meta.model_copy(update={
            "date": _document_date(meta.date),
            "id": meta.id or f"urn:trustgraph:doc:{hashlib.sha256(content).hexdigest()[:32]}",
            "user": req.user, "collection": req.collection or meta.collection,
            "time": meta.time or now(), "size": len(content), "title": meta.title or meta.id})
        added = await self.library.add(meta, content)
        log.info("%s document %s (%d bytes, %d page(s)) for %s/%s", "added" if added else "already had",
                 meta.id, len(content), pages, meta.user, meta.collection)
        return LibrarianResponse(document_metadata=meta)

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
        meta = await self.library.require(req.user, _need_id(req))
        counts = RemovalCounts()
        for record in await self.library.processing(req.user, meta.id):
            counts = await self._forget(record.flow, meta, counts)
        await self.library.remove(meta)
        log.info("removed document %s: %s", meta.id, counts.model_dump())
        return LibrarianResponse(document_metadata=meta, removed=counts)

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
