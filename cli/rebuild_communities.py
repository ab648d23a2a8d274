"""`tg-rebuild-communities`: recompute a collection's communities and their reports (or its RAPTOR
tree) from scratch, printing progress, or only show what they hold. Both are kept current from graph
updates anyway; a rebuild is for changed settings, a newly configured LLM, or a fresh start."""

from __future__ import annotations

from tracegraph.cli._client import add_collection_arguments, command_parser, run
from tracegraph.cli.api import Api


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-rebuild-communities", "Rebuild a collection's Leiden communities and community reports "
                       "(global search), or its RAPTOR summary tree, from its knowledge graph.")
    add_collection_arguments(p)
    p.add_argument("--raptor", action="store_true", help="rebuild the RAPTOR summary tree instead of the communities")
    p.add_argument("--status", action="store_true", help="only show what the collection holds now; rebuild nothing")
    args = p.parse_args(argv)
    service = "raptor" if args.raptor else "community"

    async def body(api: Api) -> None:
        request = {"operation": "status" if args.status else "rebuild", "collection": args.collection}
        final: dict = {}
        async for message in api.stream(args.flow_id, service, request):
            if message.get("progress"):
                print(message["progress"], flush=True)
            final = message
        print_status(service, args.collection, final)

    return run("tg-rebuild-communities", args, body)


def print_status(service: str, collection: str, final: dict) -> None:
    what = "RAPTOR tree" if service == "raptor" else "communities"
    counts = final.get("counts") or {}
    if not any(counts.values()):
        print(f"{collection}: no {what} yet (the graph may be empty)")
        print_coverage(service, final)
        return
    print(f"{collection}: {what}: " + ", ".join(f"{name} {count:,}" for name, count in sorted(counts.items())))
    details = [f"last run {final['mode']}" if final.get("mode") else "",
               f"in {final['duration_ms']:,} ms" if final.get("duration_ms") is not None else "",
               f"summaries: {final['method']}" if final.get("method") else ""]
    if any(details):
        print("  " + "; ".join(d for d in details if d))
    print_coverage(service, final)


def print_coverage(service: str, final: dict) -> None:
    """`coverage: 92 of 92 passages in the tree (current)`: what the structure covers of the collection."""
    coverage, kind = final.get("coverage") or {}, "passages" if service == "raptor" else "entities"
    if f"{kind}-total" not in coverage:
        return
    where = "in the tree" if service == "raptor" else "in communities"
    line = f"  coverage: {coverage[f'{kind}-covered']:,} of {coverage[f'{kind}-total']:,} {kind} {where}"
    if coverage.get(f"{kind}-gone-but-kept"):
        line += f", {coverage[f'{kind}-gone-but-kept']:,} gone but kept"
    print(line + (f" ({final['state']})" if final.get("state") else ""))
