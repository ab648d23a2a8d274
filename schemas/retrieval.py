"""GraphRAG (and later Document RAG) requests and responses, in upstream TrustGraph's wire shapes."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from tracegraph.schemas.base import Message, ServiceResponse
from tracegraph.schemas.rdf import Triple


class GraphRagRequest(Message):
    """Kebab-case limits as upstream's gateway accepts them; None means the processor's default."""

    schema_name: ClassVar[str] = "graph-rag-request"

    query: str
    user: str = "default"
    collection: str = "default"
    entity_limit: int | None = Field(None, alias="entity-limit", ge=1, le=1000)
    triple_limit: int | None = Field(None, alias="triple-limit", ge=1, le=10_000)
    max_subgraph_size: int | None = Field(None, alias="max-subgraph-size", ge=1, le=100_000)
    max_path_length: int | None = Field(None, alias="max-path-length", ge=1, le=5)
    edge_limit: int | None = Field(None, alias="edge-limit", ge=1, le=500)
    streaming: bool = False
    explain: bool = True  # False: no explain events are sent or stored (the answer is unchanged)
    parent_uri: str | None = Field(None, alias="parent-uri")  # set by agent tools: the Question derives from it


class Source(Message):
    uri: str
    title: str


class GraphRagResponse(ServiceResponse):
    """A `chunk` of answer text or an `explain` event; the last message has `end_of_session`."""

    schema_name: ClassVar[str] = "graph-rag-response"
    final_field: ClassVar[str] = "end_of_session"

    message_type: Literal["chunk", "explain"] = "chunk"
    response: str = ""
    end_of_stream: bool = False
    explain_id: str | None = None
    explain_graph: str | None = None
    explain_triples: list[Triple] = []
    end_of_session: bool = False
    in_token: int | None = None
    out_token: int | None = None
    model: str | None = None
    sources: list[Source] | None = None


class DocumentRagRequest(Message):
    """Upstream's Document RAG request; `doc-limit` is how many chunks ground the answer."""

    schema_name: ClassVar[str] = "document-rag-request"

    query: str
    user: str = "default"
    collection: str = "default"
    doc_limit: int | None = Field(None, alias="doc-limit", ge=1, le=100)
    fetch_limit: int | None = Field(None, alias="fetch-limit", ge=0, le=1000)  # candidates before selection
    streaming: bool = False
    explain: bool = True  # False: no explain events are sent or stored (the answer is unchanged)
    parent_uri: str | None = Field(None, alias="parent-uri")  # set by agent tools: the Question derives from it


class DocumentRagResponse(ServiceResponse):
    """Same framing as GraphRAG: `explain` events, answer `chunk`s, and a last message with
    `end_of_session` (upstream marks it `message_type: end` when streaming)."""

    schema_name: ClassVar[str] = "document-rag-response"
    final_field: ClassVar[str] = "end_of_session"

    message_type: Literal["chunk", "explain", "end"] = "chunk"
    response: str = ""
    end_of_stream: bool = False
    explain_id: str | None = None
    explain_graph: str | None = None
    explain_triples: list[Triple] = []
    end_of_session: bool = False
    in_token: int | None = None
    out_token: int | None = None
    model: str | None = None
    sources: list[Source] | None = None
