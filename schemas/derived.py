"""The community and RAPTOR processors' service: rebuild a collection's structure from scratch, or
report what it holds. Both keep their structure current from graph updates on their own; a rebuild
is for a changed setting, a new LLM, or a structure someone wants recomputed."""

from __future__ import annotations

from typing import ClassVar, Literal

from tracegraph.schemas.base import Message, ServiceResponse
from tracegraph.schemas.fields import Name


class DerivedRequest(Message):
    schema_name: ClassVar[str] = "derived-request"

    operation: Literal["rebuild", "status"] = "status"
    user: Name = "default"
    collection: Name = "default"


class DerivedResponse(ServiceResponse):
    """Progress lines while a rebuild runs (`progress`), then the final state: counts by kind
    (`communities-level-0`, `reports`, `tree-nodes`…), how the last run went, and its method."""

    schema_name: ClassVar[str] = "derived-response"

    progress: str | None = None
    counts: dict[str, int] = {}
    mode: str | None = None  # full, incremental, or none yet
    method: str | None = None  # how summaries were written: LLM (model) or offline
    duration_ms: int | None = None
    updated: str | None = None  # when the structure last changed (xsd:dateTime)
    coverage: dict[str, int] = {}  # `passages-covered`, `passages-total`… (entities for communities)
    state: str | None = None  # current, behind (a gap to repair), or repairing
    end_of_stream: bool = False
