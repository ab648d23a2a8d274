"""`tg-show-ownership`, `tg-show-dependencies`, `tg-show-memory` and `tg-intent-check`: the architecture
questions (RSN-08 to RSN-10) through the gateway's `GET /api/v1/{ownership,dependencies,memory}/{name}`
and `POST /api/v1/intent-check` routes, printed for reading (or as the gateway's JSON with --json)."""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tracegraph.base.errors import TraceGraphError
from tracegraph.base.retrieval.as_of_heading import EXPLICIT, heading
from tracegraph.cli._client import add_collection_arguments, collection_query, command_parser, run
from tracegraph.cli.api import Api
from tracegraph.cli.architecture_text import TEXT_WIDTH, joined, print_memory, print_ownership, source_text
from tracegraph.cli.fact_text import print_json

MISMATCH_EXIT = 3  # tg-intent-check: the change looks unrelated to its work item (1 stays "it failed")


def _parser(prog: str, description: str, examples: list[str]) -> argparse.ArgumentParser:
    width = min(TEXT_WIDTH, shutil.get_terminal_size().columns - 2)  # as argparse wraps the options
    p = command_parser(prog, textwrap.fill(description, width))
    p.formatter_class = argparse.RawDescriptionHelpFormatter  # keeps the examples' lines as written
    p.epilog = "examples:\n" + "\n".join(f"  {example}" for example in examples)
    p.add_argument("--json", action="store_true", help="print the gateway's JSON response as it is, for scripts")
    add_collection_arguments(p)
    return p


def _entity_parser(prog: str, description: str, examples: list[str]) -> argparse.ArgumentParser:
    p = _parser(prog, description, examples)
    p.add_argument("name", help="the entity: its name as the graph has it (Skyline), or its IRI")
    p.add_argument("--as-of", metavar="DATE",
                   help="answer as the graph held at DATE (YYYY-MM-DD, YYYY-MM or an ISO 8601 date-time): the facts "
                        "that held then, and only the documents that existed then [now]")
    return p


def _entity_route(operation: str, name: str) -> str:
    """`ownership/Payments%20API%2Fv2`: the name is one path segment, whatever it holds."""
    return f"{operation}/{quote(name, safe='')}"


def _entity_command(prog: str, args: argparse.Namespace, operation: str,
                    show: Callable[[dict[str, Any], str], None], **asked: object) -> int:
    """GET the entity's answer for `operation` and print it with `show(answer, name)`, or as JSON."""
    async def body(api: Api) -> None:
        response = await api.get(_entity_route(operation, args.name),
                                 collection_query(args, **asked, **{"as-of": args.as_of}))
        if args.json:
            print_json(response)
            return
        for note in response.get("notes", []):
            print(f"note: {note}", file=sys.stderr)
        if response.get("as-of"):
            print(heading(response["as-of"], EXPLICIT), end="")
        show(response, response.get("label") or args.name)

    return run(prog, args, body)


# --- tg-show-ownership ----------------------------------------------------------------------------

def main_ownership(argv: list[str] | None = None) -> int:
    p = _entity_parser(
        "tg-show-ownership",
        "Who owns an entity: the teams and people the graph names (owned by, maintains, leads, ...) merged "
        "with the CODEOWNERS rule that decides its code path, each with the documents and lines it comes "
        "from, and a note when the two disagree. Given a repository path instead (services/skyline/, "
        "src/app.py), the CODEOWNERS rule deciding it.",
        ["tg-show-ownership Skyline", "tg-show-ownership 'Payments API' -C platform --json",
         "tg-show-ownership services/skyline/models/train.py"])
    args = p.parse_args(argv)
    return _entity_command("tg-show-ownership", args, "ownership", print_ownership)


# --- tg-show-dependencies -------------------------------------------------------------------------


def main_dependencies(argv: list[str] | None = None) -> int:
    p = _entity_parser(
        "tg-show-dependencies",
        "What an entity depends on, or what depends on it, as a tree up to three edges deep: each edge "
        "with its verb, its extraction confidence (weight) and its sources. A dependency that leads back "
        "to an entity already on the path is marked as a cycle and not expanded again.",
        ["tg-show-dependencies Skyline", "tg-show-dependencies Ledger --direction in --depth 2",
         "tg-show-dependencies Skyline --predicates 'depends on,calls' --json"])
    p.add_argument("-d", "--depth", type=int, help="how many edges away to follow, 1 to 3 [1]")
    p.add_argument("--direction", choices=["out", "in"],
                   help="out: what the entity depends on; in: what depends on it [out]")
    p.add_argument("--predicates", help="comma-separated verbs to follow instead of the configured ones, "
                   "e.g. 'depends on,calls'")
    p.add_argument("--max-edges", type=int, help="most edges to show, nearest levels first [200]")
    args = p.parse_args(argv)
    predicates = None if args.predicates is None else ",".join(
        verb.strip() for verb in args.predicates.split(",") if verb.strip())
    direction = args.direction or "out"

    def show(response: dict[str, Any], name: str) -> None:
        print_dependencies(response, name, direction)

    return _entity_command("tg-show-dependencies", args, "dependencies", show,
                           depth=args.depth, direction=args.direction, predicates=predicates,
                           **{"max-edges": args.max_edges})


def print_dependencies(response: dict[str, Any], name: str, direction: str) -> None:
    answer = response.get("dependencies") or {}
    verbs = ", ".join(answer.get("predicates", [])) or "the configured verbs"
    asked = f"What {name} depends on" if direction == "out" else f"What depends on {name}"
    root = answer.get("root")
    print(f"{asked} (following {verbs}):")
    if not root or not root.get("children"):
        print("  nothing found")
    else:
        edges: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for edge in answer.get("edges", []):
            edges.setdefault((edge["source"], edge["target"]), []).append(edge)
        _print_node(root, [], edges)
    if answer.get("cycles"):
        print("Cycles:")
        for cycle in answer["cycles"]:
            print(f"  {' → '.join(cycle)}")
    if answer.get("truncated"):
        print("(the tree was cut short at --max-edges, nearest levels first; raise it, lower --depth or name "
              "--predicates)", file=sys.stderr)


def _print_node(node: dict[str, Any], path: list[dict[str, Any]], edges: dict) -> None:
    """The node on its own line, indented by depth, with the edges that reach it from its parent."""
    line = "  " * len(path) + node["label"]
    if path:
        parent = path[-1]["entity"]
        reaching = edges.get((parent, node["entity"])) or edges.get((node["entity"], parent), [])
        verbs = ", ".join(f"{e.get('predicate-label') or e['predicate']} {e['weight']:.2f}" for e in reaching)
        sources = joined([source_text(s) for e in reaching for s in e.get("sources", [])])
        line += f"  ({verbs})" if verbs else ""
        line += f"  from {sources}" if sources else ""
    if node.get("cycle"):
        entities = [step["entity"] for step in path]
        start = entities.index(node["entity"]) if node["entity"] in entities else 0
        line += f"  (cycle: {' → '.join([*(step['label'] for step in path[start:]), node['label']])})"
    print(line)
    for child in node.get("children", []):
        _print_node(child, [*path, node], edges)


# --- tg-show-memory -------------------------------------------------------------------------------


def main_memory(argv: list[str] | None = None) -> int:
    p = _entity_parser(
        "tg-show-memory",
        "The institutional memory about an entity: the decisions taken about it, failure patterns it "
        "caused or suffered, exceptions to policy, and memories that mention it, ranked by relevance "
        "(to --query as well, when given) and recency.",
        ["tg-show-memory Skyline", "tg-show-memory Skyline --query 'why did we move to event sourcing?'",
         "tg-show-memory Ledger --limit 5 --json"])
    p.add_argument("-q", "--query", help="a question to rank the items by, besides the entity")
    p.add_argument("-l", "--limit", type=int, help="most items to show [20]")
    args = p.parse_args(argv)
    return _entity_command("tg-show-memory", args, "memory", print_memory, q=args.query, limit=args.limit)


# --- tg-intent-check ------------------------------------------------------------------------------


def main_intent(argv: list[str] | None = None) -> int:
    p = _parser(
        "tg-intent-check",
        "Whether a change (a PR's summary or diff) matches the work item it is linked to: the cosine "
        "similarity of their embeddings, a soft advisory when it falls below the threshold, and the "
        f"sentences of each side closest to the other. Exit status: 0 when they match, {MISMATCH_EXIT} when "
        "a mismatch is flagged, 1 when the check could not run.",
        ["tg-intent-check --change-file pr.md --work-item-file ticket.txt",
         "git show HEAD | tg-intent-check --change-file - --work-item 'Retry failed webhooks with backoff'",
         "tg-intent-check --change 'Cache FX rates' --work-item-file item.md --threshold 0.5 --json"])
    change = p.add_mutually_exclusive_group(required=True)
    change.add_argument("--change", help="the change as text: a PR's title and description, or a diff")
    change.add_argument("--change-file", metavar="PATH", help="read the change from a file; - reads stdin")
    item = p.add_mutually_exclusive_group(required=True)
    item.add_argument("--work-item", help="the linked work item's description as text")
    item.add_argument("--work-item-file", metavar="PATH", help="read the work item from a file; - reads stdin")
    p.add_argument("-t", "--threshold", type=float,
                   help="flag a mismatch below this similarity, -1 to 1 [the service's, 0.6]")
    args = p.parse_args(argv)
    if args.change_file == "-" and args.work_item_file == "-":
        p.error("only one of --change-file and --work-item-file can read stdin (-)")
    try:
        body = {"change": _text(args.change, args.change_file, "--change-file"),
                "work-item": _text(args.work_item, args.work_item_file, "--work-item-file"),
                "threshold": args.threshold, "collection": args.collection}
    except TraceGraphError as exc:
        print(f"tg-intent-check: error: {exc}", file=sys.stderr)
        return 1
    flagged: list[bool] = []

    async def ask(api: Api) -> None:
        response = await api.request("intent-check", {k: v for k, v in body.items() if v is not None},
                                     {"flow": args.flow_id})
        intent = response.get("intent") or {}
        flagged.append(bool(intent.get("mismatch")))
        if args.json:
            print_json(response)
        else:
            print_intent(intent)

    status = run("tg-intent-check", args, ask)
    return MISMATCH_EXIT if status == 0 and any(flagged) else status


def _text(given: str | None, path: str | None, flag: str) -> str:
    if given is not None:
        return given
    try:
        return sys.stdin.read() if path == "-" else Path(str(path)).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise TraceGraphError(f"cannot read {flag} {path}: {reason}") from None


def print_intent(intent: dict[str, Any]) -> None:
    verdict = "MISMATCH" if intent.get("mismatch") else "OK"
    print(f"similarity {intent.get('similarity', 0.0):.4f}  threshold {intent.get('threshold', 0.0):.2f}  {verdict}")
    if intent.get("advisory"):
        print(textwrap.fill(intent["advisory"], TEXT_WIDTH))
    matches = intent.get("explanation", [])
    if matches:
        print("closest sentences:")
    for match in matches:
        side = "change" if match["side"] == "change" else "work item"
        other = "work item" if side == "change" else "change"
        print(f"  {match['similarity']:.2f}  {side}: {_clip(match['sentence'])}")
        print(f"        {other}: {_clip(match['nearest'])}")
    if intent.get("model"):
        print(f"model: {intent['model']}")


def _clip(text: str, width: int = TEXT_WIDTH - 20) -> str:
    """One line of at most `width` characters.

    >>> _clip("a  b\\nc"), _clip("x" * 10, 5)
    ('a b c', 'xxxx…')
    """
    line = " ".join(text.split())
    return line if len(line) <= width else line[:width - 1] + "…"
