"""The only place that turns messages into bytes and back, stamping and checking the schema name."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pydantic_core
from pydantic import TypeAdapter, ValidationError

from tracegraph.base.error_text import bounded, field_problem
from tracegraph.base.errors import DecodeError, SchemaMismatch
from tracegraph.schemas.base import Message

log = logging.getLogger(__name__)

SCHEMA = "schema"
SCHEMA_VERSION = "schema-version"

M = TypeVar("M", bound=Message)
T = TypeVar("T")

_SURROGATE = re.compile("[\ud800-\udfff]")
_UNICODE_TROUBLE = re.compile("surrogate|hex escape|unicode code point")  # what pydantic's JSON parser says


@dataclass(frozen=True, slots=True)
class Encoded(Generic[M]):
    """A message still in its wire form, its schema name and version checked but its body not parsed:
    what a relay passes on as it came (`encode` returns the same bytes), leaving the full parse to
    the consumer after it. `peek` reads the few fields the relay needs."""

    schema: type[M]
    body: bytes

    def decode(self) -> M:
        return _parse(self.body, self.schema)


def encode(message: Message | Encoded[Any], properties: Mapping[str, str] | None = None
           ) -> tuple[bytes, dict[str, str]]:
    """JSON body (wire aliases, no nulls) and properties carrying the schema name and version."""
    cls = message.schema if isinstance(message, Encoded) else type(message)
    if not cls.schema_name:
        raise TypeError(f"{cls.__qualname__} has no schema_name and cannot go on the bus")
    props = {**properties, SCHEMA: cls.schema_name, SCHEMA_VERSION: cls.schema_version_text} if properties else \
        {SCHEMA: cls.schema_name, SCHEMA_VERSION: cls.schema_version_text}
    if isinstance(message, Encoded):
        return message.body, props
    # The serializer straight to bytes: half the cost of model_dump_json().encode().
    try:
        return cls.__pydantic_serializer__.to_json(message, by_alias=True, exclude_none=True), props
    except pydantic_core.PydanticSerializationError as exc:
        if "surrogates not allowed" not in str(exc):
            raise
    # Text from a lenient JSON parser (json.loads of "\ud800") can hold lone surrogates, which
    # UTF-8 cannot carry: send U+FFFD in their place rather than fail the handler that sent it.
    log.warning("replaced lone surrogates in a %r message with U+FFFD", cls.schema_name)
    cleaned = _replace_surrogates(message.model_dump(mode="json", by_alias=True, exclude_none=True))
    return pydantic_core.to_json(cleaned, inf_nan_mode="null"), props


def decode(body: bytes, properties: Mapping[str, str], expected: type[M]) -> M:
    """Parse `body` as `expected`, refusing a body stamped with another schema or version."""
    _check(properties, expected)
    return _parse(body, expected)


def encoded(body: bytes, properties: Mapping[str, str], expected: type[M]) -> Encoded[M]:
    """`body` as an `Encoded` message of `expected`: the same refusals as `decode` for a body stamped
    with another schema or version, but the body is not parsed."""
    _check(properties, expected)
    return Encoded(expected, body)


def peek(message: Encoded[Any], shape: TypeAdapter[T]) -> T:
    """Parse only what `shape` names (TypedDicts, which pass over other keys): a sevenfold cheaper read
    of an explain event's graphs than its full parse. DecodeError if the body lacks that shape."""
    try:
        return shape.validate_json(message.body)
    except ValidationError as exc:
        raise DecodeError(f"invalid {message.schema.schema_name!r} message: {_summarise(exc)}") from None


def _check(properties: Mapping[str, str], expected: type[Message]) -> None:
    name = properties.get(SCHEMA)
    if name is None:
        raise DecodeError(f"message has no {SCHEMA!r} property; expected {expected.schema_name!r}")
    if name != expected.schema_name:
        raise SchemaMismatch(f"expected schema {expected.schema_name!r}, got {name!r}")
    version = properties.get(SCHEMA_VERSION, "1")
    if version != str(expected.schema_version):
        raise SchemaMismatch(
            f"schema {name!r} version {version} cannot be read as version {expected.schema_version}"
        )


def _parse(body: bytes, expected: type[M]) -> M:
    name = expected.schema_name
    try:
        return expected.model_validate_json(body)
    except ValidationError as exc:
        raise DecodeError(f"invalid {name!r} message: {_summarise(exc)}") from None
    except (ValueError, TypeError, RecursionError) as exc:  # a validator that failed another way
        raise DecodeError(f"invalid {name!r} message: {type(exc).__name__}: {str(exc)[:200]}") from None


def _summarise(exc: ValidationError, limit: int = 3) -> str:
    """The first few field errors, each as `field.path: message`."""
    parts = []
    for err in exc.errors(include_input=False)[:limit]:
        hint = " (not valid Unicode)" if err["type"] == "json_invalid" and _UNICODE_TROUBLE.search(err["msg"]) else ""
        parts.append(f"{field_problem(err)}{hint}")
    more = exc.error_count() - limit
    return bounded("; ".join(parts) + (f" (+{more} more)" if more > 0 else ""))


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    return value
