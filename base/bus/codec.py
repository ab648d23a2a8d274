"""The only place that turns messages into bytes and back, stamping and checking the schema name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from pydantic import ValidationError

from tracegraph.base.errors import DecodeError, SchemaMismatch
from tracegraph.schemas.base import Message

SCHEMA = "schema"
SCHEMA_VERSION = "schema-version"

M = TypeVar("M", bound=Message)


def encode(message: Message, properties: Mapping[str, str] | None = None) -> tuple[bytes, dict[str, str]]:
    """JSON body (wire aliases, no nulls) and properties carrying the schema name and version."""
    cls = type(message)
    if not cls.schema_name:
        raise TypeError(f"{cls.__qualname__} has no schema_name and cannot go on the bus")
    props = {**properties, SCHEMA: cls.schema_name, SCHEMA_VERSION: cls.schema_version_text} if properties else \
        {SCHEMA: cls.schema_name, SCHEMA_VERSION: cls.schema_version_text}
    # The serializer straight to bytes: half the cost of model_dump_json().encode().
    return cls.__pydantic_serializer__.to_json(message, by_alias=True, exclude_none=True), props


def decode(body: bytes, properties: Mapping[str, str], expected: type[M]) -> M:
    """Parse `body` as `expected`, refusing a body stamped with another schema or version."""
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
    try:
        return expected.model_validate_json(body)
    except ValidationError as exc:
        raise DecodeError(f"invalid {name!r} message: {_summarise(exc)}") from None


def _summarise(exc: ValidationError, limit: int = 3) -> str:
    """The first few field errors, each as `field.path: message`."""
    parts = []
    for err in exc.errors()[:limit]:
        where = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{where}: {err['msg']}")
    more = exc.error_count() - limit
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")
