"""How often the rule router picks the labelled query type, on bench/data/router_questions.json:
architecture questions of every type and encyclopedic multi-hop ones, all written for this list.
Prints accuracy overall and per type, a confusion table and the misrouted questions. Another bench
script can import `router_accuracy` to report the figure next to its own."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from tracegraph.base.retrieval.router import QUERY_TYPES, route_by_rules

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "router_questions.json"


def router_accuracy(path: str | Path | None = None) -> tuple[float, list[dict]]:
    """(share routed right, one row per question: question, type, routed, method)."""
    labelled = json.loads(Path(path or DEFAULT_PATH).read_text(encoding="utf-8"))
    rows = []
    for item in labelled:
        route = route_by_rules(item["question"])
        rows.append({"question": item["question"], "type": item["type"],
                     "routed": route.query_type, "method": route.method})
    right = sum(r["type"] == r["routed"] for r in rows)
    return (right / len(rows) if rows else 0.0), rows


def report(accuracy: float, rows: list[dict]) -> None:
    print(f"rule router: {accuracy:.3f} of {len(rows)} questions routed to their labelled type")
    for kind in QUERY_TYPES:
        mine = [r for r in rows if r["type"] == kind]
        if mine:
            share = sum(r["routed"] == kind for r in mine) / len(mine)
            print(f"  {kind:<11} {share:.3f}  ({len(mine)} questions)")
    pairs = Counter((r["type"], r["routed"]) for r in rows)
    print("\nconfusion (rows: labelled, columns: routed)")
    print(" " * 12 + "".join(f"{k[:10]:>11}" for k in QUERY_TYPES))
    for kind in QUERY_TYPES:
        print(f"{kind:<12}" + "".join(f"{pairs[(kind, routed)]:>11}" for routed in QUERY_TYPES))
    wrong = [r for r in rows if r["type"] != r["routed"]]
    if wrong:
        print(f"\nmisrouted ({len(wrong)})")
        for r in wrong:
            print(f"  [{r['type']} -> {r['routed']}] {r['question']}\n      {r['method']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", help=f"labelled questions [{DEFAULT_PATH.name}]")
    report(*router_accuracy(parser.parse_args().path))


if __name__ == "__main__":
    main()
