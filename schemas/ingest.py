"""Messages that flow through ingest: document → pages → chunks → triples and vectors."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from tracegraph.schemas.base import Message
from tracegraph.schemas.fields import Name
from tracegraph.schemas.rdf import TripleList


class Metadata(Message):
    """Who a message belongs to and what it derives from: `id` of the item, `root` document."""

    id: str
    root: str
    user: Name = "default"
    collection: Name = "default"
    time: str = ""  # the root document's library time, stamped on provenance activities
    date: str = ""  # the root document's own date (its metadata, or a dating line in its text): valid-from


class DocumentLoad(Message):
    """A library document to process: the chunker reads its content from the librarian."""

    schema_name: ClassVar[str] = "document-load"

    metadata: Metadata
    kind: str  # MIME type: text/plain, text/markdown, application/pdf
    title: str = ""
    path: str = ""  # the document's path relative to the folder it was loaded from ("" when loaded alone)


BlockKind = Literal["heading", "paragraph", "item", "row", "field", "code"]


class TextBlock(Message):
    """One unit of a document as its author wrote it: a heading, paragraph, list item, table row, `Key: value`
    field or fenced code. `first`/`last` are 1-based lines (inclusive) of its document (of its page, for a
    PDF); `headings` the trail of headings above it, outermost first; `outline` the texts of the list items
    it is nested in. A row has its `cells` and its table's `header`; a field its `key` (its value is `text`);
    code its `info` word ("mermaid"). `breaks` are the offsets in `text` where its later lines start."""

    kind: BlockKind
    text: str
    first: int = Field(ge=1)
    last: int = Field(ge=1)
    headings: tuple[str, ...] = ()
    level: int = 0  # a heading's level; a list item's depth (1 for a top-level item)
    outline: tuple[str, ...] = ()
    cells: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    key: str = ""
    info: str = ""
    ordered: bool = False
    codes: tuple[str, ...] = ()  # its code spans, as written between backticks
    links: tuple[tuple[str, str], ...] = ()  # (text, target) of its links
    breaks: tuple[int, ...] = ()
    # A paragraph longer than a chunk is sent with every chunk it runs into, each reading the sentences that
    # start in its own part of `text` (start, end); None: all of it.
    part: tuple[int, int] | None = None

    def reads(self, offset: int) -> bool:
        """Whether the sentence starting at `offset` of `text` is this chunk's to read."""
        return self.part is None or self.part[0] <= offset < self.part[1]

    def line_at(self, offset: int) -> int:
        """The line of the character at `offset` of `text`."""
        return self.first + sum(1 for b in self.breaks if b <= offset)


class DocumentContext(Message):
    """What a chunk's blocks need from their whole document: its subject (the entity it is about, "" if
    none), the names its structure declares (headings with a kind word, a table's subject column, diagram
    nodes, code spans), and the words it capitalises inside sentences."""

    subject: str = ""
    names: tuple[str, ...] = ()
    capitalised: tuple[str, ...] = ()


class TextChunk(Message):
    """One chunk of a document with its text inline (small: at most the chunk size), and, from the chunker,
    the blocks that start in it (`line` is the chunk's first line) with their document's context."""

    schema_name: ClassVar[str] = "chunk"

    metadata: Metadata  # metadata.id is the chunk URI
    text: str
    document: str
    index: int = Field(ge=1)
    title: str = ""  # the document's title: what its text is about (the offline extractor's subject)
    kind: str = ""  # the document's kind (MIME type); empty from senders that predate it
    line: int = Field(1, ge=1)
    blocks: tuple[TextBlock, ...] = ()
    context: DocumentContext | None = None


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
    valid_from: dict[str, str] = {}  # fact_key -> the date its text says it holds from (else the document's)


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
