"""Bounded text fields that requests share, so every entry point (gateway or bus) refuses oversized
client text by field name before any work is done on it: a question, and an identifier."""

from __future__ import annotations

import os
from typing import Annotated

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

QUESTION_BYTES_ENV = "TG_MAX_QUESTION_BYTES"
DEFAULT_MAX_QUESTION_BYTES = 4096
MAX_ID_CHARS = 1000
MAX_NAME_CHARS = 200  # a user, collection or flow: it names folders and URIs, so it stays short
MAX_QUERY_CHARS = 100_000  # a query language text (SPARQL) a client writes
SHOWN_CHARS = 100


def max_question_bytes() -> int:
    """The largest question in UTF-8 bytes: `TG_MAX_QUESTION_BYTES`, else 4096.

    Read on each call rather than at import, so a restart (or a test) with another value takes
    effect; a value that is not a positive whole number raises ValueError naming the variable.
    """
    raw = os.environ.get(QUESTION_BYTES_ENV)
    if raw is None:
        return DEFAULT_MAX_QUESTION_BYTES
    try:
        limit = int(raw)
    except ValueError:
        limit = 0
    if limit < 1:
        raise ValueError(f"{QUESTION_BYTES_ENV}={raw!r} is not a positive number of bytes")
    return limit


def _within_question_limit(text: str) -> str:
    limit = max_question_bytes()
    if len(text) > limit // 4:  # shorter texts fit even at 4 bytes a character
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise PydanticCustomError(
                "question_too_long", "question is {size} bytes, over the limit of {limit} bytes ({env})",
                {"size": f"{size:,}", "limit": f"{limit:,}", "env": QUESTION_BYTES_ENV})
    return text


Question = Annotated[str, AfterValidator(_within_question_limit), Field(
    description=f"free text, at most {QUESTION_BYTES_ENV} UTF-8 bytes ({DEFAULT_MAX_QUESTION_BYTES} by default)")]

Identifier = Annotated[str, Field(max_length=MAX_ID_CHARS)]
Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
QueryText = Annotated[str, Field(max_length=MAX_QUERY_CHARS)]


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """A client's text quoted for an error message, cut after `limit` characters, so that an error
    never echoes a huge value back whole.

    >>> shown("doc-1")
    "'doc-1'"
    >>> shown("x" * 500, limit=5)
    "'xxxxx'… (500 characters)"
    """
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"
