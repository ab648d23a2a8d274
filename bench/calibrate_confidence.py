"""Fit and check the search service's confidence, and compare fusion weights, on the public samples.

Reads a data directory that bench/multihop_public.py ingested (--data-dir DIR; nothing is ingested
here) and runs the search pipeline in-process over those stores (no bus: the same pipeline and
strategies as the service, through base/retrieval/local.py), offline, for every question.

- Calibration: for each answer it records the confidence signals (base/retrieval/confidence.py) and
  whether the offline answer contains the gold answer or an alias. A logistic regression is fitted
  on the --fit set; the fitted weights are printed (paste them into confidence.WEIGHTS/BIAS), and
  for every set the gold rate of answers with and without the warning and the AUROC of confidence
  are printed, with the shipped weights and with the fitted ones.
- Fusion (--fusion): source recall@2/5/8 and perfect@8 of the fused search order under the shipped
  per-type weights and under equal weights, beside `ppr` alone.

Prints figures; asserts nothing. Stop any stack using DIR first (its stores lock their folders).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import multihop_metrics as metrics  # noqa: E402
from multihop_public import DEFAULT_DATA, SETS, map_path  # noqa: E402

from tracegraph.base.llm.local_embed import LocalEmbedder  # noqa: E402
from tracegraph.base.retrieval import confidence, router  # noqa: E402
from tracegraph.base.retrieval.local import LocalRetrievalTools  # noqa: E402
from tracegraph.base.retrieval.rerank import EmbeddingReranker  # noqa: E402
from tracegraph.base.stores.keyword import KeywordIndex  # noqa: E402
from tracegraph.base.stores.oxigraph import OxigraphTripleStore  # noqa: E402
from tracegraph.base.stores.passages import PassageIndex  # noqa: E402
from tracegraph.base.stores.protocol import CollectionRef  # noqa: E402
from tracegraph.base.stores.qdrant import QdrantVectorStore  # noqa: E402
from tracegraph.flow.search.pipeline import SearchFinished, SearchPipeline  # noqa: E402
from tracegraph.flow.search.strategies import Limits  # noqa: E402


async def answers(data_dir: Path, name: str, questions: list[dict], embedder, strategies=None) -> list[dict]:
    """One row per question: signals, shipped confidence, warning, gold, and the ranked source passages."""
    documents = json.loads(map_path(data_dir, name).read_text())["documents"]
    stores = (OxigraphTripleStore(data_dir / "triples"), QdrantVectorStore(path=data_dir / "vectors" / "entity"),
              QdrantVectorStore(path=data_dir / "vectors" / "chunk"), KeywordIndex(data_dir / "keywords"),
              PassageIndex(data_dir / "passages"))
    triples, entities, chunks, keywords, passages = stores
    tools = LocalRetrievalTools(CollectionRef("default", name), triples, entities, keywords, embedder,
                                chunk_vectors=chunks, passages=passages)
    rows = []
    try:
        for question in questions:
            pipeline = SearchPipeline(tools, Limits(), reranker=EmbeddingReranker(tools.embed), strategies=strategies)
            pipeline.llm = False
            done = [s async for s in pipeline.run(question["question"]) if isinstance(s, SearchFinished)][0]
            block = done.confidence
            rows.append({"signals": dict(block.signals), "confidence": block.confidence,
                         "warning": block.low_confidence_warning,
                         "gold": metrics.contains_gold(done.answer, [question["answer"], *question.get("aliases", [])]),
                         "ranked": [documents[d] for d, _ in done.sources if d in documents],
                         "supporting": question["supporting"]})
    finally:
        for store in stores:
            await store.aclose()
    return rows


def fit(rows: list[dict], steps: int = 5000, rate: float = 0.5, l2: float = 0.01) -> tuple[dict[str, float], float]:
    """Logistic regression of gold on the signals, by gradient descent (a few features, ~100 rows)."""
    x = np.array([[r["signals"][s] for s in confidence.SIGNALS] for r in rows], dtype=float)
    y = np.array([1.0 if r["gold"] else 0.0 for r in rows])
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        w -= rate * (x.T @ (p - y) / len(y) + l2 * w)
        b -= rate * float(np.mean(p - y))
    return {s: round(float(v), 3) for s, v in zip(confidence.SIGNALS, w)}, round(b, 3)


def report(name: str, rows: list[dict], weights: dict[str, float], bias: float, label: str) -> None:
    scores = [confidence.calibrated(r["signals"], weights, bias) for r in rows]
    golds = [r["gold"] for r in rows]
    warned = [s < confidence.WARN_BELOW or r["warning"] for s, r in zip(scores, rows)]
    rate = lambda flags: metrics.mean([g for g, f in zip(golds, flags) if f])  # noqa: E731
    print(f"  {name:<9} {label:<16} AUROC {metrics.auroc(scores, golds) or 0:.3f}   gold rate: warned "
          f"{sum(warned):>3} × {rate(warned) or 0:.3f}, unwarned {len(rows) - sum(warned):>3} × "
          f"{rate([not w for w in warned]) or 0:.3f}   mean confidence {np.mean(scores):.3f} vs gold {np.mean(golds):.3f}")


def ranking(name: str, label: str, rows: list[dict]) -> None:
    figures = [metrics.recall_at_k(r["ranked"], r["supporting"], k) for k in (2, 5, 8) for r in rows]
    n = len(rows)
    r2, r5, r8 = (sum(figures[i * n:(i + 1) * n]) / n for i in range(3))
    p8 = sum(metrics.perfect_at_k(r["ranked"], r["supporting"], 8) for r in rows) / n
    print(f"  {name:<9} {label:<44} R@2 {r2:.3f}  R@5 {r5:.3f}  R@8 {r8:.3f}  P@8 {p8:.3f}")


async def main_async(args: argparse.Namespace) -> None:
    embedder = LocalEmbedder()
    sets = args.sets.split(",")
    questions = {n: json.loads((args.data / SETS[n]).read_text())["questions"][: args.questions] for n in sets}
    rows = {n: await answers(args.data_dir, n, questions[n], embedder) for n in sets}
    weights, bias = fit(rows[args.fit])
    print(f"confidence signals {confidence.SIGNALS}")
    print(f"fitted on {args.fit}: WEIGHTS = {weights}, BIAS = {bias}")
    print(f"shipped:   WEIGHTS = {confidence.WEIGHTS}, BIAS = {confidence.BIAS} (warning below {confidence.WARN_BELOW})")
    for name in sets:
        report(name, rows[name], confidence.WEIGHTS, confidence.BIAS, "shipped weights")
        report(name, rows[name], weights, bias, f"fitted on {args.fit}")
    if args.fusion:
        print(f"\nfusion weights per query type (shipped): {router.FUSION_WEIGHTS}")
        shipped = dict(router.FUSION_WEIGHTS)
        for name in sets:
            ranking(name, "search, router + shipped fusion weights", rows[name])
            router.FUSION_WEIGHTS.clear()
            ranking(name, "search, router + equal fusion weights",
                    await answers(args.data_dir, name, questions[name], embedder))
            router.FUSION_WEIGHTS.update(shipped)
            ranking(name, "search, ppr alone", await answers(args.data_dir, name, questions[name], embedder, ["ppr"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True, help="a directory bench/multihop_public.py ingested")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"folder of the samples [{DEFAULT_DATA}]")
    parser.add_argument("--sets", default="musique,hotpotqa", help="comma list of sets [musique,hotpotqa]")
    parser.add_argument("--fit", default="musique", help="the set the weights are fitted on [musique]")
    parser.add_argument("--questions", type=int, help="only the first N questions of each set")
    parser.add_argument("--fusion", action="store_true", help="also compare fusion weights (three more passes)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
