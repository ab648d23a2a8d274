"""`tg-list-explain-traces`: the explain traces stored in a collection — GraphRAG, search (hybrid,
global, RAPTOR), Document RAG and agent sessions — newest first, with their question and start time."""

from __future__ import annotations

import json
from dataclasses import asdict

from tracegraph.cli._client import add_collection_arguments, command_parser, run, table
from tracegraph.cli.api import Api
from tracegraph.cli.trace_store import KINDS, list_traces


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-list-explain-traces", "List the explain traces stored in a collection, newest first. "
                       "Sub-traces (the RAG runs an agent's tools made) are left out; --all lists them too, "
                       "with the agent step they belong to.")
    add_collection_arguments(p)
    p.add_argument("--type", choices=[k.lower() for k in KINDS.values()], help="only traces of this kind")
    p.add_argument("--since", help="only traces started at or after this ISO date/time (e.g. 2026-11-23)")
    p.add_argument("--all", action="store_true", help="include sub-traces, with the step they belong to")
    p.add_argument("-l", "--limit", type=int, default=50, help="at most this many [50]")
    p.add_argument("--json", action="store_true", help="one JSON array instead of a table")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        traces = await list_traces(api, args.flow_id, args.collection, kind=args.type, since=args.since,
                                   sub_traces_too=args.all, limit=args.limit)
        if args.json:
            print(json.dumps([asdict(t) for t in traces], indent=2))
        elif not traces:
            print(f"no explain traces in collection {args.collection!r}")
        else:
            headers = ["id", "type", "question", "time"] + (["part of"] if args.all else [])
            rows = [[t.id, t.kind, _short(t.question), t.time] + ([t.parent or ""] if args.all else []) for t in traces]
            print(table(rows, headers))

    return run("tg-list-explain-traces", args, body)


def _short(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
