"""Triples store services: pattern queries, read-only SPARQL, and removal of a document's triples."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from tracegraph.schemas.base import Message, ServiceResponse
from tracegraph.schemas.fields import Identifier, Name, QueryText
from tracegraph.schemas.rdf import IriTerm, Term, TripleList


MAX_AROUND_NODES = 1000
MAX_AROUND_TRIPLES = 1_000_000


class TriplesQueryRequest(Message):
    """Upstream's shape: any of s/p/o unbound; `g` absent = default graph, "*" = all graphs.

    Our addition, `around`: a hop's neighbourhood in one request — the triples whose subject or
    object is one of these IRIs, at most `limit` per node and direction (s/p/o stay unset). A
    graph walk then costs one round trip per hop instead of two per node."""

    schema_name: ClassVar[str] = "triples-query-request"

    s: Term | None = None
    p: IriTerm | None = None
    o: Term | None = None
    g: str | None = None
    limit: int = Field(10_000, ge=1, le=1_000_000)
    user: Name = "default"
    collection: Name = "default"
    around: list[Annotated[str, Field(min_length=1)]] = Field([], max_length=MAX_AROUND_NODES)

    @model_validator(mode="after")
    def _one_kind_of_query(self) -> "TriplesQueryRequest":
        if self.around and (self.s is not None or self.p is not None or self.o is not None):
            raise ValueError("a query gives either a pattern (s, p, o) or `around` nodes, not both")
        if len(self.around) * 2 * self.limit > MAX_AROUND_TRIPLES:
            raise ValueError(f"`around` {len(self.around)} nodes × 2 directions × limit {self.limit} exceeds "
                             f"{MAX_AROUND_TRIPLES:,} triples: ask with fewer nodes or a lower limit")
        return self


class TriplesQueryResponse(ServiceResponse):
    """On the wire the matches are under `response`, as upstream clients read them."""

    schema_name: ClassVar[str] = "triples-query-response"
    final_field: ClassVar[str] = "is_final"

    triples: TripleList = Field([], alias="response")
    is_final: bool = False


class SparqlQueryRequest(Message):
    schema_name: ClassVar[str] = "sparql-query-request"

    query: QueryText
    limit: int = Field(10_000, ge=1, le=1_000_000)
    user: Name = "default"
    collection: Name = "default"
    timeout: float | None = Field(None, gt=0, le=300)  # seconds; None: the processor's default (30)


class SparqlBinding(Message):
    values: dict[str, Term]


class SparqlQueryResponse(ServiceResponse):
    """SELECT → variables + bindings; ASK → boolean; CONSTRUCT/DESCRIBE → triples."""

    schema_name: ClassVar[str] = "sparql-query-response"
    final_field: ClassVar[str] = "is_final"

    kind: Literal["bindings", "boolean", "triples"] | None = None
    variables: list[str] = []
    bindings: list[dict[str, Term]] = []
    boolean: bool | None = None
    triples: TripleList = []
    truncated: bool = False
    is_final: bool = False


class DocumentRemovalRequest(Message):
    """Remove what a document contributed: its provenance and the facts no other document supports."""

    schema_name: ClassVar[str] = "document-removal-request"

    document: Identifier
    user: Name = "default"
    collection: Name = "default"


class DocumentRemovalResponse(ServiceResponse):
    schema_name: ClassVar[str] = "document-removal-response"
    final_field: ClassVar[str] = "is_final"

    removed: int = 0
    chunks: list[str] = []
    orphaned_entities: list[str] = []  # entities nothing else mentions any more
    already_removed: bool = False  # the document had been removed before: this was a sweep for leftovers
    is_final: bool = False


# Graphs a processor derives from the collection and rewrites as it changes; the writer edits only these.
DERIVED_GRAPHS = ("urn:graph:community", "urn:graph:raptor")
MAX_EDIT_TRIPLES = 200_000


class GraphEditRequest(Message):
    """Rewrite part of a derived graph in one confirmed step: every triple of `drop_subjects` (or of
    the whole graph, with `drop_all`) goes, then `add` is stored. The community and RAPTOR processors
    ask for it and acknowledge their input only once it answered, so a kill loses nothing."""

    schema_name: ClassVar[str] = "graph-edit-request"

    graph: Literal["urn:graph:community", "urn:graph:raptor"]
    drop_subjects: list[Annotated[str, Field(min_length=1)]] = Field([], max_length=MAX_EDIT_TRIPLES)
    drop_all: bool = False
    add: TripleList = Field([], max_length=MAX_EDIT_TRIPLES)
    user: Name = "default"
    collection: Name = "default"

    @model_validator(mode="after")
    def _only_this_graph(self) -> "GraphEditRequest":
        stray = next((t for t in self.add if t.g != self.graph), None)
        if stray is not None:
            raise ValueError(f"every added triple must be in {self.graph}, not {stray.g or 'the default graph'}")
        return self


class GraphEditResponse(ServiceResponse):
    schema_name: ClassVar[str] = "graph-edit-response"

    removed: int = 0
    added: int = 0
    end_of_stream: bool = False
