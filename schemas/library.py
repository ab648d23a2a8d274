"""Librarian service messages, in upstream TrustGraph's shapes (kebab-case keys)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from tracegraph.schemas.base import Message, ServiceResponse

LibrarianOperation = Literal[
    "add-document", "get-document-metadata", "get-document-content", "list-documents",
    "remove-document", "add-processing", "list-processing", "remove-processing",
]


class DocumentMetadata(Message):
    id: str = ""  # the librarian mints urn:trustgraph:doc:<sha256 of the content> when empty
    time: str = ""
    kind: str = "text/plain"
    title: str = ""
    comments: str = ""
    author: str = ""
    source: str = Field("", alias="source-url")
    tags: list[str] = []
    user: str = "default"
    collection: str = "default"
    document_type: str = Field("source", alias="document-type")  # "source" or "answer"
    size: int = 0


class ProcessingMetadata(Message):
    id: str = ""  # the librarian mints "<document>/processing/<flow>" when empty
    document_id: str = Field(alias="document-id")
    time: str = ""
    flow: str = "default"
    user: str = "default"
    collection: str = "default"
    tags: list[str] = []


class LibrarianRequest(Message):
    schema_name: ClassVar[str] = "librarian-request"

    operation: LibrarianOperation
    document_id: str | None = Field(None, alias="document-id")
    processing_id: str | None = Field(None, alias="processing-id")
    document_metadata: DocumentMetadata | None = Field(None, alias="document-metadata")
    processing_metadata: ProcessingMetadata | None = Field(None, alias="processing-metadata")
    content: str | None = None  # base64
    user: str = "default"
    collection: str | None = None


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
    removed: RemovalCounts | None = None
    is_final: bool = False
    final_field: ClassVar[str] = "is_final"
