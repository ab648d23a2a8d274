"""What the gateway answers when it refuses a request or something below it fails.

One mapping from an exception to (HTTP status, error type, message), shared by REST, NDJSON
streams and the socket, so that a bus or service that is down is a 503 everywhere, and only a
genuinely unexpected exception is a (logged) 500.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from tracegraph.base.error_text import bounded, bounded_error, bounded_traceback, public_message
from tracegraph.base.errors import DecodeError, RemoteError

log = logging.getLogger(__name__)

# The runtime's errors carry an `error_type`; these are the ones with an HTTP meaning of their own.
STATUS_OF_TYPE = {"bad-request": 400, "unavailable": 503, "timeout": 504}
# Libraries whose exceptions mean the broker connection failed (they are not imported here).
BROKER_LIBRARIES = frozenset({"aiormq", "aio_pika", "pamqp", "pulsar", "_pulsar"})


class GatewayError(Exception):
    """A request the gateway refuses before any processor sees it; `status` is the HTTP status."""

    def __init__(self, status: int, type_: str, message: str) -> None:
        super().__init__(message)
        self.status, self.type, self.message = status, type_, message


def error_body(type_: str, message: str) -> dict[str, Any]:
    """The one error shape every reply uses: `{"error": {"type", "message"}}`."""
    return {"error": {"type": type_, "message": message}}


def failure_of(exc: Exception) -> GatewayError:
    """The reply to an exception met while serving a request.

    - a GatewayError is its own reply;
    - a service's Error response is HTTP 200, as upstream clients expect, except `unavailable` (503);
      its message as `error_text.public_message` has it (its kind once, no server paths);
    - the runtime's errors go by their `error_type`: ServiceUnavailable and BusError are 503,
      RequestTimeout is 504; an undecodable response is 502;
    - a broker library's exception, or a lost connection, is 503;
    - anything else is logged with its traceback and answered 500 with a short message.
    """
    if isinstance(exc, GatewayError):
        return exc
    if isinstance(exc, RemoteError):
        return GatewayError(503 if exc.type == "unavailable" else 200, exc.type, public_message(exc.type, exc))
    type_ = getattr(exc, "error_type", None)
    if type_ in STATUS_OF_TYPE:
        return GatewayError(STATUS_OF_TYPE[type_], type_, public_message(type_, exc))
    if isinstance(exc, DecodeError):
        return GatewayError(502, "bad-response",
                            f"a service sent a response the gateway cannot read: {bounded(str(exc))}")
    if isinstance(exc, ConnectionError) or _from_broker_library(exc):
        return GatewayError(503, "unavailable",
                            f"the message bus is unavailable ({bounded_error(exc)}); try again")
    log.error("unexpected failure while serving a request\n%s", bounded_traceback(exc))
    return GatewayError(500, "internal-error", f"internal error ({type(exc).__name__}); see the gateway's log")


def retry_after(status: int, unavailable_timeout: float) -> dict[str, str] | None:
    """A 503's `Retry-After` header: whole seconds, the time the gateway waits before calling a service
    (or the broker) away, so a client that honours it asks again once that could have changed.

    >>> retry_after(503, 4.5), retry_after(200, 4.5)
    ({'Retry-After': '5'}, None)
    """
    return {"Retry-After": str(max(1, math.ceil(unavailable_timeout)))} if status == 503 else None


def _from_broker_library(exc: Exception) -> bool:
    return any(cls.__module__.partition(".")[0] in BROKER_LIBRARIES for cls in type(exc).__mro__)
