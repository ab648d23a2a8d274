"""The Backend protocol: moves bytes between topics and knows nothing about schemas."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

from tracegraph.base.bus.topic import Topic


@dataclass(frozen=True, slots=True)
class Delivery:
    """One message handed to a consumer; settle it exactly once with `ack` or `nack`.

    `attempt` is 1 on first delivery and counts up on each redelivery, taken from the
    broker's own counter (never from process memory, which a crash would reset).
    """

    body: bytes
    properties: Mapping[str, str]
    attempt: int
    ack: Callable[[], Awaitable[None]]
    nack: Callable[[], Awaitable[None]]


class Backend(Protocol):
    """A pub/sub broker seen as bytes in, bytes out.

    Every subscription of a topic receives each message; consumers that share a
    subscription name compete for them. A delivery that is nacked, or whose consumer
    goes away before settling it, is delivered again (persistent topics keep it while
    no consumer is present).
    """

    async def publish(self, topic: Topic, body: bytes, properties: Mapping[str, str], *,
                      ttl: float | None = None) -> None:
        """Send one message; returns once the broker has taken responsibility for it.

        A message still undelivered `ttl` seconds later is dropped (a request whose caller
        has given up). A publish that meets a broker reconnect is retried after it.
        """
        ...

    async def consumers(self, topic: Topic, subscription: str) -> int | None:
        """How many consumers `subscription` on `topic` has now; None where the broker cannot tell.
        Callers use it to notice a dead service in seconds instead of waiting out a timeout."""
        ...

    async def backlog(self, topic: Topic, subscription: str) -> int | None:
        """How many messages wait in `subscription` on `topic`, not yet handed to a consumer (0 when the
        subscription does not exist); None where the broker cannot tell. `tg-show-processing` shows it."""
        ...

    @property
    def epoch(self) -> int:
        """Counts lost broker connections: a response awaited across a change may never come."""
        ...

    def subscribe(self, topic: Topic, subscription: str, *, prefetch: int = 16, auto_ack: bool = False
                  ) -> AbstractAsyncContextManager[AsyncIterator[Delivery]]:
        """Join `subscription` on `topic`; at most `prefetch` deliveries are unsettled at once.

        With `auto_ack` the broker counts a message settled once it is handed over (no
        redelivery, no prefetch bound): for consumers that would ack on receipt anyway,
        such as response and config-push readers.
        """
        ...

    async def aclose(self) -> None:
        """Release connections; unsettled deliveries go back to their subscriptions."""
        ...


async def already_settled() -> None:
    """ack/nack of a delivery the broker counts as settled on receipt (`auto_ack`): nothing to do."""


def redact_url(url: str) -> str:
    """A broker URL fit for error messages: its password replaced by ***.

    >>> redact_url("amqp://guest:secret@127.0.0.1:5672/")
    'amqp://guest:***@127.0.0.1:5672/'
    """
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    if not password:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{password}@", ":***@", 1)))
