"""GraphRAG and Document RAG requests and responses, in upstream TrustGraph's wire shapes."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator

from tracegraph.schemas.base import Message, ServiceResponse
from tracegraph.schemas.dates import parse_instant
from tracegraph.schemas.fields import Name, Question
from tracegraph.schemas.rdf import TripleList


class RagRequest(Message):
    """What a GraphRAG and a Document RAG request share: the question, whose collection, and how to answer."""

    query: Question
    user: Name = "default"
    collection: Name = "default"
    streaming: bool = False
    explain: bool = True  # False: no explain events are sent or stored (the answer is unchanged)
    parent_uri: str | None = Field(None, alias="parent-uri")  # set by agent tools: the Question derives from it
    # The graph as it held at this valid time (any form parse_instant takes; canonical UTC text after
    # validation); None: now. Evidence weighs less with age: it counts half at `half-life-days`.
    as_of: str | None = Field(None, alias="as-of")
    half_life_days: float | None = Field(None, alias="half-life-days", gt=0, le=1_000_000)

    @field_validator("as_of")
    @classmethod
    def _as_of(cls, value: str | None) -> str | None:
        return None if value in (None, "") else parse_instant(value, "as-of")


class GraphRagRequest(RagRequest):
    """Kebab-case limits as upstream's gateway accepts them; None means the processor's default."""

    schema_name: ClassVar[str] = "graph-rag-request"

    entity_limit: int | None = Field(None, alias="entity-limit", ge=1, le=1000)
    triple_limit: int | None = Field(None, alias="triple-limit", ge=1, le=10_000)
    max_subgraph_size: int | None = Field(None, alias="max-subgraph-size", ge=1, le=100_000)
    max_path_length: int | None = Field(None, alias="max-path-length", ge=1, le=5)
    edge_limit: int | None = Field(None, alias="edge-limit", ge=1, le=500)


class DocumentRagRequest(RagRequest):
    """Upstream's Document RAG request; `doc-limit` is how many chunks ground the answer."""

    schema_name: ClassVar[str] = "document-rag-request"

    doc_limit: int | None = Field(None, alias="doc-limit", ge=1, le=100)
    fetch_limit: int | None = Field(None, alias="fetch-limit", ge=0, le=1000)  # candidates before selection


class Source(Message):
    uri: str
    title: str


class RagResponse(ServiceResponse):
    """Answer text, or an explain event; the last message of a request has `end_of_session`."""

    final_field: ClassVar[str] = "end_of_session"

    response: str = ""
    end_of_stream: bool = False
    explain_id: str | None = None
    explain_graph: str | None = None
    explain_triples: TripleList = []
    end_of_session: bool = False
    in_token: int | None = None
    out_token: int | None = None
    model: str | None = None
    sources: list[Source] | None = None


class GraphRagResponse(RagResponse):
    """A `chunk` of answer text or an `explain` event."""

    schema_name: ClassVar[str] = "graph-rag-response"

    message_type: Literal["chunk", "explain"] = "chunk"


class DocumentRagResponse(RagResponse):
    """Same framing as GraphRAG; upstream marks the last message of a stream `message_type: end`."""

    schema_name: ClassVar[str] = "document-rag-response"

    message_type: Literal["chunk", "explain", "end"] = "chunk"
