"""What every `tg-*` command shares: --url/--token (TG_URL/TG_TOKEN), and errors as one line + exit 1."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable

from tracegraph.base.errors import TraceGraphError
from tracegraph.base.usage import ArgumentParser
from tracegraph.cli.api import DEFAULT_URL, Api


def command_parser(prog: str, description: str) -> argparse.ArgumentParser:
    p = ArgumentParser(prog=prog, description=description)
    p.add_argument("-u", "--url", default=os.environ.get("TG_URL", DEFAULT_URL),
                   help=f"gateway URL [TG_URL, {DEFAULT_URL}]")
    p.add_argument("--token", default=os.environ.get("TG_TOKEN"),
                   help="bearer token, if the gateway requires one [TG_TOKEN]")
    return p


def run(prog: str, args: argparse.Namespace, body: Callable[[Api], Awaitable[None]]) -> int:
    """Run `body` against the gateway; any failure prints `prog: error: …` and returns 1."""
    try:
        asyncio.run(body(Api(args.url, args.token)))
    except TraceGraphError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader (`| head`) has all it wants
        sys.stderr.close()
        return 0
    return 0


def table(rows: list[list[str]], headers: list[str]) -> str:
    """A plain left-aligned text table.

    >>> print(table([["a", "bb"]], ["x", "y"]))
    x  y
    -  --
    a  bb
    """
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in [headers, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def term_json(text: str) -> dict:
    """A term from the command line, as upstream's client reads it: IRIs by scheme, else a literal.

    >>> term_json("urn:chunk:1")
    {'t': 'i', 'i': 'urn:chunk:1'}
    >>> term_json("Acme")
    {'t': 'l', 'v': 'Acme'}
    """
    if text.startswith("<") and text.endswith(">"):
        return {"t": "i", "i": text[1:-1]}
    if text.startswith(("http://", "https://", "urn:")):
        return {"t": "i", "i": text}
    return {"t": "l", "v": text}


def show_term(term: dict) -> str:
    """A wire term in N-Triples-like form, quoted triples as the spec's `<< s p o >>`.

    >>> show_term({"t": "t", "tr": {"s": {"t": "i", "i": "urn:a"}, "p": {"t": "i", "i": "urn:p"},
    ...                             "o": {"t": "l", "v": "x"}}})
    '<< <urn:a> <urn:p> "x" >>'
    """
    kind = term.get("t")
    if kind == "i":
        return f"<{term['i']}>"
    if kind == "b":
        return f"_:{term['d']}"
    if kind == "t":
        tr = term["tr"]
        return f"<< {show_term(tr['s'])} {show_term(tr['p'])} {show_term(tr['o'])} >>"
    suffix = f"@{term['ln']}" if term.get("ln") else (f"^^<{term['dt']}>" if term.get("dt") else "")
    return '"' + term.get("v", "").replace('"', '\\"') + '"' + suffix


def show_triple(triple: dict) -> str:
    graph = f" <{triple['g']}>" if triple.get("g") else ""
    return f"{show_term(triple['s'])} {show_term(triple['p'])} {show_term(triple['o'])}{graph} ."


def add_collection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-C", "--collection", default=os.environ.get("TG_COLLECTION", "default"),
                        help="collection [TG_COLLECTION, default]")
    parser.add_argument("-f", "--flow-id", default=os.environ.get("TG_FLOW", "default"),
                        help="flow to use [TG_FLOW, default]")


def collection_query(args: argparse.Namespace, **asked: object) -> dict[str, str]:
    """The query string of a GET route: the flow and collection of `add_collection_arguments`, and what
    the command asks, less what it left out (None).

    >>> collection_query(argparse.Namespace(flow_id="f", collection="c"), depth=2, q=None)
    {'flow': 'f', 'collection': 'c', 'depth': '2'}
    """
    given = {"flow": args.flow_id, "collection": args.collection, **asked}
    return {name: str(value) for name, value in given.items() if value is not None}
