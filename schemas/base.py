"""Base message types and the schema registry the codec uses to name what it encodes."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

_REGISTRY: dict[str, type["Message"]] = {}


class Message(BaseModel):
    """A frozen wire model; subclasses set `schema_name` (and bump `schema_version` on breaking change)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    schema_name: ClassVar[str] = ""
    schema_version: ClassVar[int] = 1
    schema_version_text: ClassVar[str] = "1"

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.schema_version_text = str(cls.schema_version)
        name = cls.__dict__.get("schema_name")
        if name:
            if name in _REGISTRY and _REGISTRY[name] is not cls:
                raise TypeError(f"schema name {name!r} already used by {_REGISTRY[name].__qualname__}")
            _REGISTRY[name] = cls


_new = object.__new__
_set = object.__setattr__
M = TypeVar("M", bound=BaseModel)


def prevalidated(cls: type[M], fields: dict[str, Any]) -> M:
    """A model built from values already known valid, with EVERY field given: what `model_construct`
    does, without its per-field default and alias lookups (half the cost of decoding a pattern
    lookup's triples from the store). The dict becomes the instance's own, so pass a fresh one.

    >>> prevalidated(Ping, {"text": "hi", "seq": 1}) == Ping(text="hi", seq=1)
    True
    """
    instance = _new(cls)
    _set(instance, "__dict__", fields)
    _set(instance, "__pydantic_fields_set__", set(fields))
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance


def schema_class(name: str) -> type[Message] | None:
    """The registered model for a schema name, or None."""
    return _REGISTRY.get(name)


class Error(Message):
    """A failure reported in a response: a machine-readable type and a message for people."""

    schema_name: ClassVar[str] = "error"

    type: str
    message: str


class ServiceResponse(Message):
    """A response on a request/response service; one request may receive several.

    `final_field` names the boolean that marks the last response of a request (upstream
    uses `end_of_session`, `end_of_stream`, `is_final` or `end_of_dialog` by service).
    """

    final_field: ClassVar[str] = "end_of_stream"

    error: Error | None = None

    @property
    def ends_request(self) -> bool:
        return bool(getattr(self, self.final_field))

    def as_final(self) -> "ServiceResponse":
        """A copy marked as the last response of its request."""
        return self.model_copy(update={self.final_field: True})

    @classmethod
    def failure(cls, error: Error) -> "ServiceResponse":
        """The final response that reports `error`; every response model must allow this."""
        return cls.model_validate({"error": error, cls.final_field: True})


class Ping(Message):
    """A liveness probe used by tests and benchmarks."""

    schema_name: ClassVar[str] = "ping"

    text: str = ""
    seq: int = 0


class Pong(ServiceResponse):
    """The reply to Ping."""

    schema_name: ClassVar[str] = "pong"

    text: str = ""
    seq: int = 0
    end_of_stream: bool = False
