"""The triples service's history and review operations: the graph as it stood at a date, what changed
between two dates, and the queue of doubtful extractions awaiting a reviewer."""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from tracegraph.schemas.dates import parse_instant
from tracegraph.schemas.base import Message, ServiceResponse
from tracegraph.schemas.fields import Identifier, Name
from tracegraph.schemas.rdf import Term

MAX_TEMPORAL_FACTS = 100_000
_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x20<>\"{}|^`\\]+")


def _instant(value: str | None, field: str) -> str | None:
    return None if value in (None, "") else parse_instant(value, field)


class TemporalRequest(Message):
    """`at`: the graph as it held at a valid time (default: now), as the system knew it at `known`
    (default: now). `diff`: what changed between `from` and `to` on the `axis` — `valid` (when
    facts held in the world) or `recorded` (when the system learned or retracted them)."""

    schema_name: ClassVar[str] = "temporal-request"

    operation: Literal["at", "diff"] = "at"
    at: str | None = None
    known: str | None = None
    from_: str | None = Field(None, alias="from")
    to: str | None = None
    axis: Literal["valid", "recorded"] = "valid"
    subject: str | None = Field(None, max_length=2000)  # only facts about this entity IRI
    limit: int = Field(1000, ge=1, le=MAX_TEMPORAL_FACTS)
    user: Name = "default"
    collection: Name = "default"

    @field_validator("at", "known", "to")
    @classmethod
    def _dates(cls, value: str | None, info) -> str | None:
        return _instant(value, info.field_name)

    @field_validator("from_")
    @classmethod
    def _from(cls, value: str | None) -> str | None:
        return _instant(value, "from")

    @field_validator("subject")
    @classmethod
    def _subject(cls, value: str | None) -> str | None:
        """An absolute IRI with none of the characters an IRI may not hold: it goes into a query."""
        if value in (None, ""):
            return None
        if not _IRI.fullmatch(value):
            raise ValueError(f"subject: {value[:80]!r} is not an IRI (scheme:rest, no spaces, quotes or <>{{}}|^`\\)")
        return value

    @model_validator(mode="after")
    def _window(self) -> "TemporalRequest":
        if self.operation == "diff":
            if not self.from_ or not self.to:
                raise ValueError("a diff needs both `from` and `to`")
            if self.from_ >= self.to:
                raise ValueError(f"from: {self.from_} is not before to ({self.to})")
        return self


class TemporalFact(Message):
    """A fact with its history: the valid interval, when it was recorded and retracted, the documents
    stating it, and what superseded it (document and value)."""

    s: Term
    p: Term
    o: Term
    valid_from: str | None = Field(None, alias="valid-from")
    valid_until: str | None = Field(None, alias="valid-until")
    recorded_at: str | None = Field(None, alias="recorded-at")
    retracted_at: str | None = Field(None, alias="retracted-at")
    sources: list[str] = []  # document IRIs
    superseded_by: str | None = Field(None, alias="superseded-by")  # the document that superseded it
    confidence: float | None = None


class TemporalChange(Message):
    """`added`, `removed`, or `changed` (a single-valued predicate's value replaced: `fact` is the new
    value, `previous` the old one)."""

    change: Literal["added", "removed", "changed"]
    fact: TemporalFact
    previous: TemporalFact | None = None


class TemporalResponse(ServiceResponse):
    schema_name: ClassVar[str] = "temporal-response"

    facts: list[TemporalFact] = []
    changes: list[TemporalChange] = []
    labels: dict[str, str] = {}  # IRI → rdfs:label, for the entities and predicates in the answer
    truncated: bool = False
    at: str | None = None
    known: str | None = None
    from_: str | None = Field(None, alias="from")
    to: str | None = None
    end_of_stream: bool = False


class ReviewRequest(Message):
    """`list` the queue (pending items, or all with `status`), `approve` or `reject` items by id."""

    schema_name: ClassVar[str] = "review-request"

    operation: Literal["list", "approve", "reject"] = "list"
    ids: list[Identifier] = Field([], max_length=1000)
    status: Literal["pending", "approved", "rejected", "all"] = "pending"
    reviewer: Identifier = ""  # set by the gateway from the caller's token
    limit: int = Field(1000, ge=1, le=MAX_TEMPORAL_FACTS)
    user: Name = "default"
    collection: Name = "default"

    @model_validator(mode="after")
    def _ids(self) -> "ReviewRequest":
        if self.operation != "list" and not self.ids:
            raise ValueError(f"ids: {self.operation} needs at least one review item id")
        return self


class ReviewItem(Message):
    id: str
    s: Term
    p: Term
    o: Term
    labels: dict[str, str] = {}  # s/p/o → its label, as the extractor named it
    confidence: float
    reason: str = ""  # why the confidence is low (the checks that failed, the rule's strength)
    document: str = ""
    chunk: str = ""
    extractor: str = ""
    status: Literal["pending", "approved", "rejected"] = "pending"
    queued_at: str | None = Field(None, alias="queued-at")
    reviewed_by: str | None = Field(None, alias="reviewed-by")
    reviewed_at: str | None = Field(None, alias="reviewed-at")


class ReviewResponse(ServiceResponse):
    schema_name: ClassVar[str] = "review-response"

    items: list[ReviewItem] = []
    changed: list[str] = []  # ids approved or rejected by this request
    unknown: list[str] = []  # ids asked for that are not in the queue
    truncated: bool = False
    end_of_stream: bool = False
