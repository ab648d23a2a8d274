"""What every `tg-*` command shares: --url/--token (TG_URL/TG_TOKEN), and errors as one line + exit 1."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable

from tracegraph.base.errors import TraceGraphError
from tracegraph.cli.api import DEFAULT_URL, Api


def command_parser(prog: str, description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=description)
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
