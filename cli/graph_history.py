"""`tg-graph-at` and `tg-graph-diff`: a collection's graph as it held at a date (as the system knew it
at another), and what changed between two dates, through the gateway's `GET /api/v1/temporal`."""

from __future__ import annotations

import argparse
from typing import Any

from tracegraph.cli._client import add_collection_arguments, collection_query, command_parser, run, table
from tracegraph.cli.api import Api
from tracegraph.cli.fact_text import (
    add_format_argument, entity_iri, note_truncated, print_json, readable, short_instant,
)

DATE_FORMS = "YYYY-MM-DD, YYYY-MM or an ISO 8601 date-time"


def _history_parser(prog: str, description: str) -> argparse.ArgumentParser:
    p = command_parser(prog, description)
    p.add_argument("-l", "--limit", type=int, help="most facts or changes to return [1000]")
    add_format_argument(p)
    add_collection_arguments(p)
    return p


def _sources(fact: dict) -> str:
    return ", ".join(fact.get("sources", []))


def main_at(argv: list[str] | None = None) -> int:
    p = _history_parser("tg-graph-at", "The facts of a collection's graph that held at a date, as the system "
                        f"knew them at another (both default to now). Dates: {DATE_FORMS}.")
    p.add_argument("--at", help="valid time: the graph as it held in the world then [now]")
    p.add_argument("--known", help="record time: as the system knew it then, before any later correction [now]")
    p.add_argument("--subject", help="only facts about this entity: an IRI, or an entity's name")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        subject = entity_iri(args.subject) if args.subject else None
        response = await api.get("temporal", collection_query(args, at=args.at, known=args.known, subject=subject,
                                                                 limit=args.limit))
        if args.format == "json":
            print_json(response)
        else:
            print_facts(response)
        note_truncated(response, "facts", "raise --limit, or narrow with --subject")

    return run("tg-graph-at", args, body)


def print_facts(response: dict[str, Any]) -> None:
    facts = response.get("facts", [])
    at, known = (short_instant(response.get(name)) or "now" for name in ("at", "known"))
    moment = f"held at {at}, as known at {known}"
    if not facts:
        print(f"no facts {moment}")
        return
    print(f"{len(facts):,} fact(s) {moment}:")
    labels = response.get("labels")
    print(table([[readable(f["s"], labels), readable(f["p"], labels), readable(f["o"], labels),
                  short_instant(f.get("valid-from")), short_instant(f.get("valid-until")), _sources(f)] for f in facts],
                ["subject", "predicate", "object", "valid from", "valid until", "sources"]))


def main_diff(argv: list[str] | None = None) -> int:
    p = _history_parser("tg-graph-diff", "What changed in a collection's graph between two dates: facts added, "
                        f"removed, and values replaced (old → new, with both documents). Dates: {DATE_FORMS}.")
    p.add_argument("--from", dest="start", required=True, help="start of the window")
    p.add_argument("--to", dest="end", required=True, help="end of the window (after --from)")
    p.add_argument("--axis", choices=["valid", "recorded"],
                   help="valid: when facts held in the world; recorded: when the system learned or retracted "
                        "them [valid]")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        response = await api.get("temporal", collection_query(
            args, **{"from": args.start, "to": args.end, "axis": args.axis}, limit=args.limit))
        if args.format == "json":
            print_json(response)
        else:
            print_changes(response, args.axis or "valid")
        note_truncated(response, "changes", "raise --limit, or narrow the window")

    return run("tg-graph-diff", args, body)


def print_changes(response: dict[str, Any], axis: str) -> None:
    changes = response.get("changes", [])
    window = f"between {short_instant(response.get('from'))} and {short_instant(response.get('to'))} ({axis} time)"
    if not changes:
        print(f"no changes {window}")
        return
    counts = {kind: sum(c["change"] == kind for c in changes) for kind in ("added", "removed", "changed")}
    print(f"{window}: " + ", ".join(f"{count:,} {kind}" for kind, count in counts.items()))
    labels, rows = response.get("labels"), []
    for change in changes:
        fact, before = change["fact"], change.get("previous")
        value, documents = readable(fact["o"], labels), _sources(fact)
        if before is not None:
            value = f"{readable(before['o'], labels)} → {value}"
            documents = f"{_sources(before) or '?'} → {documents or '?'}"
        rows.append([change["change"], readable(fact["s"], labels), readable(fact["p"], labels), value, documents])
    print(table(rows, ["change", "subject", "predicate", "value", "documents"]))
