"""What a processor declares: the consumers, producers, services, clients and parameters a flow binds.

Specs are class attributes; a running flow turns each into a typed handle, so a misspelt
spec is an AttributeError at import time, not a None at run time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from tracegraph.base.priority import INTERACTIVE, Priority
from tracegraph.schemas.base import Message, ServiceResponse

M = TypeVar("M", bound=Message)
Q = TypeVar("Q", bound=Message)
R = TypeVar("R", bound=ServiceResponse)
T = TypeVar("T")

ConsumeHandler = Callable[[Any, Any, Any], Awaitable[None]]
ServiceHandler = Callable[[Any, Any, Any], AsyncIterator[Any]]


@dataclass(eq=False)
class Spec:
    """A named binding point; the flow blueprint maps `name` to a topic (or a pair of topics)."""

    name: str


@dataclass(eq=False)
class Consumer(Spec, Generic[M]):
    """Messages of `schema` arriving on a topic, handled by `async def f(self, message, flow)`.

    `parsed=False` hands the handler a `codec.Encoded[M]` instead: schema name and version checked,
    the body not parsed, for a relay that passes messages on to a consumer that parses them anyway.
    """

    schema: type[M]
    prefetch: int = 16
    run: ConsumeHandler | None = field(default=None, repr=False)
    parsed: bool = True

    def handler(self, fn: ConsumeHandler) -> ConsumeHandler:
        self.run = fn
        return fn


@dataclass(eq=False)
class Producer(Spec, Generic[M]):
    """Messages of `schema` this processor publishes on a topic."""

    schema: type[M]


@dataclass(eq=False)
class Service(Spec, Generic[Q, R]):
    """A request/response endpoint: `async def f(self, request, flow)` yields one or more responses.

    The runtime stamps each response with the request's id, marks the last one final,
    and turns an exception into a final error response. At most `concurrency` requests (None:
    `prefetch`) run at once, interactive ones first, bulk ones in all slots but one; the rest of
    `prefetch` waits in the service's own queue, where a question can pass queued bulk work.
    """

    request: type[Q]
    response: type[R]
    prefetch: int = 16
    run: ServiceHandler | None = field(default=None, repr=False)
    concurrency: int | None = None

    def handler(self, fn: ServiceHandler) -> ServiceHandler:
        self.run = fn
        return fn


@dataclass(eq=False)
class Client(Spec, Generic[Q, R]):
    """Another service this processor calls: requests out on one topic, responses back on another.
    Background work (ingest, derived structures) says `priority=BULK`, so questions pass it."""

    request: type[Q]
    response: type[R]
    priority: Priority = INTERACTIVE


@dataclass(eq=False)
class Parameter(Spec, Generic[T]):
    """A per-flow setting (e.g. chunk size) taken from the flow's parameters, else `default`."""

    type: type[T]
    default: T | None = None

    def parse(self, raw: object) -> T:
        if raw is None:
            return self.default  # type: ignore[return-value]
        if self.type is bool and isinstance(raw, str):
            return raw.strip().lower() in {"1", "true", "yes", "on"}  # type: ignore[return-value]
        return self.type(raw)  # type: ignore[call-arg]
