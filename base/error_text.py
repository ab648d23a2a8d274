"""What a caller is told when a request fails: what failed, once, without the server's insides.

An error travels through several services before a user reads it, and each hop used to put its
kind in front again (`unavailable: unavailable: oxigraph store …`). The server's file paths (a
store's `…/tg-data/…/LOCK`) say nothing a client can act on and show how the server is laid out;
they stay in the server's log, which keeps the full text.
"""

from __future__ import annotations

import re

from tracegraph.base.errors import RemoteError

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


def public_message(kind: str, exc: BaseException) -> str:
    """The message an `Error(kind, …)` response carries for `exc`: no kind said twice (a relayed
    RemoteError of the same kind gives its message alone), no server file paths.

    >>> public_message("unavailable", RemoteError("unavailable", "unavailable: store /d/LOCK: busy"))
    'store …/LOCK: busy'
    >>> public_message("graph-rag-error", RemoteError("bad-query", "no such predicate"))
    'bad-query: no such predicate'
    """
    text = exc.message if isinstance(exc, RemoteError) and exc.type == kind else (str(exc) or type(exc).__name__)
    text = _REPEATED_KIND.sub(r"\1: ", text)
    while text.startswith(f"{kind}: "):
        text = text[len(kind) + 2:]
    return without_paths(text)
