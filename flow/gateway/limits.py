"""What a client may send the gateway, checked before anything expensive: a body or socket frame
must be UTF-8 JSON, nested at most `MAX_JSON_DEPTH` levels (scanned, never parsed recursively),
holding only valid Unicode. Each refusal is a 400 that names the problem."""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from tracegraph.flow.gateway.refusals import GatewayError

MAX_JSON_DEPTH = 64

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string: the brackets inside it are text
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_LEADING_ID = re.compile(r'\s*\{\s*"id"\s*:\s*("[^"\\]{0,1000}")')
_SHOWN_PATH = 200


def nesting_depth(text: str) -> int:
    """How deeply the arrays and objects of JSON text nest, by one linear scan (no recursion).

    >>> nesting_depth('{"a": [1, {"b": "[[[not structure]]]"}]}')
    3
    >>> nesting_depth('[' * 100_000)
    100000
    """
    structure = _STRING.sub("", text).encode("utf-8", "surrogatepass")
    brackets = structure.translate(None, _NOT_BRACKETS)  # bytes.translate: one pass in C
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def parse_json(data: bytes | str, what: str = "request body", max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`data` as JSON; GatewayError 400 when it is not UTF-8, nests deeper than `max_depth`, is not
    JSON (NaN and Infinity included), or holds a lone surrogate (which no service could send on)."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _bad(f"{what} is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    else:
        text = data
    if text.count("[") + text.count("{") > max_depth and nesting_depth(text) > max_depth:
        raise _bad(f"{what} is JSON nested deeper than {max_depth} levels")
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise _bad(f"{what} is not valid JSON ({exc})") from None
    if _SURROGATE_ESCAPE.search(text):  # only a \uD800-\uDFFF escape can make a lone surrogate
        where = lone_surrogate_path(value)
        if where is not None:
            raise _bad(f"{where or what}: lone surrogate, not valid Unicode")
    return value


def lone_surrogate_path(value: Any) -> str | None:
    """Where in parsed JSON a string (or key) holds a lone surrogate, dotted ("" for the top); None if nowhere."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return _shown_path(path)
        elif isinstance(item, dict):
            for key, child in item.items():
                if _SURROGATE.search(key):
                    return _shown_path((*path, key))
                stack.append(((*path, key), child))
        elif isinstance(item, list):
            stack.extend(((*path, n), child) for n, child in enumerate(item))
    return None


def leading_id(text: str) -> str | None:
    """The `id` of a socket frame that could not be parsed, when it is the frame's first key (as
    upstream clients write it), so the refusal can still name its request."""
    found = _LEADING_ID.match(text)
    return json.loads(found.group(1), strict=False) if found else None


def _shown_path(path: tuple[Any, ...]) -> str:
    dotted = ".".join(str(p) for p in path).encode("ascii", "backslashreplace").decode("ascii")
    return dotted if len(dotted) <= _SHOWN_PATH else dotted[:_SHOWN_PATH] + "…"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _bad(message: str) -> GatewayError:
    return GatewayError(400, "bad-request", message)
