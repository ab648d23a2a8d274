"""The one exception tree of the runtime.

    TraceGraphError
     ├── BusError                 the broker could not be reached or used
     │    ├── ConnectError
     │    └── TopicNotFound       a name that is not a valid topic
     ├── DecodeError              a body that is not a valid message
     │    └── SchemaMismatch      a valid body of another schema than expected
     ├── RequestTimeout           no (further) response within the deadline
     ├── TransientError           worth retrying: the message is redelivered later
     │    └── ServiceUnavailable  no live consumer serves the request (or it died mid-answer)
     │         └── NoRoute        a request no queue took: its service is not (yet) subscribed
     ├── RemoteError(type, msg)   the service answered with an Error response
     └── ConfigError              bad settings, unknown flow / blueprint / processor
          ├── UnknownCollection   a question for a collection nothing was ever loaded into
          └── UnknownEntity       a name or IRI the collection's graph does not hold
"""

from __future__ import annotations


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


# Error types a service answers for a failure that may pass: a message whose handler met one is
# redelivered later rather than given up on.
TRANSIENT_ERROR_TYPES = frozenset({"unavailable", "timeout"})


def is_transient(exc: BaseException) -> bool:
    """Worth retrying later: a downstream service or the broker was briefly away, or said so."""
    if isinstance(exc, TopicNotFound):
        return False
    if isinstance(exc, (TransientError, RequestTimeout, BusError)):
        return True
    return isinstance(exc, RemoteError) and exc.type in TRANSIENT_ERROR_TYPES


class QueryError(TraceGraphError):
    """A query that cannot run: bad SPARQL syntax, a timeout, or a write where only reads are allowed."""


class BadTerm(QueryError, ValueError):
    """An IRI, blank node id, language tag or graph name that RDF does not allow."""

    error_type = "bad-request"


class LlmUnavailable(ConfigError):
    """No LLM endpoint is configured; callers with an offline strategy use it instead."""

    error_type = "llm-unavailable"
