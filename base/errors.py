"""The one exception tree of the runtime.

    TraceGraphError
     ├── BusError                 the broker could not be reached or used
     │    ├── ConnectError
     │    └── TopicNotFound       a name that is not a valid topic
     ├── DecodeError              a body that is not a valid message
     │    └── SchemaMismatch      a valid body of another schema than expected
     ├── RequestTimeout           no (further) response within the deadline
     ├── TransientError           worth retrying: the message is redelivered later
     │    ├── ServiceUnavailable  no live consumer serves the request (or it died mid-answer)
     │    │    └── NoRoute        a request no queue took: its service is not (yet) subscribed
     │    └── OutOfSpace          a store's disk is full: retried without limit, never given up
     ├── DiskFullRefusal          a document refused at the door: the disk is (nearly) full
     ├── RemoteError(type, msg)   the service answered with an Error response
     └── ConfigError              bad settings, unknown flow / blueprint / processor
          ├── UnknownCollection   a question for a collection nothing was ever loaded into
          └── UnknownEntity       a name or IRI the collection's graph does not hold
"""

from __future__ import annotations

import errno
import sqlite3


class TraceGraphError(Exception):
    """Base of every error the runtime raises on purpose."""


class BusError(TraceGraphError):
    """The message bus failed."""

    error_type = "unavailable"


class ConnectError(BusError):
    """The broker could not be reached."""


class TopicNotFound(BusError):
    """A topic name that does not parse, or that a backend cannot map."""

    error_type = "bad-request"


class DecodeError(TraceGraphError):
    """A message body that cannot be decoded into its schema."""


class SchemaMismatch(DecodeError):
    """A body stamped with another schema (or version) than the one expected."""


class RequestTimeout(TraceGraphError):
    """A request got no response, or its stream stalled, within the deadline."""

    error_type = "timeout"


class ConfigError(TraceGraphError):
    """Settings, a blueprint or a flow that cannot be used as given."""


class UnknownCollection(ConfigError):
    """A question asked of a collection the user never loaded anything into: refused before anything
    (a trace, an answer document) is written there, which would make the collection exist."""

    error_type = "unknown-collection"

    def __init__(self, user: str, collection: str) -> None:
        super().__init__(f"unknown collection {collection!r}: user {user!r} has loaded nothing into it")
        self.user, self.collection = user, collection


class UnknownEntity(ConfigError):
    """An entity asked about by name or IRI that the collection's graph does not hold."""

    error_type = "not-found"


class RemoteError(TraceGraphError):
    """A service answered with an `Error(type, message)` response."""

    def __init__(self, type: str, message: str) -> None:
        super().__init__(f"{type}: {message}")
        self.type = type
        self.message = message


class TransientError(TraceGraphError):
    """A failure worth retrying (a store or downstream service briefly unavailable).

    A consumer whose handler raises it has its message redelivered until the broker's attempt
    count reaches the processor's limit; a service tries again a few times while it has sent
    nothing, then answers the error.
    """

    error_type = "unavailable"


class ServiceUnavailable(TransientError):
    """The service a request went to has no live consumer, stopped answering mid-request, or the
    broker connection dropped while waiting. Worth retrying once the service (or broker) is back;
    the gateway answers it with HTTP 503."""

    error_type = "unavailable"


class NoRoute(ServiceUnavailable):
    """A request published where no queue takes it: its service has never subscribed (or is not yet
    subscribed) in this flow. Nothing was stored, so sending it again later cannot duplicate it."""


class OutOfSpace(TransientError):
    """A store could not write because its disk (or filesystem) is full. It passes once space is
    freed, so a consumer keeps its message and retries without limit instead of giving it up."""

    error_type = "out-of-space"


class DiskFullRefusal(TraceGraphError):
    """A request refused because storing it would fill the disk (below the free-space floor, or the
    disk already full): answered at once, since only the user can free space or retry."""

    error_type = OutOfSpace.error_type


# What each engine says when its disk is full: the OS (ENOSPC, EDQUOT) and RocksDB (an OSError with the
# OS's text), SQLite (SQLITE_FULL), tantivy (a ValueError quoting the OS error number). Only these
# exception types are read, so an error that quotes user input saying "disk is full" is not one.
_OUT_OF_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_ENGINE_TEXTS: tuple[tuple[type[BaseException], tuple[str, ...]], ...] = (
    (OSError, ("no space left on device", "disk quota exceeded")),
    (sqlite3.Error, ("database or disk is full",)),
    (ValueError, (f"(os error {errno.ENOSPC})", f"(os error {errno.EDQUOT})")),
)


def is_out_of_space(exc: BaseException) -> bool:
    """Whether a failure (or one it was raised from) is a full disk, whichever engine reported it."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OutOfSpace) or getattr(current, "errno", None) in _OUT_OF_SPACE_ERRNOS:
            return True
        if isinstance(current, RemoteError) and current.type == OutOfSpace.error_type:
            return True
        text = str(current)[:4000].lower()  # an engine's own words come first
        if any(isinstance(current, kind) and any(marker in text for marker in markers)
               for kind, markers in _ENGINE_TEXTS):
            return True
        current = current.__cause__ or current.__context__
    return False


# Error types a service answers for a failure that may pass: a message whose handler met one is
# redelivered later rather than given up on.
TRANSIENT_ERROR_TYPES = frozenset({"unavailable", "timeout", OutOfSpace.error_type})


def is_transient(exc: BaseException) -> bool:
    """Worth retrying later: a downstream service or the broker was briefly away, or said so."""
    if isinstance(exc, TopicNotFound):
        return False
    if isinstance(exc, (TransientError, RequestTimeout, BusError)):
        return True
    if isinstance(exc, RemoteError) and exc.type in TRANSIENT_ERROR_TYPES:
        return True
    return is_out_of_space(exc)  # an engine's own error for a full disk (OSError, sqlite3, tantivy)


class QueryError(TraceGraphError):
    """A query that cannot run: bad SPARQL syntax, a timeout, or a write where only reads are allowed."""


class BadTerm(QueryError, ValueError):
    """An IRI, blank node id, language tag or graph name that RDF does not allow."""

    error_type = "bad-request"


class LlmUnavailable(ConfigError):
    """No LLM endpoint is configured; callers with an offline strategy use it instead."""

    error_type = "llm-unavailable"
