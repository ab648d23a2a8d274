"""Fusion weights learned on one public sample and checked on the other.

Search fuses its strategies by weighted RRF; the weights per query type live in
base/retrieval/router.py (FUSION_WEIGHTS). This benchmark asks the multi-hop questions of both
samples (../shared/data/multihop) through `search` with each candidate weighting (the request's
`fusion-weights` field), beside the router's own weights and the best single strategy (`ppr`), using
bench/multihop_public.py's stack, ingest and scoring. The candidate with the best perfect@8 on one
sample (ties: recall@5, then recall@8) is then read on the other sample: a weighting that only wins
where it was chosen is not a better weighting. Figures are printed (and written with --json).

    .venv/bin/python bench/fusion_weights.py --data-dir /tmp/bench/mh --reuse
    .venv/bin/python bench/fusion_weights.py --from-json /tmp/fusion.json   # re-read a finished run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import multihop_public  # noqa: E402

# The router's weights, the best single strategy, and weightings that lean further on the passage walk.
CANDIDATES = ("search", "search:ppr", "search@ppr=6", "search@ppr=12", "search@ppr=30",
              "search@ppr=6+graph=3", "search@ppr=12+vector=0.5+bm25=0.5")


def key(figures: dict[str, Any]) -> tuple[float, float, float]:
    return tuple(figures.get(k) or 0.0 for k in ("perfect@8", "recall@5", "recall@8"))


def chosen(report: dict[str, Any], learn: str) -> str:
    """The fused mode (not a single strategy) that scores best on the `learn` sample."""
    modes = report["sets"][learn]["modes"]
    fused = [m for m in modes if m == "search" or m.startswith("search@")]
    return max(fused, key=lambda m: key(modes[m]))


def print_cross_check(report: dict[str, Any]) -> None:
    sets = list(report["sets"])
    print(f"\n{'mode':<36}" + "".join(f"{s + ' P@8':>16}{'R@5':>7}" for s in sets))
    for mode in report["sets"][sets[0]]["modes"]:
        row = "".join(f"{report['sets'][s]['modes'][mode]['perfect@8']:>16.3f}"
                      f"{report['sets'][s]['modes'][mode]['recall@5']:>7.3f}" for s in sets)
        print(f"{mode:<36}{row}")
    for learn in sets:
        for check in (s for s in sets if s != learn):
            best = chosen(report, learn)
            single = report["sets"][check]["modes"].get("search:ppr", {})
            got = report["sets"][check]["modes"][best]
            verdict = "at least as good as" if key(got) >= key(single) else "WORSE than"
            print(f"learned on {learn}: {best}; on {check} perfect@8 {got['perfect@8']:.3f}, recall@5 "
                  f"{got['recall@5']:.3f} — {verdict} ppr alone ({single.get('perfect@8', 0):.3f}, "
                  f"{single.get('recall@5', 0):.3f})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from-json", type=Path, help="read a finished run's figures instead of asking")
    parser.add_argument("--data-dir", type=Path, help="the multihop benchmark's stores (see its --data-dir)")
    parser.add_argument("--reuse", action="store_true", help="ask against the stores --data-dir already holds")
    parser.add_argument("--questions", type=int, help="ask only the first N questions of each set [all]")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    args = parser.parse_args(argv)
    if args.from_json:
        report = json.loads(args.from_json.read_text())
    else:
        args.json = args.json or Path(tempfile.mkstemp(prefix="tg-fusion-", suffix=".json")[1])
        forwarded = ["--modes", ",".join(CANDIDATES)]
        for flag, value in (("--data-dir", args.data_dir), ("--questions", args.questions), ("--json", args.json)):
            if value is not None:
                forwarded += [flag, str(value)]
        inner = multihop_public.parse_args([*forwarded, *(["--reuse"] if args.reuse else [])])
        asyncio.run(multihop_public.main_async(inner))
        report = json.loads(args.json.read_text())
    print_cross_check(report)


if __name__ == "__main__":
    main()
