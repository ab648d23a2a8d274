"""Community refresh per batch of graph updates, at two collection sizes (a generated graph with planted
topics, bench/communities.py's): the community processor's own `refresh`, offline reports, the store and
the bus replaced by an in-memory collection (no SPARQL: reports go without the architecture; embeddings
are hashes; Leiden in a child process, as the started processor runs it). Each batch is `--docs` new
documents (~30 facts on 10 new entities and 4 existing ones).

Prints, per size, the first (full) build and p50/max of the incremental refreshes, how many triples each
read, and the same refreshes when the whole graph is read again each time (how it was before). Never
asserts on timing.

    .venv/bin/python bench/community_refresh.py            # 2k and 20k entities
    .venv/bin/python bench/community_refresh.py --edges 13000,130000 --batches 5 --docs 32
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.util
import logging
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tracegraph.base.communities.detect import DetectionParams
from tracegraph.base.communities.leiden_process import LeidenProcess
from tracegraph.base.errors import LlmUnavailable, RemoteError
from tracegraph.base.settings import RuntimeSettings
from tracegraph.flow.derived.community import CommunityProcessor
from tracegraph.flow.derived.maintainer import Changes, RunReport
from tracegraph.schemas.rdf import IriTerm, Triple

_SPEC = importlib.util.spec_from_file_location("bench_communities", Path(__file__).with_name("communities.py"))
planted_bench = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = planted_bench  # its dataclasses look their module up
_SPEC.loader.exec_module(planted_bench)

SCOPE = ("default", "bench")


@dataclass
class InMemoryCollection:
    """The bus reads the processor makes, answered from a list of triples; counts what was read."""

    facts: list[Triple]
    user: str = "default"
    collection: str = "bench"
    read: list[int] = field(default_factory=list)  # triples returned per read

    async def match(self, s=None, p=None, o=None, g: str | None = None, limit: int = 100) -> list[Triple]:
        found = [] if g else [t for t in self.facts if (s is None or t.s == s) and (o is None or t.o == o)]
        self.read.append(len(found))
        return found

    async def around(self, nodes, limit: int) -> list[Triple]:
        wanted = set(nodes)
        found = [t for t in self.facts if t.s.iri in wanted or getattr(t.o, "iri", None) in wanted]
        self.read.append(len(found))
        return found

    async def sparql(self, query: str, *, limit: int, timeout: float):
        raise RemoteError("sparql-error", "no SPARQL in this benchmark")

    async def embed(self, texts):
        return [np.frombuffer(hashlib.sha256(t.encode()).digest(), dtype=np.uint8).astype(np.float32) for t in texts]

    async def complete(self, system: str, prompt: str):
        raise LlmUnavailable("offline benchmark")


def processor() -> CommunityProcessor:
    found = CommunityProcessor(backend=None, settings=RuntimeSettings())  # type: ignore[arg-type]
    found.params, found.states, found.runs = DetectionParams(), {}, {SCOPE: RunReport()}

    async def save(tools, *, drop=(), add=(), drop_all=False) -> None:
        pass

    found.save = save  # type: ignore[method-assign]
    return found


async def measure(edges: int, batches: int, docs: int, *, reread: bool, process: bool) -> dict:
    planted = planted_bench.planted_facts(edges, domains=10, topics=6)
    tools = InMemoryCollection(list(planted.facts))
    community = processor()
    if process:
        community.leiden = LeidenProcess()  # as a started processor runs it
        community.leiden.warm()
    started = time.perf_counter()
    await community.refresh(tools, SCOPE, Changes())
    full = time.perf_counter() - started
    times, reads = [], []
    for batch in range(batches):
        new = [f for d in range(docs) for f in planted_bench.new_document(planted, seed=10_000 + batch * docs + d)]
        tools.facts += new
        nodes = {t.s.iri for t in new} | {t.o.iri for t in new if isinstance(t.o, IriTerm)}
        if reread:
            community.states[SCOPE].facts = None  # as before: the whole graph read on every refresh
        tools.read.clear()
        started = time.perf_counter()
        await community.refresh(tools, SCOPE, Changes(nodes=nodes))
        times.append(time.perf_counter() - started)
        reads.append(sum(tools.read))
    if process:
        community.leiden.close()
    return {"entities": len(planted.topic), "facts": len(planted.facts), "full": full, "times": times, "reads": reads}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--edges", default="13000,130000", help="generated facts per size (~2k and ~20k entities)")
    p.add_argument("--batches", type=int, default=5)
    p.add_argument("--docs", type=int, default=32, help="new documents per batch")
    p.add_argument("--inline", action="store_true", help="run Leiden in this process, not a child process")
    args = p.parse_args()
    logging.basicConfig(level=logging.ERROR)
    for edges in (int(e) for e in args.edges.split(",")):
        for reread in (False, True):
            r = asyncio.run(measure(edges, args.batches, args.docs, reread=reread, process=not args.inline))
            how = "whole graph re-read each time (before)" if reread else "triples around the changes (now)"
            print(f"{r['entities']:,} entities, {r['facts']:,} triples; {how}: first build {r['full']:.2f} s; "
                  f"refresh per batch of {args.docs} documents p50 {statistics.median(r['times']):.2f} s, "
                  f"max {max(r['times']):.2f} s; triples read per refresh p50 {statistics.median(r['reads']):,.0f}")


if __name__ == "__main__":
    main()
