"""Retrieval quality and latency of the search service's strategies.

Quality: the multi-hop corpus (bench/multihop_corpus.py, 30 generated documents, 260 questions with
gold supporting facts) plus 22 hand-written questions over the sample corpus are ingested through
the real pipeline (chunker, offline extraction, embeddings, keyword index). Each question is then
retrieved with every strategy, and recall@5 / @10 of its gold facts is reported for vector-only,
BM25-only, graph-only, NL→SPARQL-only and the RRF fusions, before and after reranking; with
--llm-url also with LLM HyDE (offline, HyDE's stand-in is pseudo-relevance feedback, reported as such).

Latency: p50/p95 per strategy on a generated graph of --edges edges (default 1M), with a keyword
index of all its facts and a vector per entity. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import multihop_corpus  # noqa: E402
import synthetic_graph  # noqa: E402

from tracegraph.base.llm.completion import Completion  # noqa: E402
from tracegraph.base.llm.local_embed import LocalEmbedder  # noqa: E402
from tracegraph.base.provenance.uris import entity_uri, relation_uri  # noqa: E402
from tracegraph.base.provenance.vocab import RDFS  # noqa: E402
from tracegraph.base.retrieval import router  # noqa: E402
from tracegraph.base.retrieval.fusion import reciprocal_rank_fusion  # noqa: E402
from tracegraph.base.retrieval.rerank import EmbeddingReranker  # noqa: E402
from tracegraph.base.settings import RuntimeSettings  # noqa: E402
from tracegraph.base.stores.keyword import KeywordIndex  # noqa: E402
from tracegraph.base.stores.passages import PassageIndex  # noqa: E402
from tracegraph.base.stores.oxigraph import OxigraphTripleStore  # noqa: E402
from tracegraph.base.stores.protocol import CollectionRef, VectorItem  # noqa: E402
from tracegraph.base.stores.ann import AnnVectorStore  # noqa: E402
from tracegraph.base.stores.qdrant import QdrantVectorStore  # noqa: E402
from tracegraph.base.provenance.vocab import READABLE_PREDICATES  # noqa: E402
from tracegraph.cli.api import Api  # noqa: E402
from tracegraph.cli.library_upload import process, wait_for_extraction  # noqa: E402
from tracegraph.base.retrieval.local import LocalRetrievalTools  # noqa: E402
from tracegraph.flow.search.pipeline import SearchPipeline  # noqa: E402
from tracegraph.flow.search.strategies import Context, Limits  # noqa: E402
from tracegraph.launch.registry import PROCESSORS  # noqa: E402
from tracegraph.launch.stack import Stack, ensure_flow  # noqa: E402
from tracegraph.schemas.rdf import LiteralTerm, Triple, iri, literal  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "launch" / "corpus"
SAMPLE_GOLD = Path(__file__).resolve().parent / "data" / "sample_corpus_gold.json"
SINGLE = ("vector", "bm25", "graph", "sparql")


# ---------------------------------------------------------------- ingest through the real pipeline

async def ingest(data_dir: Path) -> None:
    """Every document through the default flow on the in-process bus, into collection "multihop"
    (generated corpus) and "sample" (launch/corpus)."""
    from tracegraph.base.bus.inproc import InprocBackend
    backend = InprocBackend()
    settings = RuntimeSettings(data_dir=data_dir, gateway_port=0, request_timeout=120, log_level="WARNING")
    async with Stack(backend, settings, list(PROCESSORS)) as stack:
        await ensure_flow(backend, "default", "default")
        api = Api(f"http://127.0.0.1:{stack['gateway'].port}/")
        batches = {"multihop": multihop_corpus.documents(), "sample": [
            (p.stem, p.read_text()) for p in sorted(CORPUS.glob("*.md"))]}
        for collection, documents in batches.items():
            ids = []
            for title, text in documents:
                reply = await api.request("librarian", {
                    "operation": "add-document", "collection": collection,
                    "document-metadata": {"id": "", "kind": "text/markdown", "title": title, "collection": collection},
                    "content": base64.b64encode(text.encode()).decode()})
                ids.append(reply["document-metadata"]["id"])
                await process(api, ids[-1], "default", collection)
            chunks = await wait_for_extraction(api, "default", ids, collection, timeout=900)
            print(f"  ingested {len(ids)} documents ({chunks} chunks) into '{collection}'", flush=True)
        await asyncio.sleep(3)  # the keyword index follows the triples writer's graph-update events
    await backend.aclose()


# ---------------------------------------------------------------- quality

def gold_key(fact: list[str]) -> tuple[str, str, str]:
    return tuple(x.strip().lower() for x in fact)


async def labelled(tools: LocalRetrievalTools, triples: list[Triple], cache: dict[str, str]) -> list[tuple]:
    out = []
    for t in triples:
        parts = []
        for term in (t.s, t.p, t.o):
            if isinstance(term, LiteralTerm):
                parts.append(term.value.lower())
                continue
            if term.iri not in cache:
                found = await tools.labels([term.iri])
                cache[term.iri] = (found.get(term.iri) or READABLE_PREDICATES.get(term.iri) or term.iri).lower()
            parts.append(cache[term.iri])
        out.append(tuple(parts))
    return out


def recall(ranked: list[tuple], gold: set[tuple], k: int) -> float:
    return len(gold & set(ranked[:k])) / len(gold)


async def quality(data_dir: Path, embedder, llm_url: str | None, limit: int | None) -> None:
    triples = OxigraphTripleStore(data_dir / "triples")
    vectors = QdrantVectorStore(path=data_dir / "vectors" / "entity")
    chunks = QdrantVectorStore(path=data_dir / "vectors" / "chunk")
    passages = PassageIndex(data_dir / "passages")
    keywords = KeywordIndex(data_dir / "keywords")
    complete = openai_completion(llm_url) if llm_url else None
    sets = {"multihop": multihop_corpus.questions(), "sample": json.loads(SAMPLE_GOLD.read_text())}
    scores: dict[str, dict[str, list[float]]] = {}
    try:
        for collection, items in sets.items():
            ref = CollectionRef("default", collection)
            tools = LocalRetrievalTools(ref, triples, vectors, keywords, embedder, complete, chunk_vectors=chunks,
                                        passages=passages)
            labels: dict[str, str] = {}
            for item in items[:limit]:
                rows = await rankings(tools, item["question"], hyde_llm=complete is not None)
                gold = {gold_key(g) for g in item["gold"]}
                for name, ranked in rows.items():
                    text = await labelled(tools, ranked, labels)
                    for k in (5, 10):
                        scores.setdefault(f"{collection}|{name}", {}).setdefault(f"r@{k}", []).append(
                            recall(text, gold, k))
            print(f"  scored {min(len(items), limit or len(items))} questions of '{collection}'", flush=True)
    finally:
        for store in (triples, vectors, keywords, chunks, passages):
            await store.aclose()
    for collection in sets:
        print(f"\n{collection}: recall of gold supporting facts (mean over questions)")
        print(f"  {'strategy':<44} {'recall@5':>9} {'recall@10':>10}")
        for key, values in scores.items():
            if key.startswith(collection + "|"):
                name = key.split("|", 1)[1]
                print(f"  {name:<44} {statistics.mean(values['r@5']):>9.3f} {statistics.mean(values['r@10']):>10.3f}")


async def rankings(tools: LocalRetrievalTools, question: str, hyde_llm: bool) -> dict[str, list[Triple]]:
    """Each strategy's own ranking, the fusions, and the reranked fusion, for one question."""
    pipeline = SearchPipeline(tools, Limits(fetch=30), reranker=EmbeddingReranker(tools.embed), hyde=False)
    pipeline.llm = False  # the router and NL→SPARQL run on rules and templates; HyDE is measured apart
    route = router.route_by_rules(question)
    ctx = await pipeline.context(question, route)
    runs, _ = await pipeline.retrieve(ctx, SINGLE, route.hops)
    out = {f"{name} only": [t for t, _ in run.ranked] for name, run in runs.items()}
    passage_walk = (await pipeline.retrieve(ctx, ("ppr",), route.hops))[0]["ppr"]
    out["ppr only (passages by PageRank, their facts)"] = [t for t, _ in passage_walk.ranked]
    three = reciprocal_rank_fusion({n: [t for t, _ in runs[n].ranked] for n in ("vector", "bm25", "graph")})
    four = reciprocal_rank_fusion({n: [t for t, _ in r.ranked] for n, r in runs.items()})
    out["RRF k=60 (vector + bm25 + graph)"] = [f.key for f in three]
    out["RRF k=60 (all four)"] = [f.key for f in four]
    out["RRF weighted (graph x3; not the default)"] = [f.key for f in reciprocal_rank_fusion(
        {n: [t for t, _ in r.ranked] for n, r in runs.items()}, weights={"graph": 3})]
    out["RRF (all four) + bi-encoder order alone"] = await _reranked_alone(pipeline, ctx, four)
    out["RRF (all four) + rerank (bi-encoder, as a vote)"] = [f.key for f, _ in await pipeline.rerank(
        ctx_with(ctx, top_k=10), four)]
    hyde = SearchPipeline(tools, Limits(fetch=30), reranker=pipeline.reranker, hyde=True)
    hyde.llm = hyde_llm
    ctx_h = await hyde.context(question, route)
    runs_h, _ = await hyde.retrieve(ctx_h, ("bm25", "vector"), route.hops)
    label = "vector + HyDE (LLM)" if hyde_llm else "vector + HyDE stand-in (offline pseudo-relevance feedback)"
    out[label] = [t for t, _ in runs_h["vector"].ranked]
    fused_h = reciprocal_rank_fusion({**{n: [t for t, _ in r.ranked] for n, r in runs.items() if n != "vector"},
                                      "vector": out[label]})
    out[f"RRF (all four, vector with {'HyDE' if hyde_llm else 'the stand-in'})"] = [f.key for f in fused_h]
    return out


async def _reranked_alone(pipeline: SearchPipeline, ctx: Context, fused) -> list[Triple]:
    """What the bi-encoder's order alone would keep (the pipeline uses it as one vote instead)."""
    pool = list(fused[:ctx.limits.rerank_pool])
    scores = await pipeline.reranker.scores(ctx.question, await ctx.texts([f.key for f in pool]))
    return [pool[i].key for i in sorted(range(len(pool)), key=lambda i: scores[i], reverse=True)]


def ctx_with(ctx: Context, **limits) -> Context:
    from dataclasses import replace
    return replace(ctx, limits=replace(ctx.limits, **limits))


def openai_completion(url: str):
    from openai import AsyncOpenAI
    client = AsyncOpenAI(base_url=url, api_key="unused")

    async def complete(system: str, prompt: str) -> Completion:
        reply = await client.chat.completions.create(model="default", messages=[
            {"role": "system", "content": system}, {"role": "user", "content": prompt}])
        return Completion(reply.choices[0].message.content or "", reply.model)
    return complete


# ---------------------------------------------------------------- latency at scale

async def latency(work: Path, edges: int, questions: int, embedder) -> None:
    ref = CollectionRef("default", "scale")
    nquads = work / "graph.nq"
    started = time.perf_counter()
    counts = await asyncio.to_thread(synthetic_graph.write_nquads, nquads, edges)
    triples = OxigraphTripleStore(work / "triples")
    keywords = KeywordIndex(work / "keywords")
    vectors = AnnVectorStore(work / "vectors")  # the default engine without a Qdrant server
    try:
        text = await asyncio.to_thread(nquads.read_text)
        await triples.add_nquads(ref, text)
        del text
        loaded = time.perf_counter()
        batch: list[Triple] = []
        for s, p, o in synthetic_graph.iter_facts(edges):
            batch.append(Triple(s=iri(entity_uri(s)), p=iri(relation_uri(p)), o=iri(entity_uri(o))))
            batch += [Triple(s=iri(entity_uri(x)), p=RDFS.label, o=literal(x)) for x in (s, o)]
            batch.append(Triple(s=iri(relation_uri(p)), p=RDFS.label, o=literal(p)))
            if len(batch) >= 200_000:
                await keywords.apply(ref, added=batch)
                batch = []
        await keywords.apply(ref, added=batch)
        indexed = time.perf_counter()
        # Entity vectors: random unit vectors. Search time depends on their number, not their values,
        # and embedding 150k labels with the bundled model would take minutes for no extra truth.
        entities = sorted({x for s, _, o in synthetic_graph.iter_facts(edges) for x in (s, o)})
        rng = np.random.default_rng(5)
        for start in range(0, len(entities), 20_000):
            block = rng.standard_normal((len(entities[start:start + 20_000]), 384)).astype(np.float32)
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            await vectors.upsert(ref, "entity", [VectorItem(entity_uri(n), v.tolist(), {})
                                                 for n, v in zip(entities[start:start + 20_000], block)])
        vectored = time.perf_counter()
        print(f"  {counts['edges']:,} edges ({counts['triples']:,} triples, {counts['entities']:,} entities): "
              f"generated+loaded {loaded - started:.0f} s, keyword index {indexed - loaded:.0f} s, "
              f"{len(entities):,} entity vectors {vectored - indexed:.0f} s", flush=True)
        # Labels and edge-text vectors cached between questions, as the search service keeps them.
        tools = LocalRetrievalTools(ref, triples, vectors, keywords, embedder, cached=True)
        timings: dict[str, list[float]] = {}
        for question in synthetic_graph.sample_questions(questions, seed=3, edges=edges):
            pipeline = SearchPipeline(tools, Limits(), reranker=EmbeddingReranker(tools.embed))
            pipeline.llm = False
            route = router.route_by_rules(question)
            for name in (*SINGLE, "all four + RRF + rerank"):
                ctx = await pipeline.context(question, route)
                began = time.perf_counter()
                if name in SINGLE:
                    await pipeline.retrieve(ctx, (name,), route.hops)
                else:
                    runs, _ = await pipeline.retrieve(ctx, SINGLE, route.hops)
                    await pipeline.rerank(ctx, reciprocal_rank_fusion({n: [t for t, _ in r.ranked]
                                                                      for n, r in runs.items()}))
                timings.setdefault(name, []).append((time.perf_counter() - began) * 1000)
        print(f"\nlatency per strategy at {counts['edges']:,} edges ({questions} questions, no cache, "
              "bundled embedding model, oxigraph + tantivy + the embedded ANN vector store in-process)")
        print(f"  {'strategy':<26} {'p50 ms':>8} {'p95 ms':>8}")
        for name, values in timings.items():
            values.sort()
            print(f"  {name:<26} {statistics.median(values):>8.0f} {values[int(0.95 * (len(values) - 1))]:>8.0f}")
    finally:
        for store in (triples, vectors, keywords):
            await store.aclose()


async def main_async(args: argparse.Namespace) -> None:
    embedder = LocalEmbedder()
    with tempfile.TemporaryDirectory(prefix="tg-bench-retrieval-") as tmp:
        work = Path(tmp)
        if not args.skip_quality:
            print("ingesting the multi-hop and sample corpora through the default flow…", flush=True)
            began = time.perf_counter()
            await ingest(work / "data")
            print(f"  ingest took {time.perf_counter() - began:.0f} s", flush=True)
            await quality(work / "data", embedder, args.llm_url, args.questions)
        if args.edges:
            print(f"\nbuilding a {args.edges:,}-edge graph for latency…", flush=True)
            (work / "scale").mkdir()
            await latency(work / "scale", args.edges, args.latency_questions, embedder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edges", type=int, default=1_000_000, help="graph size for latency (0: skip)")
    parser.add_argument("--latency-questions", type=int, default=30)
    parser.add_argument("--questions", type=int, help="score only the first N questions of each set")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--llm-url", help="OpenAI-compatible endpoint for LLM HyDE (e.g. http://localhost:8000/v1)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
