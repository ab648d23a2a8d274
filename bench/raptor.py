"""RAPTOR summary tree (RSN-05) on public multi-hop QA text (the MuSiQue and HotpotQA samples of
/work/shared/data/multihop): every passage of a sample ("title\\ntext") is embedded with the bundled
local model, the tree is built offline (extractive summaries, no LLM), and each question's supporting
passages are looked for by

  vector top-k     the k passages nearest the question (the plain baseline);
  raptor walk      the walk's candidates (passages under the expanded clusters), ranked by passage cosine;
  collapsed tree   every node (by its centroid) and every passage scored together, the best k items
                   kept: a node takes a slot of the budget, only passages count for recall.

Printed per set: build time, nodes per level, passage recall@5/@10 (bench/multihop_metrics.py) and the
walk's mean candidate count, with the number of questions. Figures are reported, never asserted.

    .venv/bin/python bench/raptor.py                  # both sets, every question: ~2 min here (embedding)
    .venv/bin/python bench/raptor.py --limit 20 --sets hotpotqa
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import multihop_metrics as metrics
from multihop_public import DEFAULT_DATA, SETS, Dataset, load
from tracegraph.base.llm.local_embed import LocalEmbedder
from tracegraph.base.raptor.tree import (
    OfflineSummariser,
    Passage,
    Tree,
    TreeParams,
    build,
    walk,
)

KS = (5, 10)
URI = "urn:bench:passage:"  # + corpus index


# The walk's own defaults, so this benchmark's cannot drift from them.
WALK_DEFAULTS = {name: p.default for name, p in inspect.signature(walk).parameters.items()
                 if p.kind is inspect.Parameter.KEYWORD_ONLY}


@dataclass(frozen=True, slots=True)
class WalkSettings:
    threshold: float
    beam: int
    relative: float


def index_of(uri: str) -> int:
    return int(uri.removeprefix(URI))


def vector_top(question: np.ndarray, passages: np.ndarray, k: int) -> list[int]:
    return [int(i) for i in np.argsort(-(passages @ question), kind="stable")[:k]]


def walk_ranking(tree: Tree, question: np.ndarray, passages: np.ndarray, settings: WalkSettings) -> list[int]:
    found = walk(tree, question, threshold=settings.threshold, beam=settings.beam, relative=settings.relative)
    candidates = np.array([index_of(c) for c in found.candidate_chunks])
    return [int(candidates[i]) for i in np.argsort(-(passages[candidates] @ question), kind="stable")]


def collapsed_ranking(question: np.ndarray, passages: np.ndarray, nodes: np.ndarray, k: int) -> list[int]:
    """Passages among the best k of nodes and passages scored together (node rows come after passages)."""
    items = np.argsort(-(np.vstack([passages, nodes]) @ question), kind="stable")[:k]
    return [int(i) for i in items if i < len(passages)]


def recall(rankings: list[list[int]], dataset: Dataset, k: int) -> float | None:
    return metrics.mean([metrics.recall_at_k(r, q["supporting"], k) for r, q in zip(rankings, dataset.questions)])


async def measure(dataset: Dataset, embedder: LocalEmbedder, params: TreeParams, settings: WalkSettings) -> None:
    began = time.perf_counter()
    texts = [f"{p['title']}\n{p['text']}" for p in dataset.corpus]
    passages = np.asarray(await embedder.embed(texts), dtype=np.float32)
    questions = np.asarray(await embedder.embed([q["question"] for q in dataset.questions]), dtype=np.float32)
    embedded = time.perf_counter()
    tree = await build([Passage(f"{URI}{i}", t, passages[i]) for i, t in enumerate(texts)], OfflineSummariser(), params)
    built = time.perf_counter()
    nodes = np.stack([n.vector for n in tree.nodes.values()])

    walks = [walk_ranking(tree, q, passages, settings) for q in questions]
    walked = time.perf_counter()
    rows = {"vector top-k": {k: [vector_top(q, passages, k) for q in questions] for k in KS},
            f"raptor walk (beam {settings.beam}, threshold {settings.threshold}, relative {settings.relative})":
                {k: walks for k in KS},
            "collapsed tree (nodes + passages)": {k: [collapsed_ranking(q, passages, nodes, k) for q in questions]
                                                  for k in KS}}
    shape = ", ".join(f"{level}: {len(ids)}" for level, ids in tree.levels.items())
    print(f"\n{dataset.name}: {len(dataset.corpus)} passages, {len(dataset.questions)} questions; embedding "
          f"{embedded - began:.1f} s, tree build {built - embedded:.2f} s (offline summaries), "
          f"walk {1000 * (walked - built) / max(1, len(questions)):.2f} ms/question")
    print(f"  nodes per level: {shape} (branching {params.branching}, max cluster {params.max_cluster})")
    print(f"  walk candidates per question: mean {np.mean([len(w) for w in walks]):.1f}, "
          f"min {min(len(w) for w in walks)}, max {max(len(w) for w in walks)}")
    print(f"  {'method':<62}{'recall@5':>10}{'recall@10':>11}{'questions':>11}")
    for name, by_k in rows.items():
        figures = "".join(f"{recall(by_k[k], dataset, k):>{10 + (k == 10)}.3f}" for k in KS)
        print(f"  {name:<62}{figures}{len(dataset.questions):>11}")


async def main_async(args: argparse.Namespace) -> None:
    embedder = LocalEmbedder()
    settings = WalkSettings(args.threshold, args.beam, args.relative)
    try:
        for name in args.sets:
            await measure(load(args.data, name, args.limit), embedder, TreeParams(), settings)
    finally:
        await embedder.aclose()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"folder holding the samples [{DEFAULT_DATA}]")
    parser.add_argument("--sets", type=lambda s: s.split(","), default=list(SETS),
                        help=f"comma list of sets [{','.join(SETS)}]")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="ask only the first N questions of each set (the tree always holds every passage) [all]")
    parser.add_argument("--threshold", type=float, default=WALK_DEFAULTS['threshold'],
                        help=f"walk: score a branch needs [{WALK_DEFAULTS['threshold']}]")
    parser.add_argument("--beam", type=int, default=WALK_DEFAULTS['beam'],
                        help=f"walk: branches expanded per level [{WALK_DEFAULTS['beam']}]")
    parser.add_argument("--relative", type=float, default=WALK_DEFAULTS['relative'],
                        help=f"walk: share of the level's best score a branch needs [{WALK_DEFAULTS['relative']}]")
    args = parser.parse_args(argv)
    unknown = [s for s in args.sets if s not in SETS]
    if unknown:
        parser.error(f"unknown set(s) {', '.join(unknown)}; known: {', '.join(SETS)}")
    return args


def main() -> None:
    asyncio.run(main_async(parse_args()))


if __name__ == "__main__":
    main()
