"""Librarian service messages, in upstream TrustGraph's shapes (kebab-case keys)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from tracegraph.schemas.base import Message, ServiceResponse
from tracegraph.schemas.fields import Identifier, Name

LibrarianOperation = Literal[
    "add-document", "get-document-metadata", "get-document-content", "list-documents",
    "remove-document", "add-processing", "list-processing", "remove-processing",
]


class DocumentMetadata(Message):
    id: Identifier = ""  # the librarian mints urn:trustgraph:doc:<sha256 of the content (and path)> when empty
    time: str = ""
    kind: str = Field("text/plain", max_length=255)  # a MIME type
    title: str = ""
    path: str = ""  # where the document lives, relative to the folder it was loaded from: its identity in listings
    comments: str = ""
    author: str = ""
    date: str = ""  # the document's own date (YYYY-MM-DD or ISO 8601): when its facts start to hold
    source: str = Field("", alias="source-url")
    tags: list[str] = []
    user: Name = "default"
    collection: Name = "default"
    document_type: str = Field("source", alias="document-type")  # "source" or "answer"
    size: int = 0


class ProcessingMetadata(Message):
    id: Identifier = ""  # the librarian mints "<document>/processing/<flow>" when empty
    document_id: Identifier = Field(alias="document-id")
    time: str = ""
    flow: Name = "default"
    user: Name = "default"
    collection: Name = "default"
    tags: list[str] = []


class LibrarianRequest(Message):
    schema_name: ClassVar[str] = "librarian-request"

    operation: LibrarianOperation
    document_id: Identifier | None = Field(None, alias="document-id")
    processing_id: Identifier | None = Field(None, alias="processing-id")
    document_metadata: DocumentMetadata | None = Field(None, alias="document-metadata")
    processing_metadata: ProcessingMetadata | None = Field(None, alias="processing-metadata")
    content: str | None = None  # base64
    user: Name = "default"
    collection: Name | None = None


class RemovalCounts(Message):
    """What removing a document deleted, store by store."""

    chunks: int = 0
    vectors: int = 0
    triples: int = 0
    flows: list[str] = []


class LibrarianResponse(ServiceResponse):
    schema_name: ClassVar[str] = "librarian-response"

    document_metadata: DocumentMetadata | None = Field(None, alias="document-metadata")
    content: str | None = None
    document_metadatas: list[DocumentMetadata] | None = Field(None, alias="document-metadatas")
    processing_metadatas: list[ProcessingMetadata] | None = Field(None, alias="processing-metadatas")
    removed: RemovalCounts | None = None  # remove-document; add-document when it replaced older documents
    replaced: list[Identifier] | None = None  # add-document: the older documents at the same path it replaced
    # remove-document: the document had been removed before; `removed` counts what this sweep found left over
    already_removed: bool | None = Field(None, alias="already-removed")
    is_final: bool = False
    final_field: ClassVar[str] = "is_final"
