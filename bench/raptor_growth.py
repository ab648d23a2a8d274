"""Time per added passage of the RAPTOR tree at two sizes (synthetic vectors, offline summaries).

    .venv/bin/python bench/raptor_growth.py [--sizes 500 5000] [--batch 64] [--batches 8]

Builds a tree over N synthetic passages (unit vectors around planted topics), then adds batches
of new passages the way the raptor processor does (`tree.add`) and prints the milliseconds per
added passage. Flat figures across sizes mean the per-passage cost does not grow with the tree."""

from __future__ import annotations

import argparse
import asyncio
import time

import numpy as np

from tracegraph.base.raptor import tree as rt

DIM, TOPICS = 384, 200


def passages(rng: np.random.Generator, centres: np.ndarray, start: int, count: int) -> list[rt.Passage]:
    """`count` passages around random topics, with a sentence of text each."""
    topics = rng.integers(len(centres), size=count)
    vectors = centres[topics] + 0.4 * rng.standard_normal((count, DIM)).astype(np.float32) / np.sqrt(DIM)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [rt.Passage(f"urn:chunk:{start + i}", f"Passage {start + i} is about topic {t}. It says more.", v)
            for i, (t, v) in enumerate(zip(topics, vectors))]


async def measure(size: int, batch: int, batches: int, params: rt.TreeParams) -> tuple[float, float, int]:
    """(seconds to build, ms per added passage, summaries written per added passage)."""
    rng = np.random.default_rng(size)
    centres = rng.standard_normal((TOPICS, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    summariser = CountingSummariser()
    started = time.perf_counter()
    tree = await rt.build(passages(rng, centres, 0, size), summariser, params)
    built = time.perf_counter() - started
    summariser.calls = 0
    started = time.perf_counter()
    for n in range(batches):
        await rt.add(tree, passages(rng, centres, size + n * batch, batch), summariser, params)
    added = batch * batches
    return built, (time.perf_counter() - started) * 1000 / added, summariser.calls / added


class CountingSummariser(rt.OfflineSummariser):
    calls = 0

    async def summarise(self, texts, max_chars):
        self.calls += 1
        return await super().summarise(texts, max_chars)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--batches", type=int, default=8)
    args = parser.parse_args()
    params = rt.TreeParams()
    print(f"synthetic {DIM}-d vectors around {TOPICS} topics, offline summaries, batches of {args.batch}")
    for size in args.sizes:
        built, per_passage, summaries = asyncio.run(measure(size, args.batch, args.batches, params))
        print(f"tree of {size:>6,} passages: built in {built:6.1f} s; adding: {per_passage:6.2f} ms per passage, "
              f"{summaries:.2f} summaries per passage")


if __name__ == "__main__":
    main()
