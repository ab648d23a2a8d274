"""Vector index benchmark: usearch, hnswlib and faiss (HNSW) beside exact numpy search measured in the
same run, then our AnnVectorStore end to end through the VectorStore Protocol, and Qdrant local mode.

Vectors are synthetic: 384-d unit vectors from a two-level gaussian mixture (topics, and subtopics
inside them), because embedding 150k texts with the bundled model takes too long here and uniform
random vectors have no neighbourhoods to find. Recall is also given for queries away from the data's
clusters ("off"), the harder case. `--real N` adds a run on N sentence embeddings from the bundled
model. Every library gets the store's HNSW settings (M=16, ef_construction=128, ef_search=128).
Prints figures; never asserts on timing. hnswlib and faiss are candidates, not dependencies: a
missing one is skipped.

    .venv/bin/python bench/vector_index.py                         # 150k, with Qdrant local: 10-20 min here
    .venv/bin/python bench/vector_index.py --sizes 1000000 --skip-qdrant --skip-rebuild   # ~35 min
    .venv/bin/python bench/vector_index.py --sizes 20000 --real 20000 --libraries usearch
"""


from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tracegraph.base.stores.ann import AnnVectorStore
from tracegraph.base.stores.ann_index import CONNECTIVITY, EXPANSION_ADD, EXPANSION_SEARCH
from tracegraph.base.stores.protocol import CollectionRef, VectorItem, VectorStore

DIM = 384
K = 10
REF = CollectionRef("bench", "vectors")
Search = Callable[[np.ndarray], np.ndarray]  # one query -> ids of its K nearest


def mixture(count: int, seed: int, *, dim: int = DIM, topics: int = 500, subtopics: int = 20,
            centres_seed: int = 0) -> np.ndarray:
    """Unit vectors around subtopic centres that sit around topic centres (the same for every `seed`)."""
    centres = np.random.default_rng(centres_seed)
    topic = centres.normal(size=(topics, dim))
    sub = np.repeat(topic, subtopics, axis=0) + 0.7 * centres.normal(size=(topics * subtopics, dim))
    rng = np.random.default_rng(seed)
    out = np.empty((count, dim), dtype=np.float32)
    for start in range(0, count, 100_000):
        n = min(100_000, count - start)
        points = sub[rng.integers(0, len(sub), size=n)] + 0.6 * rng.normal(size=(n, dim))
        out[start:start + n] = points / np.linalg.norm(points, axis=1, keepdims=True)
    return out


def exact_top(data: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """The true K nearest (by cosine: the rows are unit vectors) of every query, by blocked brute force."""
    best_sims = np.full((len(queries), K), -np.inf, dtype=np.float32)
    best_ids = np.zeros((len(queries), K), dtype=np.int64)
    for start in range(0, len(data), 100_000):
        sims = queries @ data[start:start + 100_000].T
        sims = np.concatenate([best_sims, sims], axis=1)
        ids = np.concatenate([best_ids, np.arange(start, start + sims.shape[1] - K)[None].repeat(len(queries), 0)], 1)
        keep = np.argpartition(-sims, K, axis=1)[:, :K]
        best_sims, best_ids = np.take_along_axis(sims, keep, 1), np.take_along_axis(ids, keep, 1)
    return best_ids


def tenth_cosine(data: np.ndarray, queries: np.ndarray, truth: np.ndarray) -> float:
    """How close the K-th true neighbour is: near 0, the top K are hardly nearer than the rest."""
    return float(np.mean([np.min(data[ids] @ query) for ids, query in zip(truth, queries)]))


def numpy_search(data: np.ndarray) -> Search:
    def search(query: np.ndarray) -> np.ndarray:
        sims = data @ query
        top = np.argpartition(-sims, K)[:K]
        return top[np.argsort(-sims[top])]
    return search


def recall(found: list[np.ndarray], truth: np.ndarray) -> float:
    """recall@K: the share of the true K nearest that were found."""
    return sum(len(set(f.tolist()) & set(t.tolist())) for f, t in zip(found, truth)) / truth.size


def timed(search: Search, queries: np.ndarray) -> tuple[list[np.ndarray], float, float]:
    """Each query alone, one after another: (answers, p50 ms, p99 ms)."""
    answers, times = [], []
    for query in queries:
        start = time.perf_counter()
        answers.append(np.asarray(search(query)))
        times.append((time.perf_counter() - start) * 1000)
    return answers, statistics.median(times), float(np.percentile(times, 99))


def build_usearch(data: np.ndarray) -> Search:
    from usearch.index import Index
    index = Index(ndim=data.shape[1], metric="cos", dtype="f32", connectivity=CONNECTIVITY,
                  expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)
    index.add(np.arange(len(data), dtype=np.uint64), data, threads=0)
    return lambda query: index.search(query, K, threads=1).keys


def build_hnswlib(data: np.ndarray) -> Search:
    import hnswlib
    index = hnswlib.Index(space="cosine", dim=data.shape[1])
    index.init_index(max_elements=len(data), ef_construction=EXPANSION_ADD, M=CONNECTIVITY)
    index.add_items(data, np.arange(len(data)), num_threads=-1)
    index.set_ef(EXPANSION_SEARCH)
    return lambda query: index.knn_query(query, k=K, num_threads=1)[0][0]


def build_faiss(data: np.ndarray) -> Search:
    import faiss
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    index = faiss.IndexHNSWFlat(data.shape[1], CONNECTIVITY, faiss.METRIC_INNER_PRODUCT)  # unit rows: IP = cosine
    index.hnsw.efConstruction = EXPANSION_ADD
    index.add(data)
    index.hnsw.efSearch = EXPANSION_SEARCH
    faiss.omp_set_num_threads(1)  # single queries: threads only add overhead
    return lambda query: index.search(query[None], K)[1][0]


LIBRARIES: dict[str, Callable[[np.ndarray], Search]] = {
    "usearch": build_usearch, "hnswlib": build_hnswlib, "faiss": build_faiss}


async def fill(store: VectorStore, data: np.ndarray, batch: int = 1_000) -> float:
    """Upsert every row as `urn:v:<i>` with a small payload; returns seconds."""
    start = time.perf_counter()
    for first in range(0, len(data), batch):
        await store.upsert(REF, "entity", [VectorItem(f"urn:v:{i}", data[i], {"document": f"urn:doc:{i // 20}"})
                                           for i in range(first, min(first + batch, len(data)))])
    return time.perf_counter() - start


async def store_searches(store: VectorStore, queries: np.ndarray) -> tuple[list[np.ndarray], float, float]:
    answers, times = [], []
    for query in queries:
        start = time.perf_counter()
        hits = await store.search(REF, "entity", query.tolist(), limit=K)
        times.append((time.perf_counter() - start) * 1000)
        answers.append(np.array([int(h.id.rsplit(":", 1)[1]) for h in hits]))
    return answers, statistics.median(times), float(np.percentile(times, 99))


async def measure_store(data: np.ndarray, queries: np.ndarray, truth: np.ndarray, off: np.ndarray,
                        off_truth: np.ndarray, work: Path, skip_rebuild: bool) -> list[str]:
    """Through the VectorStore Protocol: upsert in batches of 1,000, searches, then reopening."""
    folder = work / "ann"
    async with AnnVectorStore(folder) as store:
        seconds = await fill(store, data)
        found, p50, p99 = await store_searches(store, queries)
        off_found, _, _ = await store_searches(store, off)
    lines = [f"  AnnVectorStore (ours)    upsert {seconds:7.1f} s ({len(data) / seconds:,.0f}/s)  "
             f"recall@10 {recall(found, truth):.3f} (off {recall(off_found, off_truth):.3f})  "
             f"p50 {p50:6.2f} ms  p99 {p99:6.2f} ms"]
    reopen = [("reopen, saved index", lambda: None)]
    if not skip_rebuild:
        reopen.append(("reopen after kill -9, no index file", lambda: shutil.rmtree(folder / "index")))
    for label, damage in reopen:
        damage()
        start = time.perf_counter()
        async with AnnVectorStore(folder) as store:
            await store.search(REF, "entity", queries[0].tolist(), limit=K)
            lines.append(f"    first search after {label}: {time.perf_counter() - start:.1f} s")
    shutil.rmtree(folder)
    return lines


async def measure_qdrant(data: np.ndarray, queries: np.ndarray, truth: np.ndarray, work: Path) -> str:
    from tracegraph.base.stores.qdrant import QdrantVectorStore
    async with QdrantVectorStore(path=work / "qdrant") as store:
        seconds = await fill(store, data)
        found, p50, p99 = await store_searches(store, queries)
    shutil.rmtree(work / "qdrant")
    return (f"  Qdrant local mode        upsert {seconds:7.1f} s ({len(data) / seconds:,.0f}/s)  "
            f"recall@10 {recall(found, truth):.3f}  p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  ({len(queries)} queries)")


TOPIC_WORDS = ("service database cache queue gateway team owner region cluster index model pipeline storage "
               "billing search auth payment report invoice user session token metric alert deploy release "
               "network latency error backup replica schema migration ingest graph vector embed").split()
OTHER_WORDS = ("garden river mountain bread coffee music painting football holiday winter kitchen forest "
               "village bicycle library theatre harbour recipe orchestra island").split()


async def real_sentences(count: int, words: list[str], seed: int) -> np.ndarray:
    """Embeddings of generated word-salad sentences from the bundled model (a few hundred a second here)."""
    from tracegraph.base.llm.local_embed import LocalEmbedder
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(words, size=rng.integers(5, 14))) + f" {i % 997}" for i in range(count)]
    embedder = LocalEmbedder(batch_size=64)
    try:
        matrix = np.array(await embedder.embed(texts), dtype=np.float32)
    finally:
        await embedder.aclose()
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def run_size(name: str, data: np.ndarray, queries: np.ndarray, off: np.ndarray, args: argparse.Namespace) -> None:
    """Every library, then our store and Qdrant, on `data`; `off` are queries away from the data's clusters."""
    print(f"\n{name}: {len(data):,} vectors x {data.shape[1]}, {len(queries)} queries, recall@{K} against exact"
          f" (off: {len(off)} queries away from the data's clusters)")
    start = time.perf_counter()
    truth, off_truth = exact_top(data, queries), exact_top(data, off)
    timing = queries[:args.exact_queries]
    _, p50, p99 = timed(numpy_search(data), timing)
    print(f"  exact numpy (baseline)   ground truth {time.perf_counter() - start:5.1f} s"
          f"{'':24}p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  ({len(timing)} queries)")
    print(f"    cosine of the 10th nearest, mean: {tenth_cosine(data, queries, truth):.2f}"
          f" (off {tenth_cosine(data, off, off_truth):.2f})")
    for library in args.libraries:
        gc.collect()
        start = time.perf_counter()
        try:
            search = LIBRARIES[library](data)
        except ImportError as exc:  # hnswlib and faiss are candidates only, not dependencies
            print(f"  {library:<24} skipped: {exc} (pip install {'faiss-cpu' if library == 'faiss' else library})")
            continue
        built = time.perf_counter() - start
        found, p50, p99 = timed(search, queries)
        off_found = [np.asarray(search(query)) for query in off]
        print(f"  {library:<24} build  {built:7.1f} s ({len(data) / built:,.0f}/s)  "
              f"recall@10 {recall(found, truth):.3f} (off {recall(off_found, off_truth):.3f})  "
              f"p50 {p50:6.2f} ms  p99 {p99:6.2f} ms")
        del search
    with tempfile.TemporaryDirectory(prefix="tg-bench-vectors-") as work:
        if not args.skip_store:
            for line in asyncio.run(measure_store(data, queries, truth, off, off_truth, Path(work), args.skip_rebuild)):
                print(line)
        if not args.skip_qdrant and len(data) <= args.qdrant_max:
            print(asyncio.run(measure_qdrant(data, queries[:args.qdrant_queries], truth[:args.qdrant_queries],
                                             Path(work))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="150000", help="comma-separated vector counts, e.g. 150000,1000000 [150000]")
    parser.add_argument("--queries", type=int, default=1_000, help="queries per library [1000]")
    parser.add_argument("--exact-queries", type=int, default=100, help="queries timed on exact numpy [100]")
    parser.add_argument("--libraries", default="usearch,hnswlib,faiss", type=lambda s: s.split(","),
                        help="of usearch, hnswlib, faiss [all three]")
    parser.add_argument("--skip-store", action="store_true", help="skip our AnnVectorStore end to end")
    parser.add_argument("--skip-qdrant", action="store_true", help="skip Qdrant local mode")
    parser.add_argument("--skip-rebuild", action="store_true", help="skip timing a rebuild of our index from SQLite")
    parser.add_argument("--qdrant-max", type=int, default=150_000, help="largest size Qdrant local is run at")
    parser.add_argument("--qdrant-queries", type=int, default=20, help="queries on Qdrant local (~1.5 s each)")
    parser.add_argument("--real", type=int, default=0, metavar="N",
                        help="also run on N sentence embeddings from the bundled model (20000: ~2 min)")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; HNSW M={CONNECTIVITY} ef_construction={EXPANSION_ADD} ef_search={EXPANSION_SEARCH};"
          f" synthetic clustered vectors (two-level gaussian mixture), not real embeddings")
    for size in (int(s) for s in args.sizes.split(",")):
        data = mixture(size, seed=1)
        run_size("synthetic", data, mixture(args.queries, seed=2), mixture(args.queries, seed=3, centres_seed=9), args)
        del data
        gc.collect()
    if args.real:
        vectors = asyncio.run(real_sentences(args.real + args.queries, TOPIC_WORDS, seed=3))
        off = asyncio.run(real_sentences(args.queries, OTHER_WORDS, seed=4))  # sentences on other topics
        run_size("bundled-model embeddings", vectors[args.queries:], vectors[:args.queries], off, args)


if __name__ == "__main__":
    main()
