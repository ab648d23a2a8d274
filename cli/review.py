"""`tg-show-review-queue` and `tg-review`: the extractions held back for their low confidence, and an
admin's verdict on them, through the gateway's review routes (admin tokens only)."""

from __future__ import annotations

from typing import Any

from tracegraph.base.errors import TraceGraphError
from tracegraph.cli._client import add_collection_arguments, collection_query, command_parser, run, table
from tracegraph.cli.api import Api
from tracegraph.cli.fact_text import add_format_argument, note_truncated, print_json, readable_fact

STATUSES = ["pending", "approved", "rejected", "all"]


def main_queue(argv: list[str] | None = None) -> int:
    p = command_parser("tg-show-review-queue", "The review queue: extracted facts held back for their low "
                       "confidence, with why, and where they came from. Needs an admin token.")
    p.add_argument("--status", choices=STATUSES, default="pending", help="which items to show [pending]")
    p.add_argument("-l", "--limit", type=int, help="most items to show [1000]")
    add_format_argument(p)
    add_collection_arguments(p)
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        response = await api.get("review", collection_query(args, status=args.status, limit=args.limit))
        if args.format == "json":
            print_json(response)
        else:
            print_queue(response, args.status)
        note_truncated(response, "items", "raise --limit")

    return run("tg-show-review-queue", args, body)


def print_queue(response: dict[str, Any], status: str) -> None:
    items = response.get("items", [])
    if not items:
        print("the review queue is empty" if status == "pending" else f"no review items ({status})")
        return
    print(table([[item["id"], f"{item['confidence']:.2f}", readable_fact(item, item.get("labels")),
                  item.get("reason", ""), item.get("document", ""), item["status"]] for item in items],
                ["id", "confidence", "fact", "reason", "document", "status"]))


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-review", "Approve review items (their facts join the graph) or reject them. "
                       "Needs an admin token; exits 1 if any id is not in the queue.")
    verdict = p.add_mutually_exclusive_group(required=True)
    verdict.add_argument("--approve", nargs="+", metavar="ID", help="review item ids to approve")
    verdict.add_argument("--reject", nargs="+", metavar="ID", help="review item ids to reject")
    add_collection_arguments(p)
    args = p.parse_args(argv)
    operation, ids = ("approve", args.approve) if args.approve else ("reject", args.reject)

    async def body(api: Api) -> None:
        response = await api.request("review", {"operation": operation, "ids": ids, "collection": args.collection},
                                     params={"flow": args.flow_id})
        changed, unknown = response.get("changed", []), response.get("unknown", [])
        done = "approved" if operation == "approve" else "rejected"
        print(f"{done} {len(changed)}: {', '.join(changed)}" if changed else f"nothing newly {done}")
        if unknown:
            raise TraceGraphError(f"not in the review queue: {', '.join(unknown)}")

    return run("tg-review", args, body)
