"""What every store engine offers; processors see only these Protocols, never an engine's library."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tracegraph.base.errors import ConfigError
from tracegraph.schemas.rdf import IriTerm, Term, Triple

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

# Named graphs, as upstream uses them: core facts in the default graph (None), extraction
# provenance and query-time explanations in their own graphs.
DEFAULT_GRAPH: None = None
SOURCE_GRAPH = "urn:graph:source"
RETRIEVAL_GRAPH = "urn:graph:retrieval"
COMMUNITY_GRAPH = "urn:graph:community"  # communities and their reports (flow/community)
RAPTOR_GRAPH = "urn:graph:raptor"  # the RAPTOR summary tree (flow/raptor)
HISTORY_GRAPH = "urn:graph:history"  # one record per (fact, document): when it was learned, held, ended
HISTORY_FACTS_GRAPH = "urn:graph:history-facts"  # every fact that ever held, to walk as it stood
REVIEW_GRAPH = "urn:graph:review"  # extracted facts held back for a reviewer
ALL_GRAPHS = "*"


@dataclass(frozen=True, slots=True)
class CollectionRef:
    """A user's collection: the unit of tenancy every store partitions by."""

    user: str
    collection: str

    def __post_init__(self) -> None:
        for what, value in (("user", self.user), ("collection", self.collection)):
            if not _NAME.match(value):
                raise ConfigError(f"invalid {what} name {value!r}: use letters, digits, '.', '_' or '-' (max 64)")

    def __str__(self) -> str:
        return f"{self.user}/{self.collection}"


@dataclass(frozen=True, slots=True)
class SparqlResult:
    """A read-only query's answer: variable bindings (SELECT), a boolean (ASK) or triples (CONSTRUCT/DESCRIBE)."""

    kind: Literal["bindings", "boolean", "triples"]
    variables: Sequence[str] = ()
    rows: Sequence[Mapping[str, Term]] = ()
    boolean: bool | None = None
    triples: Sequence[Triple] = ()
    truncated: bool = False  # more rows existed than the limit allowed


class TripleStore(Protocol):
    """Quads per collection: the default graph (g=None) and named graphs such as urn:graph:source.

    Writes are idempotent (a quad stored twice is stored once). Pattern queries take any of
    s/p/o unbound (None); `g` is None for the default graph, an IRI for one graph, or "*"
    for all. Quoted triples (TripleTerm) are matched like any other term.
    """

    async def add(self, ref: CollectionRef, triples: Iterable[Triple]) -> int:
        """Store quads; returns how many were given (duplicates are harmless)."""
        ...

    async def add_nquads(self, ref: CollectionRef, nquads: str) -> int:
        """Bulk path: N-Quads text (RDF 1.2 triple terms allowed) parsed by the engine; returns quads read."""
        ...

    async def match(self, ref: CollectionRef, s: Term | None = None, p: IriTerm | None = None,
                    o: Term | None = None, g: str | None = DEFAULT_GRAPH, limit: int = 10_000) -> list[Triple]:
        ...

    async def around(self, ref: CollectionRef, nodes: Sequence[str], limit: int = 100,
                     g: str | None = DEFAULT_GRAPH) -> list[Triple]:
        """A hop's neighbourhood in one call: the triples whose subject or object is one of the
        `nodes` (IRIs), at most `limit` per node and direction, each once, in the order of the
        nodes (a node's outgoing triples before its incoming ones)."""
        ...

    async def query(self, ref: CollectionRef, sparql: str, *, limit: int = 10_000,
                    timeout: float = 30.0) -> SparqlResult:
        """Run a read-only SPARQL query; an update, bad syntax or a timeout raises QueryError."""
        ...

    async def remove(self, ref: CollectionRef, triples: Iterable[Triple]) -> int:
        """Delete these quads; returns how many existed."""
        ...

    async def count(self, ref: CollectionRef, g: str | None = ALL_GRAPHS) -> int:
        ...

    async def collections(self, user: str) -> list[str]:
        ...

    async def drop(self, ref: CollectionRef) -> None:
        """Delete the whole collection."""
        ...

    async def aclose(self) -> None:
        ...


@dataclass(frozen=True, slots=True)
class VectorItem:
    """One vector with its id (an IRI: entity or chunk) and a small JSON-able payload."""

    id: str
    vector: Sequence[float]
    payload: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class VectorHit:
    id: str
    score: float
    payload: Mapping[str, Any]
    vector: Sequence[float] | None = None  # only from `get(..., with_vectors=True)`


VectorKind = Literal["entity", "chunk"]


class VectorStore(Protocol):
    """Entity vectors (graph embeddings) and chunk vectors (document embeddings) per collection."""

    async def upsert(self, ref: CollectionRef, kind: VectorKind, items: Sequence[VectorItem]) -> None:
        ...

    async def search(self, ref: CollectionRef, kind: VectorKind, vector: Sequence[float],
                     limit: int = 10) -> list[VectorHit]:
        """Nearest first, by cosine similarity; an unknown collection gives []."""
        ...

    async def get(self, ref: CollectionRef, kind: VectorKind, ids: Sequence[str],
                  with_vectors: bool = False) -> list[VectorHit]:
        """The stored items of these ids (payload, and the vector if asked; score 0), in the order asked;
        unknown ids left out."""
        ...

    async def delete(self, ref: CollectionRef, kind: VectorKind, ids: Sequence[str]) -> int:
        ...

    async def delete_where(self, ref: CollectionRef, kind: VectorKind, key: str, value: str) -> int:
        """Delete every vector whose payload[key] == value (e.g. all chunks of a document)."""
        ...

    async def drop(self, ref: CollectionRef) -> None:
        ...

    async def aclose(self) -> None:
        ...


def latest_of_batch(ref: CollectionRef, kind: VectorKind, items: Sequence[VectorItem]) -> tuple[dict[str, VectorItem], int]:
    """An upsert batch checked as every engine checks it: the last item of each id (the last write
    wins within a batch as across batches) and the batch's one vector size."""
    latest = {item.id: item for item in items}
    sizes = sorted({len(item.vector) for item in latest.values()})
    if len(sizes) > 1:
        raise ConfigError(f"one batch for {ref} ({kind}) mixes vector sizes {sizes}: embed with one model")
    if sizes[0] == 0:
        raise ConfigError(f"empty vector in a batch for {ref} ({kind})")
    return latest, sizes[0]


class OpenedOnEnter:
    """`async with store:` opens the store (`open()`) and closes it after (`aclose()`)."""

    async def __aenter__(self):
        return await self.open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class BlobStore(Protocol):
    """Document bytes by key, per collection; filesystem by default, S3-compatible later."""

    async def put(self, ref: CollectionRef, key: str, data: bytes) -> None:
        ...

    async def get(self, ref: CollectionRef, key: str) -> bytes:
        """Raises KeyError when absent."""
        ...

    async def delete(self, ref: CollectionRef, key: str) -> bool:
        ...

    async def aclose(self) -> None:
        ...
