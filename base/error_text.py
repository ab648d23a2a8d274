"""What a caller is told when a request fails: what failed, once, without the server's insides.

An error travels through several services before a user reads it, and each hop used to put its
kind in front again (`unavailable: unavailable: oxigraph store …`). The server's file paths (a
store's `…/tg-data/…/LOCK`) say nothing a client can act on and show how the server is laid out;
they stay in the server's log, which keeps the full text.
"""

from __future__ import annotations

import re
import traceback
from typing import Any

from tracegraph.base.errors import RemoteError

MAX_ERROR_CHARS = 2000  # an error message or a log line's text: a client's value is quoted up to this, no more

# An absolute POSIX path: starts after a space, quote, bracket or '=' (so not inside a URL or an IRI,
# whose slashes follow a word character or ':'), and runs up to a space, quote, ':' or closing bracket.
_PATH = re.compile(r"(?<![\w:/.~-])/(?:[^\s/:'\"()\[\]{}<>,;]+/)+[^\s/:'\"()\[\]{}<>,;]+")
# A kind said twice or more in a row: `unavailable: unavailable: …` -> `unavailable: …`.
_REPEATED_KIND = re.compile(r"\b([a-z][a-z0-9-]*): (?:\1: )+")


def without_paths(text: str) -> str:
    """`text` with each absolute file path shortened to its last part.

    >>> without_paths("IO error: While lock file: /srv/tg-data/triples/u/c/LOCK: Resource busy")
    'IO error: While lock file: …/LOCK: Resource busy'
    >>> without_paths("cannot reach Qdrant at http://127.0.0.1:6333/collections (urn:x/y)")
    'cannot reach Qdrant at http://127.0.0.1:6333/collections (urn:x/y)'
    """
    return _PATH.sub(lambda found: "…/" + found.group(0).rsplit("/", 1)[-1], text)


def bounded(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """`text` cut to its first `limit` characters and told so, so that no error or log line grows with a
    client's input (a 5 MB collection name used to come back whole, and fill the log once per request).

    >>> bounded("no collection 'c'")
    "no collection 'c'"
    >>> bounded("x" * 5000, limit=10)
    'xxxxxxxxxx… (cut: 5,000 characters in all)'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (cut: {len(text):,} characters in all)"


def bounded_error(exc: BaseException) -> str:
    """An exception as a log line says it, `Type: message`, bounded."""
    return bounded(f"{type(exc).__name__}: {exc}")


def bounded_traceback(exc: BaseException) -> str:
    """An exception's traceback for the log, its message (the only part that can hold input) bounded."""
    frames = "".join(traceback.format_tb(exc.__traceback__))
    return f"Traceback (most recent call last):\n{frames}{bounded_error(exc)}"


def field_problem(error: Any) -> str:
    """One pydantic field error as a caller reads it, `where: what`, never quoting the input:
    a too long text says its limit (`collection: at most 200 characters`)."""
    where = ".".join(str(p) for p in error["loc"])
    context = error.get("ctx") or {}
    if error["type"] == "value_error" and "error" in context:  # a schema's own check speaks for itself
        what = str(context["error"])
        return bounded(what if not where or what.startswith(f"{where}:") else f"{where}: {what}")
    if error["type"] == "string_too_long":
        what = f"at most {context['max_length']:,} characters"
    elif error["type"] == "too_long":
        what = f"at most {context['max_length']:,} items"
    else:
        what = error["msg"]
    return bounded(f"{where or 'body'}: {what}")


def public_message(kind: str, exc: BaseException) -> str:
    """The message an `Error(kind, …)` response carries for `exc`: no kind said twice (a relayed
    RemoteError of the same kind gives its message alone), no server file paths.

    >>> public_message("unavailable", RemoteError("unavailable", "unavailable: store /d/LOCK: busy"))
    'store …/LOCK: busy'
    >>> public_message("graph-rag-error", RemoteError("bad-query", "no such predicate"))
    'bad-query: no such predicate'
    """
    text = exc.message if isinstance(exc, RemoteError) and exc.type == kind else (str(exc) or type(exc).__name__)
    text = _REPEATED_KIND.sub(r"\1: ", bounded(text, 4 * MAX_ERROR_CHARS))  # cut first: the patterns scan it
    while text.startswith(f"{kind}: "):
        text = text[len(kind) + 2:]
    return bounded(without_paths(text))
