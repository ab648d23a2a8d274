"""The architecture questions (RSN-08, RSN-09, RSN-10): who owns an entity (graph edges merged with
CODEOWNERS), what it depends on or what depends on it, the institutional memory about it (decisions,
failure patterns, exceptions to policy, memories), and whether a change matches its work item."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from tracegraph.schemas.base import Message, ServiceResponse
from tracegraph.schemas.dates import parse_instant
from tracegraph.schemas.fields import Name

MAX_ENTITY_CHARS = 500
MAX_INTENT_CHARS = 200_000  # a change summary or diff, a work item's description
DEPTHS = (1, 2, 3)


class ArchitectureRequest(Message):
    """One of four operations about one entity (named by its label, like "Skyline", or its IRI)."""

    schema_name: ClassVar[str] = "architecture-request"

    operation: Literal["ownership", "dependencies", "memory", "intent-check"]
    entity: str = Field("", max_length=MAX_ENTITY_CHARS)
    depth: int = Field(1, ge=1, le=3)  # dependencies: how many edges away
    direction: Literal["out", "in"] = "out"  # dependencies: what it depends on (out) or what depends on it (in)
    predicates: list[str] = Field([], max_length=100)  # dependencies: verbs to follow instead of the configured
    max_edges: int = Field(200, alias="max-edges", ge=1, le=10_000)  # dependencies: most edges in the tree
    query: str = Field("", max_length=2000)  # memory: what to rank by besides the entity (a question)
    limit: int = Field(20, ge=1, le=1000)
    change: str = Field("", max_length=MAX_INTENT_CHARS)  # intent-check: the change summary or diff text
    work_item: str = Field("", alias="work-item", max_length=MAX_INTENT_CHARS)  # intent-check: its description
    threshold: float | None = Field(None, ge=-1.0, le=1.0)  # intent-check: flagged below (default 0.6)
    # ownership, dependencies, memory: the answer as the graph held at this valid time (any form
    # parse_instant takes; canonical UTC text after validation); None: now.
    as_of: str | None = Field(None, alias="as-of")
    user: Name = "default"
    collection: Name = "default"

    @field_validator("as_of")
    @classmethod
    def _as_of(cls, value: str | None) -> str | None:
        return None if value in (None, "") else parse_instant(value, "as-of")

    @model_validator(mode="after")
    def _needs(self) -> "ArchitectureRequest":
        if self.operation == "intent-check":
            missing = [name for name, value in (("change", self.change), ("work-item", self.work_item))
                       if not value.strip()]
            if missing:
                raise ValueError(f"intent-check needs {' and '.join(missing)} (text)")
        elif not self.entity.strip():
            raise ValueError(f"{self.operation} needs an entity (a name like 'Skyline' or an IRI)")
        return self


class Source(Message):
    """Where a claim comes from: the document (IRI and title), and the line, author and date where known."""

    document: str
    title: str = ""
    line: int | None = None
    last_line: int | None = None  # a claim read from several lines: the last of them (the first is `line`)
    author: str = ""
    date: str = ""  # YYYY-MM-DD: the document's own date (its --date, a dating line, an ADR's Date), or the item's
    added: str = ""  # YYYY-MM-DD: the day the document was added to the collection, where the history records it
    kind: str = ""  # "graph" (an extracted fact) or "codeowners" (a CODEOWNERS rule)
    # A statement a later one replaced (the history's supersession): where the later one is, dated from the
    # day it holds, which is the day this one stopped holding.
    superseded_by: Source | None = Field(None, alias="superseded-by")


class Owner(Message):
    """A team or person owning the entity: how (the edge's predicate or the CODEOWNERS rule) and from where."""

    entity: str  # IRI
    label: str
    kind: Literal["team", "person", "unknown"] = "unknown"
    handles: list[str] = []  # contact handles: @org/team, @user, e-mail
    relations: list[str] = []  # "is owned by", "leads", "CODEOWNERS"
    origins: list[Literal["graph", "codeowners"]] = []
    sources: list[Source] = []
    standing: Literal["current", "earlier"] = "current"  # earlier: replaced, or named only by the older side
    since: str = ""  # YYYY-MM-DD: the earliest own date of the sources naming it so
    until: str = ""  # YYYY-MM-DD: for an earlier owner, the day a later statement replaced it, where known


class CodeOwnersMatch(Message):
    """The CODEOWNERS rule that decides a path of the entity (the last matching line wins)."""

    path: str  # the entity's code path the rule was matched against
    path_origin: str = Field("", alias="path-origin")  # "graph" (a fact) or "name" (a directory named like it)
    pattern: str
    owners: list[str] = []  # handles as written
    source: Source


class OwnershipResponse(Message):
    owners: list[Owner] = []
    codeowners: list[CodeOwnersMatch] = []
    discrepancy: str = ""  # set when the graph and CODEOWNERS name different owners
    agreement: Literal["agree", "disagree", "graph-only", "codeowners-only", "none"] = "none"
    # On a disagreement, whose sources are newer ("unknown": the dates cannot tell); "" otherwise.
    newer: Literal["graph", "codeowners", "same", "unknown", ""] = ""


class DependencyEdge(Message):
    """One edge of the tree: `source` → `target` in the asked direction's terms (out: source depends on
    target; in: target depends on source), as the fact states it."""

    source: str
    target: str
    source_label: str = Field("", alias="source-label")
    target_label: str = Field("", alias="target-label")
    predicate: str
    predicate_label: str = Field("", alias="predicate-label")
    depth: int
    weight: float  # the fact's extraction confidence (best of its statements); 1.0 when none was recorded
    sources: list[Source] = []


class DependencyNode(Message):
    entity: str
    label: str
    depth: int
    children: list["DependencyNode"] = []
    cycle: bool = False  # the entity is already on the path from the root: not expanded again


class DependencyResponse(Message):
    root: DependencyNode | None = None
    edges: list[DependencyEdge] = []
    cycles: list[list[str]] = []  # each a path of labels that returns to its start
    predicates: list[str] = []  # the verbs followed
    truncated: bool = False  # more edges than max-edges (nearest levels kept), or a level over MAX_EDGES_PER_LEVEL


class Reason(Message):
    """One part of why a memory is as it is (a decision's context, a driver, an option it weighed; a
    failure's root cause), as its document says it, and the lines it says it on where they are known."""

    part: Literal["context", "driver", "option", "consequence", "root-cause", "impact", "action-item", "policy"]
    text: str
    line: int | None = None
    last_line: int | None = Field(None, alias="last-line")
    chosen: bool = False  # an option: the one the decision took


class MemoryItem(Message):
    """A decision, failure pattern, exception to policy or memory about the entity, with why it ranks where it does."""

    node: str  # IRI
    kind: Literal["decision", "failure-pattern", "exception", "memory"]
    title: str
    text: str = ""
    why: str = ""  # a decision's rationale (its Context), a failure's root cause, an exception's policy
    reasons: list[Reason] = []  # the why part by part, with lines: context, drivers, options (the chosen one marked), …
    status: str = ""
    relation: str = ""  # how it touches the entity: why, caused-by, affected, excepts, concerns
    score: float = 0.0
    relevance: float = 0.0
    recency: float = 0.0
    source: Source


class MemoryResponse(Message):
    items: list[MemoryItem] = []
    ranking: str = ""  # how the items were ranked


class SentenceMatch(Message):
    side: Literal["change", "work-item"]
    sentence: str
    nearest: str  # the other side's nearest sentence
    similarity: float


class IntentResponse(Message):
    similarity: float
    threshold: float
    mismatch: bool
    advisory: str = ""
    explanation: list[SentenceMatch] = []
    model: str = ""


class ArchitectureResponse(ServiceResponse):
    schema_name: ClassVar[str] = "architecture-response"

    operation: str = ""
    entity: str = ""  # the IRI the name resolved to
    label: str = ""
    ownership: OwnershipResponse | None = None
    dependencies: DependencyResponse | None = None
    memory: MemoryResponse | None = None
    intent: IntentResponse | None = None
    as_of: str | None = Field(None, alias="as-of")  # the valid time the answer stands at; None: now
    notes: list[str] = []  # what the answer could not do as asked (an as-of without history to read it from)
    end_of_stream: bool = False
