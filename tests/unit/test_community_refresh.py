"""The community processor refreshes locally: after the first build it reads only the triples around what
changed, re-detects only the communities holding changed entities, leaves every other community as it
was, covers every entity, runs its CPU-heavy steps off the event loop, and coalesces the updates that
arrive while a refresh runs into one next refresh."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from tracegraph.base.communities import detect as detection
from tracegraph.base.communities.graph import fact_graph
from tracegraph.base.communities.leiden_process import LeidenProcess
from tracegraph.base.communities.rdf import graph_fingerprint
from tracegraph.base.microbatch import MicroBatcher
from tracegraph.flow.derived import community as community_module
from tracegraph.flow.derived import community_facts
from tracegraph.flow.derived.community_facts import CollectionFacts, read_around
from tracegraph.flow.derived.maintainer import Changes, RunReport
from tracegraph.schemas.ingest import Metadata
from tracegraph.schemas.rdf import IriTerm, Triple
from tracegraph.schemas.search import GraphUpdate

_PATH = Path(__file__).resolve().parents[2] / "bench" / "community_refresh.py"
_SPEC = importlib.util.spec_from_file_location("bench_community_refresh", _PATH)
bench = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = bench
_SPEC.loader.exec_module(bench)
SCOPE = bench.SCOPE
KNOWS = IriTerm(iri="https://example.org/knows")


def link(a: str, b: str) -> Triple:
    return Triple(s=IriTerm(iri=f"urn:e:{a}"), p=KNOWS, o=IriTerm(iri=f"urn:e:{b}"))


def entities_of(facts: list[Triple]) -> set[str]:
    return {t.s.iri for t in facts} | {t.o.iri for t in facts if isinstance(t.o, IriTerm)}


# ---------------------------------------------------------------- the processor's copy of the graph

def test_replacing_the_triples_around_nodes_gives_what_a_full_read_gives():
    before = [link("a", "b"), link("b", "c"), link("c", "d"), link("x", "y")]
    after = [link("a", "b"), link("c", "d"), link("x", "y"), link("c", "e")]  # b-c removed, c-e added
    facts = CollectionFacts(before)
    changed = ["urn:e:b", "urn:e:c", "urn:e:e"]
    facts.replace_around(changed, [t for t in after if entities_of([t]) & set(changed)])
    assert set(facts.triples()) == set(after)
    assert facts.fingerprint() == graph_fingerprint(after)
    kept, built = facts.fact_graph(), fact_graph(after)
    assert kept.entities == built.entities and kept.weights.tolist() == built.weights.tolist()


async def test_a_hub_that_fills_the_per_node_limit_is_read_again_without_a_limit(monkeypatch):
    monkeypatch.setattr(community_facts, "AROUND_LIMIT", 3)
    hub = [link("hub", str(n)) for n in range(5)]
    tools = bench.InMemoryCollection(hub + [link("z", "w")])

    async def cut(nodes, limit):  # the store's `around` gives at most `limit` per node and direction
        return [t for t in tools.facts if t.s.iri in nodes][:limit]

    tools.around = cut
    assert set(await read_around(tools, ["urn:e:hub"])) == set(hub)


# ---------------------------------------------------------------- a refresh re-detects locally

@pytest.fixture
def planted():
    return bench.planted_bench.planted_facts(4000, domains=4, topics=3, cross_topic=0.1)


async def test_a_refresh_reads_only_around_the_changes_and_keeps_untouched_communities(planted):
    tools = bench.InMemoryCollection(list(planted.facts))
    processor = bench.processor()
    assert await processor.refresh(tools, SCOPE, Changes()) == "full"
    before = processor.states[SCOPE].hierarchy
    document = bench.planted_bench.new_document(planted, seed=5)
    tools.facts += document
    changed = entities_of(document)
    full_reads = []
    original = tools.match

    async def match(**kwargs):
        full_reads.append(kwargs)
        return await original(**kwargs)

    tools.match = match
    tools.read.clear()
    assert await processor.refresh(tools, SCOPE, Changes(nodes=changed)) == "incremental"
    assert not full_reads, "the whole graph was read again"
    assert 0 < sum(tools.read) < len(tools.facts) / 4

    after = processor.states[SCOPE].hierarchy
    level0 = {c.id: c for c in after.levels[0]}
    untouched = [c for c in before.levels[0] if changed.isdisjoint(c.members)]
    assert untouched and len(untouched) < len(before.levels[0])
    assert all(level0.get(c.id) == c or level0[c.id].members == c.members for c in untouched)
    coverage = await processor.coverage(tools, SCOPE)  # from a full read of the graph as it is now
    assert coverage.complete and changed <= coverage.wanted
    assert sorted(m for c in after.levels[0] for m in c.members) == sorted(coverage.wanted)


async def test_detection_runs_off_the_event_loop(planted, monkeypatch):
    """The update waits for an event only the event loop can set: run on the loop, it would time out."""
    tools = bench.InMemoryCollection(list(planted.facts))
    processor = bench.processor()
    await processor.refresh(tools, SCOPE, Changes())
    loop_ran = threading.Event()
    real_update = detection.update

    def update(*args):
        assert loop_ran.wait(timeout=10), "the event loop was blocked while communities were detected"
        return real_update(*args)

    monkeypatch.setattr(community_module, "update", update)

    async def tick():
        await asyncio.sleep(0.05)
        loop_ran.set()

    document = bench.planted_bench.new_document(planted, seed=7)
    tools.facts += document
    ticker = asyncio.create_task(tick())
    assert await processor.refresh(tools, SCOPE, Changes(nodes=entities_of(document))) == "incremental"
    await ticker


# ---------------------------------------------------------------- coalescing during a bulk load

async def test_updates_arriving_during_a_refresh_make_one_more_refresh():
    processor = bench.processor()
    processor._locks = {SCOPE: asyncio.Lock()}
    processor.seen, processor.runs = {}, {SCOPE: RunReport()}
    processor._batcher = MicroBatcher(processor._refresh_all, window=0.01, max_items=100_000)
    processor.tools = lambda flow, scope: None  # type: ignore[method-assign]
    refreshed: list[set[str]] = []
    first_running, release = asyncio.Event(), asyncio.Event()

    async def refresh(tools, scope, changes):
        refreshed.append(set(changes.nodes))
        first_running.set()
        await release.wait()
        return "incremental"

    processor.refresh = refresh  # type: ignore[method-assign]
    flow = SimpleNamespace(id="flow-1")

    def update(n: int) -> GraphUpdate:
        return GraphUpdate(metadata=Metadata(id=f"urn:update:{n}", root="urn:doc", user=SCOPE[0],
                                             collection=SCOPE[1]), added=[link(str(n), "x")], nodes=[f"urn:e:{n}"])

    first = asyncio.create_task(processor.absorb(flow, update(0)))
    await first_running.wait()
    later = [asyncio.create_task(processor.absorb(flow, update(n))) for n in range(1, 21)]
    await asyncio.sleep(0.1)  # all twenty arrive while the first refresh runs
    release.set()
    await asyncio.gather(first, *later)
    await processor._batcher.aclose()
    assert refreshed == [{"urn:e:0"}, {f"urn:e:{n}" for n in range(1, 21)}]


# ---------------------------------------------------------------- Leiden in a process of its own

def test_leiden_in_its_own_process_finds_the_same_communities(planted):
    graph = fact_graph(planted.facts)
    process = LeidenProcess()
    try:
        assert detection.detect(graph, leiden=process).levels == detection.detect(graph).levels
    finally:
        process.close()
