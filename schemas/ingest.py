"""Messages that flow through ingest: document → pages → chunks → triples and vectors."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from tracegraph.schemas.base import Message
from tracegraph.schemas.rdf import TripleList


class Metadata(Message):
    """Who a message belongs to and what it derives from: `id` of the item, `root` document."""

    id: str
    root: str
    user: str = "default"
    collection: str = "default"
    time: str = ""  # the root document's library time, stamped on provenance activities
    date: str = ""  # the root document's own date (its metadata, or a dating line in its text): valid-from


class DocumentLoad(Message):
    """A library document to process: the chunker reads its content from the librarian."""

    schema_name: ClassVar[str] = "document-load"

    metadata: Metadata
    kind: str  # MIME type: text/plain, text/markdown, application/pdf
    title: str = ""


class TextChunk(Message):
    """One chunk of a document with its text inline (small: at most the chunk size)."""

    schema_name: ClassVar[str] = "chunk"

    metadata: Metadata  # metadata.id is the chunk URI
    text: str
    document: str
    index: int = Field(ge=1)
    title: str = ""  # the document's title: what its text is about (the offline extractor's subject)
    kind: str = ""  # the document's kind (MIME type); empty from senders that predate it


class Triples(Message):
    """A small set of quads (provenance, explain events): typed, validated triples.

    From extraction, two additions: `confidence` per fact (keyed by `fact_key`), and `review`, the
    facts whose confidence fell below the flow's threshold: they go to the review queue, not the graph."""

    schema_name: ClassVar[str] = "triples"

    metadata: Metadata
    triples: TripleList
    confidence: dict[str, float] = {}
    review: TripleList = []
    reasons: dict[str, str] = {}  # fact_key -> why its confidence is low (for the reviewer)


class TriplesBatch(Message):
    """Bulk quads as N-Quads text, parsed by the store engine (faster than one model per triple)."""

    schema_name: ClassVar[str] = "triples-batch"

    metadata: Metadata
    nquads: str
    count: int = 0


class EntityContext(Message):
    entity: str
    label: str
    context: str = ""
    chunk: str = ""


class EntityContexts(Message):
    """Entities found in a chunk, with text to embed them by."""

    schema_name: ClassVar[str] = "entity-contexts"

    metadata: Metadata
    entities: list[EntityContext]
