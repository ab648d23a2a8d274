"""Ingest benchmark: triples/s through our write paths beside pyoxigraph's own bulk load of the same
triples, 1-hop pattern-lookup latency at 1M triples, chunks/s through the offline pipeline, and peak
memory. Prints figures; never asserts on timing."""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path

import pyoxigraph as ox

from tracegraph.base.bus import codec
from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.bus.topic import Topic
from tracegraph.base.client import RequestClient
from tracegraph.base.settings import RuntimeSettings
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import CollectionRef
from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import extraction_progress
from tracegraph.launch.registry import PROCESSORS
from tracegraph.launch.stack import Stack, ensure_flow
from tracegraph.schemas.ingest import Metadata, TriplesBatch
from tracegraph.schemas.rdf import iri
from tracegraph.schemas.triples import TriplesQueryRequest, TriplesQueryResponse

E = "https://trustgraph.ai/e/"
R = "https://trustgraph.ai/r/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
BATCH = 50_000


def synthetic_nquads(triples: int, seed: int = 7) -> tuple[list[str], list[str]]:
    """N-Quads batches of a random graph (labels + relations, ~3 edges per entity), and its entities."""
    rng = random.Random(seed)
    entities = [f"{E}entity-{i}" for i in range(max(1, triples // 4))]
    predicates = [f"{R}relation-{i}" for i in range(50)]
    lines = [f'<{e}> <{LABEL}> "Entity {i}" .' for i, e in enumerate(entities)]
    while len(lines) < triples:
        lines.append(f"<{rng.choice(entities)}> <{rng.choice(predicates)}> <{rng.choice(entities)}> .")
    return ["\n".join(lines[i:i + BATCH]) + "\n" for i in range(0, len(lines), BATCH)], entities


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def writes(batches: list[str], total: int, work: Path) -> list[tuple[str, str]]:
    rows = []
    raw = ox.Store(str(work / "raw"))
    started = time.perf_counter()
    for text in batches:
        raw.bulk_load(text.encode(), format=ox.RdfFormat.N_QUADS)
    raw_rate = total / (time.perf_counter() - started)
    rows.append(("raw pyoxigraph Store.bulk_load (on disk)", f"{raw_rate:,.0f} triples/s"))
    del raw

    store = OxigraphTripleStore(work / "ours")
    ref = CollectionRef("bench", "writes")
    started = time.perf_counter()
    for text in batches:
        await store.add_nquads(ref, text)
    ours = total / (time.perf_counter() - started)
    rows.append(("OxigraphTripleStore.add_nquads", f"{ours:,.0f} triples/s  ({ours / raw_rate:.0%} of raw)"))
    await store.aclose()

    backend = InprocBackend()
    settings = RuntimeSettings(data_dir=work / "bus")
    async with Stack(backend, settings, ["config", "triples"]) as stack:
        await ensure_flow(backend, "default", "default")
        topic = Topic.parse("persistent://tg/flow/triples-bulk:default")
        target = stack["triples"]
        while "default" not in target.flows:
            await asyncio.sleep(0.01)
        ref = CollectionRef("bench", "bus")
        started = time.perf_counter()
        for i, text in enumerate(batches):
            body, props = codec.encode(TriplesBatch(metadata=Metadata(id=f"b{i}", root="bench", user="bench",
                                                                      collection="bus"), nquads=text))
            await backend.publish(topic, body, props)
        while target.stats.handled + target.stats.failed < len(batches):
            await asyncio.sleep(0.005)
        bus_rate = total / (time.perf_counter() - started)
    rows.append(("through the bus: TriplesBatch → triples processor", f"{bus_rate:,.0f} triples/s  "
                 f"({bus_rate / raw_rate:.0%} of raw)"))
    return rows


async def lookups(batches: list[str], entities: list[str], work: Path, samples: int) -> list[tuple[str, str]]:
    store = OxigraphTripleStore(work / "lookup")
    ref = CollectionRef("bench", "lookup")
    for text in batches:
        await store.add_nquads(ref, text)
    rng = random.Random(3)
    picks = [iri(rng.choice(entities)) for _ in range(samples)]
    await store.match(ref, s=picks[0], limit=100)  # opens the store
    latencies, sizes = [], []
    for subject in picks:
        started = time.perf_counter()
        found = await store.match(ref, s=subject, limit=100)
        latencies.append(time.perf_counter() - started)
        sizes.append(len(found))
    raw_store = store._joined.lease_if_open(ref).store  # the same open RocksDB, read directly
    raw = []
    for subject in picks:
        started = time.perf_counter()
        list(raw_store.quads_for_pattern(ox.NamedNode(subject.iri), None, None, ox.DefaultGraph()))
        raw.append(time.perf_counter() - started)
    await store.aclose()
    latencies.sort()
    raw.sort()
    return [(f"raw pyoxigraph quads_for_pattern(s=…), same store",
             f"p50 {raw[len(raw) // 2] * 1e3:.3f} ms  p99 {raw[int(len(raw) * .99)] * 1e3:.3f} ms"),
            (f"1-hop match(s=…) at {sum(1 for _ in batches) * BATCH / 1e6:.1f}M triples",
             f"p50 {latencies[len(latencies) // 2] * 1e3:.3f} ms  p99 {latencies[int(len(latencies) * .99)] * 1e3:.3f} ms"
             f"  ({statistics.mean(sizes):.1f} triples/answer)")]


async def service_lookups(entities: list[str], samples: int, work: Path, batches: list[str]) -> list[tuple[str, str]]:
    backend = InprocBackend()
    async with Stack(backend, RuntimeSettings(data_dir=work / "svc"), ["config", "triples"]) as stack:
        await ensure_flow(backend, "default", "default")
        for text in batches:
            await stack["triples"].store.add_nquads(CollectionRef("default", "default"), text)
        async with RequestClient(backend, Topic.parse("non-persistent://tg/request/triples:default"),
                                 Topic.parse("non-persistent://tg/response/triples:default"),
                                 TriplesQueryRequest, TriplesQueryResponse) as client:
            rng = random.Random(5)
            latencies = []
            for _ in range(samples):
                request = TriplesQueryRequest(s=iri(rng.choice(entities)), limit=100)
                started = time.perf_counter()
                await client.request(request)
                latencies.append(time.perf_counter() - started)
    latencies.sort()
    return [("1-hop via the triples service (bus round trip)",
             f"p50 {latencies[len(latencies) // 2] * 1e3:.3f} ms  p99 {latencies[int(len(latencies) * .99)] * 1e3:.3f} ms")]


SENTENCES = ["{a} depends on {b}.", "{a} was acquired by {b} in {y}.", "{a} supplies power to {b}.",
             "{a} is headquartered in {b}.", "{a} is a regional operator that serves {b}.", "{a} leads {b}."]


def synthetic_documents(count: int, words: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    names = [f"{rng.choice(['North', 'East', 'Vale', 'Sable', 'Orbis', 'Tarn', 'Corvid'])} "
             f"{rng.choice(['Grid', 'Systems', 'Holdings', 'Analytics', 'Works', 'Labs'])} {i}" for i in range(300)]
    docs = []
    for _ in range(count):
        text = []
        while sum(len(t.split()) for t in text) < words:
            text.append(rng.choice(SENTENCES).format(a=rng.choice(names), b=rng.choice(names), y=rng.randint(1990, 2025)))
        docs.append(" ".join(text))
    return docs


async def pipeline(docs: list[str], work: Path) -> list[tuple[str, str]]:
    import base64
    backend = InprocBackend()
    settings = RuntimeSettings(data_dir=work / "pipeline", gateway_port=0, request_timeout=120)
    async with Stack(backend, settings, list(PROCESSORS)) as stack:
        await ensure_flow(backend, "default", "default")
        api = Api(f"http://127.0.0.1:{stack['gateway'].port}/")
        started = time.perf_counter()
        ids = []
        for i, text in enumerate(docs):
            meta = (await api.request("librarian", {"operation": "add-document", "content": base64.b64encode(
                text.encode()).decode(), "document-metadata": {"kind": "text/plain", "title": f"doc {i}"}}))
            ids.append(meta["document-metadata"]["id"])
            await api.request("librarian", {"operation": "add-processing", "processing-metadata": {
                "document-id": ids[-1], "flow": "default"}})
        while True:
            progress = [await extraction_progress(api, "default", d, "default") for d in ids]
            chunks, done = sum(c for c, _ in progress), sum(d for _, d in progress)
            if chunks and done >= chunks:
                break
            await asyncio.sleep(0.2)
        extracted = time.perf_counter() - started
        vectors = stack["document-embeddings"].store
        while True:
            hits = await vectors.search(CollectionRef("default", "default"), "chunk", [1.0] + [0.0] * 383, limit=chunks)
            if len(hits) >= chunks:
                break
            await asyncio.sleep(0.5)
        indexed = time.perf_counter() - started
    return [(f"offline pipeline, {len(docs)} docs / {chunks} chunks: extraction done",
             f"{chunks / extracted:,.1f} chunks/s ({extracted:.1f} s)"),
            ("  ...and every chunk embedded and in the vector store", f"{chunks / indexed:,.1f} chunks/s ({indexed:.1f} s)")]


async def main_async(args: argparse.Namespace) -> None:
    print(f"ingest benchmark: {args.triples:,} triples for writes, {args.lookup_triples:,} for lookups")
    with tempfile.TemporaryDirectory(prefix="tg-bench-ingest-") as tmp:
        work = Path(tmp)
        batches, _ = synthetic_nquads(args.triples)
        rows = await writes(batches, sum(b.count("\n") for b in batches), work)
        lookup_batches, entities = synthetic_nquads(args.lookup_triples, seed=9)
        rows += await lookups(lookup_batches, entities, work, args.samples)
        rows += await service_lookups(entities, args.samples, work, lookup_batches[:4])
        rows += await pipeline(synthetic_documents(args.documents, args.words), work)
    rows.append(("peak resident memory of this process", f"{rss_mb():,.0f} MB"))
    for label, figure in rows:
        print(f"{label:<58} {figure}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] + " (see the module docstring).")
    p.add_argument("--triples", type=int, default=500_000, help="triples for the write comparison [500000]")
    p.add_argument("--lookup-triples", type=int, default=1_000_000, help="store size for lookups [1000000]")
    p.add_argument("--samples", type=int, default=2000, help="lookups to time [2000]")
    p.add_argument("--documents", type=int, default=40, help="synthetic documents for the pipeline [40]")
    p.add_argument("--words", type=int, default=800, help="words per synthetic document [800]")
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
