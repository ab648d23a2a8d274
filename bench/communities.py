"""Community detection benchmark: hierarchical Leiden over a generated knowledge graph with planted structure.

The graph has `domains`, each split into `topics`; most facts link two entities of one topic, a few link
topics of one domain (3%) or two domains (2%), and endpoints are drawn with a power-law-ish skew, so each
topic has a few hubs and a long tail. Facts are Triples with entity IRIs, six predicates, and an
rdfs:label per entity. Sections:

  (a) fact_graph build, detection, and offline reports of every community: time, and memory measured in a
      fresh subprocess per size (peak RSS of that process from ru_maxrss, and its growth over the RSS once
      the facts were generated, i.e. what the fact graph, Leiden and the reports added);
  (b) modularity of every level;  (c) NMI of level 0, and of the level with the count nearest the planted
      domains, against the planted domains (and topics);
  (d) absorbing one new document (~30 facts on 10 new entities and 4 existing ones of one planted topic)
      into a 10k-fact collection (10 domains x 6 topics):
      incremental (`update` + offline reports of the added communities) against full (`detect` + every
      offline report), p50 over several documents, and whether every unaffected community was kept;
      then as the processor absorbs it: also embedding every written report with the bundled model and
      rewriting the records in urn:graph:community of an embedded oxigraph store;
  (e) global-search overhead is measured by bench/global_search.py.

Prints figures; never asserts on timing.

    .venv/bin/python bench/communities.py --quick
    .venv/bin/python bench/communities.py --sizes 100000,1000000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import igraph
import numpy as np
from tracegraph.base.communities.detect import (
    DetectionParams,
    Hierarchy,
    detect,
    modularity,
    rewritten,
    update,
)
from tracegraph.base.communities.graph import FactGraph, fact_graph
from tracegraph.base.communities.rdf import community_triples, report_triples, report_uri
from tracegraph.base.communities.reports import offline_report
from tracegraph.base.llm.local_embed import LocalEmbedder
from tracegraph.base.stores.graph_edit import replace_in_graph
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import COMMUNITY_GRAPH, CollectionRef
from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import RDFS
from tracegraph.schemas.base import prevalidated
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Triple

ENTITIES_PER_EDGE = 0.15
SKEW = 2.0  # rank within a topic = size * u**SKEW: a few hubs, a long tail
PREDICATES = ["depends on", "supplies", "is part of", "works with", "funds", "located in"]


def _iri(value: str) -> IriTerm:
    return prevalidated(IriTerm, {"kind": "i", "iri": value})


def _triple(s: IriTerm, p: IriTerm, o: IriTerm | LiteralTerm) -> Triple:
    # A million facts through pydantic validation would take longer than detecting their communities.
    return prevalidated(Triple, {"s": s, "p": p, "o": o, "g": None})


@dataclass
class Planted:
    """Generated facts, and the domain and topic every entity was planted in."""

    facts: list[Triple]
    domain: dict[str, int]
    topic: dict[str, int]
    domains: int


def planted_facts(edges: int, *, domains: int = 20, topics: int = 8, cross_topic: float = 0.03,
                  cross_domain: float = 0.02, seed: int = 1) -> Planted:
    """About `edges` linking facts (fewer after dropping self-links) plus one label per linked entity."""
    rng = np.random.default_rng(seed)
    groups = domains * topics
    size = max(2, round(edges * ENTITIES_PER_EDGE / groups))  # entities per topic

    def entity_in(topic: np.ndarray) -> np.ndarray:  # entity id = rank * groups + topic
        return np.minimum((size * rng.random(len(topic)) ** SKEW).astype(np.int64), size - 1) * groups + topic

    first = rng.integers(0, groups, edges)
    draw = rng.random(edges)
    second = first.copy()
    near = draw < cross_topic
    second[near] = first[near] // topics * topics + rng.integers(0, topics, int(near.sum()))
    far = (draw >= cross_topic) & (draw < cross_topic + cross_domain)
    second[far] = rng.integers(0, groups, int(far.sum()))
    s, o = entity_in(first), entity_in(second)
    p = rng.integers(0, len(PREDICATES), edges)
    keep = s != o
    s, o, p = s[keep], o[keep], p[keep]
    used = np.unique(np.concatenate([s, o])).tolist()
    labels = {e: f"D{e % groups // topics} T{e % groups % topics} E{e // groups}" for e in used}
    terms = {e: _iri(entity_uri(label)) for e, label in labels.items()}
    predicates = [_iri(relation_uri(name)) for name in PREDICATES]
    facts = [_triple(terms[a], predicates[b], terms[c]) for a, b, c in zip(s.tolist(), p.tolist(), o.tolist())]
    facts += [_triple(terms[e], RDFS.label, LiteralTerm(value=label)) for e, label in labels.items()]
    return Planted(facts, {terms[e].iri: e % groups // topics for e in used},
                   {terms[e].iri: e % groups for e in used}, domains)


def new_document(planted: Planted, seed: int, *, facts: int = 30, existing: int = 4, new: int = 10) -> list[Triple]:
    """A document about one subject: `new` new entities linked among themselves and to `existing` entities
    of one planted topic."""
    rng = random.Random(seed)
    topic = rng.choice(sorted(set(planted.topic.values())))
    known = [_iri(e) for e, t in planted.topic.items() if t == topic]
    old = rng.sample(known, min(existing, len(known)))
    fresh = [_iri(entity_uri(f"Doc {seed} entity {i}")) for i in range(new)]
    predicates = [_iri(relation_uri(name)) for name in PREDICATES]
    out = [_triple(e, RDFS.label, LiteralTerm(value=f"Doc {seed} entity {i}")) for i, e in enumerate(fresh)]
    while len(out) < new + facts:
        a, b = rng.choice(fresh), rng.choice(fresh + old)
        if a != b:
            out.append(_triple(a, rng.choice(predicates), b))
    return out


def nmi(graph: FactGraph, hierarchy: Hierarchy, level: int, truth: dict[str, int]) -> float:
    found = {m: i for i, c in enumerate(hierarchy.levels[level]) for m in c.members}
    return igraph.compare_communities([truth[e] for e in graph.entities], [found[e] for e in graph.entities],
                                      method="nmi")


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def measure_size(edges: int, params: DetectionParams) -> dict:
    """Sections (a)-(c) for one size; run in a fresh process so ru_maxrss is this size's own."""
    started = time.perf_counter()
    planted = planted_facts(edges)
    generated = time.perf_counter() - started
    rss_before = _rss_mb()
    started = time.perf_counter()
    graph = fact_graph(planted.facts)
    built = time.perf_counter() - started
    started = time.perf_counter()
    hierarchy = detect(graph, params)
    detected = time.perf_counter() - started
    started = time.perf_counter()
    reports = sum(1 for c in hierarchy.communities() if offline_report(graph, c))
    reported = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    nearest = min(range(len(hierarchy.levels)), key=lambda i: abs(len(hierarchy.levels[i]) - planted.domains))
    return {
        "edges": edges, "facts": graph.fact_count, "entities": len(graph.entities), "graph_edges": len(graph.weights),
        "generate_s": generated, "build_s": built, "detect_s": detected, "reports": reports, "reports_s": reported,
        "rss_before_mb": rss_before, "peak_rss_mb": peak,
        "levels": [{"communities": len(level), "modularity": modularity(graph, hierarchy, i),
                    "nmi_domains": nmi(graph, hierarchy, i, planted.domain),
                    "nmi_topics": nmi(graph, hierarchy, i, planted.topic)} for i, level in enumerate(hierarchy.levels)],
        "nearest_level": nearest, "domains": planted.domains,
    }


def print_size(result: dict) -> None:
    print(f"\n== {result['edges']:,} generated edges: {result['facts']:,} linking facts, {result['entities']:,} entities, "
          f"{result['graph_edges']:,} entity pairs")
    print(f"  (a) generate facts {result['generate_s']:.1f}s | fact_graph {result['build_s']:.2f}s | "
          f"detect {result['detect_s']:.2f}s | offline reports of all {result['reports']:,} communities "
          f"{result['reports_s']:.2f}s")
    print(f"      peak RSS {result['peak_rss_mb']:,.0f} MB; RSS with the facts generated {result['rss_before_mb']:,.0f} MB, "
          f"so build + detect + reports added at most {result['peak_rss_mb'] - result['rss_before_mb']:,.0f} MB")
    for i, level in enumerate(result["levels"]):
        print(f"  (b,c) level {i}: {level['communities']:>6,} communities  modularity {level['modularity']:.3f}  "
              f"NMI vs domains {level['nmi_domains']:.3f}  vs topics {level['nmi_topics']:.3f}")
    print(f"      planted: {result['domains']} domains; level {result['nearest_level']} has the nearest count")


def run_size(edges: int, params: DetectionParams) -> dict | None:
    """measure_size in a child process (its own peak memory), or None if the child failed."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(edges),
               "--resolution", str(params.resolution), "--seed", str(params.seed)]
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"\n== {edges:,} edges: the measuring process failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


class LikeTheProcessor:
    """Section (d)'s second measure: what the community processor does beyond detection and report
    text — embed every report it writes, and rewrite the records in urn:graph:community of an
    embedded oxigraph store (drop the communities and reports that changed, add the new ones)."""

    RUN = "urn:trustgraph:community-detection:bench"

    def __init__(self, folder: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.embedder = LocalEmbedder()
        self.store = OxigraphTripleStore(folder)
        self.ref = CollectionRef("bench", "incremental")

    def write(self, communities, reports, *, drop=(), drop_all: bool = False) -> float:
        """Seconds to embed `reports` and store `communities` and `reports` in place of `drop` (or all)."""
        return self.loop.run_until_complete(self._write(communities, reports, list(drop), drop_all))

    async def _write(self, communities, reports, drop, drop_all) -> float:
        started = time.perf_counter()
        vectors = await self.embedder.embed([f"{r.title}. {r.summary}" for r in reports]) if reports else []
        add = [*[t for c in communities for t in community_triples(c, self.RUN)],
               *[t for r, v in zip(reports, vectors) for t in report_triples(r, self.RUN, v)]]
        await replace_in_graph(self.store, self.ref, COMMUNITY_GRAPH, drop_subjects=drop, drop_all=drop_all, add=add)
        return time.perf_counter() - started

    def close(self) -> None:
        self.loop.run_until_complete(self.store.aclose())
        self.loop.close()


def incremental_section(facts: int, runs: int, params: DetectionParams, embed: bool = True) -> None:
    """Section (d): one new document into a collection, incrementally and in full."""
    planted = planted_facts(facts, domains=10, topics=6)
    started = time.perf_counter()
    base_graph = fact_graph(planted.facts)
    built = time.perf_counter() - started
    previous = detect(base_graph, params)
    print(f"\n== (d) one new document into {base_graph.fact_count:,} facts ({len(base_graph.entities):,} entities, "
          f"levels {[len(level) for level in previous.levels]}); fact_graph of the collection {built * 1000:.0f} ms")
    incremental, full, builds, kept, checked, added, modularities = [], [], [], 0, 0, [], []
    stored_inc, stored_full = [], []
    folder = tempfile.TemporaryDirectory()
    processor = LikeTheProcessor(Path(folder.name)) if embed else None
    base_reports = [offline_report(base_graph, c) for c in previous.communities()]
    for run in range(runs):
        if processor:  # the store as the collection's communities left it (not timed)
            processor.write(list(previous.communities()), base_reports, drop_all=True)
        document = new_document(planted, seed=run)
        changed = {t.s.iri for t in document} | {t.o.iri for t in document if isinstance(t.o, IriTerm)}
        started = time.perf_counter()
        graph = fact_graph(planted.facts + document)
        builds.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = update(previous, graph, changed, params)
        reports = [offline_report(graph, community) for community in result.added]
        incremental.append(time.perf_counter() - started)
        if processor:
            rewrite = rewritten(previous, result.hierarchy)
            drop = [*(c.id for c in (*result.removed, *rewrite)), *(report_uri(c.id) for c in (*result.removed, *result.added))]
            stored_inc.append(incremental[-1] + processor.write(rewrite, reports, drop=drop))
        graph = fact_graph(planted.facts + document)  # a fresh graph: no centrality cached from the run above
        started = time.perf_counter()
        fresh = detect(graph, params)
        reports = [offline_report(graph, community) for community in fresh.communities()]
        full.append(time.perf_counter() - started)
        if processor:
            stored_full.append(full[-1] + processor.write(list(fresh.communities()), reports, drop_all=True))
        now = {c.id: c for c in result.hierarchy.levels[0]}
        unaffected = [c for c in previous.levels[0] if c.id not in result.affected_level0_ids]
        kept += sum(1 for c in unaffected if c.id in now and now[c.id].members == c.members)
        checked += len(unaffected)
        added.append(len(result.added))
        modularities.append((modularity(graph, result.hierarchy, 0), modularity(graph, fresh, 0)))
    p50_inc, p50_full = statistics.median(incremental), statistics.median(full)
    print(f"  fact_graph with the document: p50 {statistics.median(builds) * 1000:.1f} ms (not in the times below)")
    print(f"  incremental (update + reports of added communities): p50 {p50_inc * 1000:.1f} ms "
          f"(added communities per document: p50 {statistics.median(added):.0f})")
    print(f"  full (detect + reports of every community):          p50 {p50_full * 1000:.1f} ms")
    print(f"  speed-up {p50_full / p50_inc:.1f}x over {runs} documents")
    if processor:
        processor.close()
        folder.cleanup()
        p50_inc, p50_full = statistics.median(stored_inc), statistics.median(stored_full)
        print(f"  as the processor absorbs it (reports embedded by the bundled model, records rewritten in an "
              f"embedded oxigraph store):\n    incremental p50 {p50_inc * 1000:.0f} ms, full p50 {p50_full * 1000:.0f} ms, "
              f"speed-up {p50_full / p50_inc:.1f}x")
    print(f"  unaffected level-0 communities kept identical (same id and members): {kept:,}/{checked:,}")
    print(f"  level-0 modularity incremental vs full: p50 {statistics.median(m[0] for m in modularities):.4f} vs "
          f"{statistics.median(m[1] for m in modularities):.4f}")


def sizes(text: str) -> list[int]:
    return [int(float(part)) for part in text.split(",") if part.strip()]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=sizes, default=[100_000, 1_000_000],
                   help="generated edges per size, comma-separated [100000,1000000]")
    p.add_argument("--quick", action="store_true", help="one 20k size and 3 documents: a smoke run of a few seconds")
    p.add_argument("--runs", type=int, default=9, help="documents absorbed in section (d) [9]")
    p.add_argument("--collection", type=int, default=10_000, help="facts of section (d)'s collection [10000]")
    p.add_argument("--resolution", type=float, default=1.0, help="Leiden resolution at level 0 [1.0]")
    p.add_argument("--seed", type=int, default=42, help="Leiden seed [42]")
    p.add_argument("--no-embed", action="store_true",
                   help="section (d) without the processor's embedding and store writes (detection and reports only)")
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)  # measure one size and print it as JSON
    args = p.parse_args()
    params = DetectionParams(resolution=args.resolution, seed=args.seed)
    if args.child:
        print(json.dumps(measure_size(args.child, params)))
        return
    if args.quick:
        args.sizes, args.runs = [20_000], 3
    print(f"{params.algorithm}; seed {params.seed}")
    for edges in args.sizes:
        result = run_size(edges, params)
        if result is not None:
            print_size(result)
    incremental_section(args.collection, args.runs, params, embed=not args.no_embed)
    print("\n(e) global-search overhead at 100k facts: bench/global_search.py")


if __name__ == "__main__":
    main()
