"""Embedding and vector search services."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from tracegraph.schemas.base import Message, ServiceResponse
from tracegraph.schemas.fields import Name, Question


class EmbeddingsRequest(Message):
    schema_name: ClassVar[str] = "embeddings-request"

    texts: list[str] = Field(max_length=1024)


class EmbeddingsResponse(ServiceResponse):
    schema_name: ClassVar[str] = "embeddings-response"

    vectors: list[list[float]] = []
    model: str | None = None
    end_of_stream: bool = False


MAX_VECTOR_IDS = 1000  # ids one vector query may look up


class VectorQueryRequest(Message):
    """Nearest entities (graph embeddings) or chunks (document embeddings) to a vector; or, with
    `ids`, those items themselves (score 0), e.g. the text of passages a graph walk reached."""

    schema_name: ClassVar[str] = "vector-query-request"

    vector: list[float] = []
    ids: list[str] = Field([], max_length=MAX_VECTOR_IDS)
    limit: int = Field(10, ge=1, le=1000)
    user: Name = "default"
    collection: Name = "default"
    with_vectors: bool = False  # with `ids`: send the stored vectors too, so a reader need not embed again


class VectorMatch(Message):
    id: str
    score: float
    text: str | None = None  # chunk text, for document embeddings
    document: str | None = None
    vector: list[float] | None = None  # only when the query asked `with_vectors`


class VectorQueryResponse(ServiceResponse):
    schema_name: ClassVar[str] = "vector-query-response"

    matches: list[VectorMatch] = []
    end_of_stream: bool = False


class VectorRemovalRequest(Message):
    """Delete vectors by id, or every chunk vector of a document."""

    schema_name: ClassVar[str] = "vector-removal-request"

    ids: list[str] = []
    document: str | None = None
    user: Name = "default"
    collection: Name = "default"


class VectorRemovalResponse(ServiceResponse):
    schema_name: ClassVar[str] = "vector-removal-response"

    removed: int = 0
    end_of_stream: bool = False


class PassageKeywordRequest(Message):
    """BM25 over a collection's passages (each with its document's title), beside their vectors."""

    schema_name: ClassVar[str] = "passage-keyword-request"

    query: Question
    limit: int = Field(20, ge=1, le=1000)
    user: Name = "default"
    collection: Name = "default"


class PassageKeywordResponse(ServiceResponse):
    schema_name: ClassVar[str] = "passage-keyword-response"

    matches: list[VectorMatch] = []  # id, BM25 score, document
    end_of_stream: bool = False
