"""Global search overhead (RSN-14, RSN-UC-04): a strategic question answered by map-reduce over the
community reports of a generated collection, through the search pipeline on an embedded oxigraph
store, as the search service runs it.

The collection is bench/communities.py's planted graph (default 100k facts). Its communities are
detected, every community gets an offline report embedded with the bundled model, and communities and
reports are stored in urn:graph:community, as the community processor writes them. Then:

  * offline (no LLM): p50/p95 of the whole answer, question to last step, with the reports read from
    the store for every question (a cold shelf) and with them kept (warm, as within 15 s in the service);
  * with an LLM: the same through the real `openai` client against the scripted OpenAI-compatible
    server (tests/support/openai_stub.py) answering after a fixed delay. The router asks the LLM for
    the query type, the map step sends ceil(40 / 8) = 5 rating prompts, 4 at a time, then one reduce
    prompt: 4 rounds of delay, which are subtracted to give the overhead. RSN-UC-04's aim is < 8 s with a real model.

Prints figures; never asserts on timing.

    .venv/bin/python bench/global_search.py --facts 100000 --questions 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from communities import planted_facts  # noqa: E402  (the same generated graph)
from support.openai_stub import OpenAIStub  # noqa: E402  (test support, reused here)

from tracegraph.base.communities.detect import DetectionParams, detect  # noqa: E402
from tracegraph.base.communities.graph import fact_graph  # noqa: E402
from tracegraph.base.communities.rdf import community_triples, detection_triples, report_triples  # noqa: E402
from tracegraph.base.communities.reports import offline_report  # noqa: E402
from tracegraph.base.llm.completion import CompletionClient  # noqa: E402
from tracegraph.base.llm.local_embed import LocalEmbedder  # noqa: E402
from tracegraph.base.provenance.query import now  # noqa: E402
from tracegraph.base.retrieval.local import LocalRetrievalTools  # noqa: E402
from tracegraph.base.stores.oxigraph import OxigraphTripleStore  # noqa: E402
from tracegraph.base.stores.protocol import CollectionRef  # noqa: E402
from tracegraph.flow.search.global_search import GlobalLimits, ReportShelf  # noqa: E402
from tracegraph.flow.search.pipeline import SearchPipeline  # noqa: E402
from tracegraph.flow.search.strategies import Limits  # noqa: E402

QUESTIONS = ["What are the top risks across the platform?", "How is domain {d} structured?",
             "What are the main themes across the collection?", "Give me an overview of topic {t} in domain {d}.",
             "What are the biggest bottlenecks across all the services?"]


def questions(count: int) -> list[str]:
    return [QUESTIONS[i % len(QUESTIONS)].format(d=i % 20, t=i % 8) for i in range(count)]


async def build(work: Path, facts: int, embedder) -> tuple[LocalRetrievalTools, int]:
    """The collection with its communities and reports stored; the tools over it, and the report count."""
    planted = planted_facts(facts)
    store = OxigraphTripleStore(work / "triples")
    ref = CollectionRef("default", "global")
    started = time.perf_counter()
    await store.add(ref, planted.facts)
    graph = fact_graph(planted.facts)
    hierarchy = detect(graph, DetectionParams())
    communities = list(hierarchy.communities())
    reports = [offline_report(graph, c) for c in communities]
    detected = time.perf_counter()
    vectors = await embedder.embed([f"{r.title}. {r.summary}" for r in reports])
    embedded = time.perf_counter()
    run = "urn:trustgraph:community-detection:bench"
    await store.add(ref, [*detection_triples(run, hierarchy.params, "full", now(), now(), graph.fact_count,
                                             len(graph.entities), "bench", None),
                          *[t for c in communities for t in community_triples(c, run)],
                          *[t for r, v in zip(reports, vectors) for t in report_triples(r, run, v)]])
    print(f"  {graph.fact_count:,} linking facts, {len(graph.entities):,} entities: loaded, detected and "
          f"reported in {detected - started:.1f} s; {len(reports):,} reports embedded in {embedded - detected:.1f} s; "
          f"levels {[len(level) for level in hierarchy.levels]}", flush=True)
    return store, ref, len(reports)


async def answer(tools, question: str, shelf: ReportShelf) -> float:
    pipeline = SearchPipeline(tools, Limits(), reranker=None, global_search=True, shelf=shelf,
                              scope=("default", "global"))
    began = time.perf_counter()
    async for _ in pipeline.run(question):
        pass
    return (time.perf_counter() - began) * 1000


def figures(name: str, times: list[float]) -> None:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    print(f"  {name:<58} p50 {statistics.median(times):7.0f} ms   p95 {p95:7.0f} ms   (n={len(times)})", flush=True)


def map_reply(batch: int) -> str:
    return json.dumps([{"id": i, "score": 10 - i, "reason": f"scripted rating {i}"} for i in range(1, batch + 1)])


async def main_async(args) -> None:
    embedder = LocalEmbedder()
    asked = questions(args.questions)
    with tempfile.TemporaryDirectory() as folder:
        store, ref, reports = await build(Path(folder), args.facts, embedder)
        try:
            tools = LocalRetrievalTools(ref, store, None, embedder=embedder, cached=True)
            await answer(tools, asked[0], ReportShelf())  # warm the model and the caches
            figures("offline, reports read from the store each question", [
                await answer(tools, q, ReportShelf(max_age=0)) for q in asked])
            warm = ReportShelf()
            figures("offline, reports kept (as within 15 s in the service)", [await answer(tools, q, warm) for q in asked])

            limits = GlobalLimits()
            # the router's classification, the map rounds, the reduce
            rounds = 1 + math.ceil(math.ceil(min(limits.map_pool, reports) / limits.map_batch) / limits.map_concurrency) + 1
            per_question = [map_reply(limits.map_batch)] * math.ceil(min(limits.map_pool, reports) / limits.map_batch)
            script = [reply for _ in asked for reply in ("strategic", *per_question, "Scripted answer naming the reports.")]
            async with OpenAIStub(replies=script, delay=args.latency) as stub:
                client = CompletionClient(stub.base_url, "scripted")
                llm_tools = LocalRetrievalTools(ref, store, None, embedder=embedder, complete=client.complete, cached=True)
                warm = ReportShelf()
                times = [await answer(llm_tools, q, warm) for q in asked]
            figures(f"with the scripted LLM ({args.latency * 1000:.0f} ms a call), total", times)
            figures(f"  minus {rounds} rounds of scripted delay: the overhead", [t - rounds * args.latency * 1000 for t in times])
        finally:
            await store.aclose()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--facts", type=int, default=100_000, help="generated linking facts [100000]")
    p.add_argument("--questions", type=int, default=20, help="strategic questions asked per mode [20]")
    p.add_argument("--latency", type=float, default=0.5, help="seconds the scripted LLM takes per call [0.5]")
    args = p.parse_args()
    print(f"global search over a generated collection of {args.facts:,} facts")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
