"""community: each collection's hierarchical Leiden communities and their reports (RSN-14, RSN-15),
kept in urn:graph:community for global search.

On graph updates only the communities holding changed entities are re-detected
(base/communities/detect.update), and only communities whose members changed get a new report;
a community whose members stayed but whose parent changed is rewritten without a new report.
The collection's graph is read whole only for a first build, a rebuild or after a restart; a refresh
reads the triples around the changed entities into the processor's copy (community_facts). Leiden runs
in a child process (leidenalg holds the GIL) and the other CPU-heavy steps in worker threads, so the
event loop keeps serving; updates arriving during a refresh make one next refresh (the micro-batcher).
Reports are written by the LLM when one is configured, else offline from the graph's canonical relations
and architecture records, with the risks computed over them (each says which).
Every detection run is recorded (algorithm, resolution, seed, how many facts, their fingerprint)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from tracegraph.base.architecture.landscape import Landscape
from tracegraph.base.architecture.landscape_read import read_landscape
from tracegraph.base.architecture.risks import Risk, find_risks
from tracegraph.base.communities import reports as rp
from tracegraph.base.communities.architecture_report import architecture_report
from tracegraph.base.communities.detect import (
    Community, DetectionParams, Hierarchy, Leiden, detect, modularity, rewritten, run_leiden, update,
)
from tracegraph.base.communities.graph import FactGraph, fact_graph
from tracegraph.base.communities.leiden_process import LeidenProcess
from tracegraph.base.communities.rdf import (
    community_triples, detection_triples, detection_uri, graph_fingerprint, read_hierarchy, report_triples,
    report_uri,
)
from tracegraph.base.errors import LlmUnavailable, TraceGraphError
from tracegraph.base.provenance.query import now
from tracegraph.base.retrieval import history
from tracegraph.base.stores.protocol import COMMUNITY_GRAPH
from tracegraph.flow.derived.community_facts import CollectionFacts, read_around
from tracegraph.flow.derived.coverage import Coverage
from tracegraph.flow.derived.maintainer import (
    MAX_ROWS, Changes, DerivedIndexProcessor, Scope, runs_of, summary_methods,
)
from tracegraph.schemas.rdf import Triple
from tracegraph.schemas.search import GraphUpdate

log = logging.getLogger(__name__)
LLM_REPORTS_AT_ONCE = 4
RECORD_PREFIX = "urn:trustgraph:community"  # communities (…community:) and their reports (…community-report:)


@dataclass
class CommunityState:
    """A collection's communities as stored, and which detection run wrote each."""

    hierarchy: Hierarchy | None = None
    run_of: dict[str, str] = field(default_factory=dict)  # community or report IRI -> the detection run that wrote it
    facts: CollectionFacts | None = None  # the collection's graph as last read (None: read it whole next time)


def records(community: Community) -> tuple[str, ...]:
    """The IRIs a community's rewrite stores: its own, and its report's when it has one."""
    return (community.id, report_uri(community.id)) if rp.needs_report(community) else (community.id,)


class CommunityProcessor(DerivedIndexProcessor):
    name = "community"
    graph = COMMUNITY_GRAPH
    leiden: Leiden = staticmethod(run_leiden)  # started processors run Leiden in a process of their own

    async def start(self) -> None:
        self.params = DetectionParams(resolution=self.settings.community_resolution, seed=self.settings.community_seed)
        self.states: dict[Scope, CommunityState] = {}
        self.leiden = LeidenProcess()
        await asyncio.to_thread(self.leiden.warm)  # starting a process blocks: not on the event loop
        self._stack.push_async_callback(asyncio.to_thread, self.leiden.close)
        await super().start()

    def relevant(self, update: GraphUpdate) -> bool:
        return bool(update.added or update.removed or update.everything)

    async def refresh(self, tools, scope: Scope, changes: Changes) -> str:
        state = await self._state(tools, scope)
        if state.facts is None or changes.everything:
            state.facts = await asyncio.to_thread(CollectionFacts, await tools.match(limit=MAX_ROWS))
        else:  # only the triples around what changed are read again
            nodes = sorted(changes.nodes)
            state.facts.replace_around(nodes, await read_around(tools, nodes))
        graph = await asyncio.to_thread(state.facts.fact_graph)  # CPU-heavy steps run off the event loop
        if state.hierarchy is None or not state.hierarchy.levels or changes.everything:
            async for _ in self._full(tools, scope, state.facts.triples(), graph):
                pass
            return "full"
        started = now()
        result = await asyncio.to_thread(update, state.hierarchy, graph, changes.nodes, self.params, self.leiden)
        if not result.added and not result.removed:
            return "unchanged"
        rewrite = rewritten(state.hierarchy, result.hierarchy)
        renewed = list(result.added)
        reports = await self._reports(tools, scope, graph, [c for c in renewed if rp.needs_report(c)],
                                      await known_architecture(tools))
        fingerprint = await asyncio.to_thread(state.facts.fingerprint)
        run = detection_uri(fingerprint, started)
        gone = {*(c.id for c in result.removed), *(report_uri(c.id) for c in result.removed)}
        run_of = {node: by for node, by in state.run_of.items() if node not in gone}
        run_of.update({c.id: run for c in rewrite})
        run_of.update({node: run for c in renewed for node in records(c)})
        stale_runs = set(state.run_of.values()) - set(run_of.values())
        quality = await asyncio.to_thread(_modularity, graph, result.hierarchy)
        add = [*detection_triples(run, self.params, "incremental", started, now(), graph.fact_count,
                                  len(graph.entities), fingerprint, quality),
               *await asyncio.to_thread(lambda: [t for c in rewrite for t in community_triples(c, run)]),
               *[t for report, vector in reports for t in report_triples(report, run, vector)]]
        drop = [*[c.id for c in result.removed], *[report_uri(c.id) for c in result.removed],
                *[c.id for c in rewrite], *[report_uri(c.id) for c in renewed], *stale_runs]
        await self.save(tools, drop=drop, add=add)
        self.states[scope] = CommunityState(result.hierarchy, run_of, state.facts)
        log.info("community: %s/%s: %d communities re-detected, %d new, %d gone", *scope,
                 len(result.affected_level0_ids), len(renewed), len(result.removed))
        return "incremental"

    async def rebuild(self, tools, scope: Scope) -> AsyncIterator[str]:
        facts = await tools.match(limit=MAX_ROWS)
        yield f"read {len(facts):,} triples of the collection's graph"
        self.states.setdefault(scope, CommunityState()).facts = await asyncio.to_thread(CollectionFacts, facts)
        async for line in self._full(tools, scope, facts, await asyncio.to_thread(fact_graph, facts)):
            yield line

    async def _full(self, tools, scope: Scope, facts: Sequence[Triple], graph: FactGraph) -> AsyncIterator[str]:
        started = now()
        hierarchy = await asyncio.to_thread(detect, graph, self.params, self.leiden)
        sizes = ", ".join(f"level {i}: {len(level)}" for i, level in enumerate(hierarchy.levels)) or "none"
        yield f"detected communities over {graph.fact_count:,} facts and {len(graph.entities):,} entities ({sizes})"
        everything = list(hierarchy.communities())
        reported = [c for c in everything if rp.needs_report(c)]
        known = await known_architecture(tools)
        yield f"read the architecture: {len(known[0].dependencies):,} dependencies, {len(known[1]):,} risks"
        reports = []
        for start in range(0, len(reported), 200):
            reports += await self._reports(tools, scope, graph, reported[start:start + 200], known)
            yield f"wrote {len(reports):,} of {len(reported):,} community reports"
        fingerprint = await asyncio.to_thread(graph_fingerprint, facts)
        run = detection_uri(fingerprint, started)
        quality = await asyncio.to_thread(_modularity, graph, hierarchy)
        add = [*detection_triples(run, self.params, "full", started, now(), graph.fact_count, len(graph.entities),
                                  fingerprint, quality),
               *await asyncio.to_thread(lambda: [t for c in everything for t in community_triples(c, run)]),
               *[t for report, vector in reports for t in report_triples(report, run, vector)]]
        await self.save(tools, drop_all=True, add=add)
        kept = self.states.get(scope)
        self.states[scope] = CommunityState(hierarchy, dict.fromkeys([n for c in everything for n in records(c)], run),
                                            kept.facts if kept and kept.facts is not None else CollectionFacts(facts))
        yield f"stored {len(add):,} triples in {COMMUNITY_GRAPH}"

    async def _reports(self, tools, scope: Scope, graph: FactGraph, communities: Sequence[Community],
                       known: tuple[Landscape, list[Risk]]):
        """A report per community (the LLM's when it can, else offline from the architecture `known`)
        with its embedding."""
        gate = asyncio.Semaphore(LLM_REPORTS_AT_ONCE)
        llm = [True]  # cleared once the LLM says it is not configured

        async def one(community: Community) -> rp.Report:
            offline = await asyncio.to_thread(architecture_report, graph, community, *known)
            if not llm[0]:
                return offline
            async with gate:
                try:
                    done = await tools.complete(rp.REPORT_SYSTEM, rp.report_prompt(graph, community, offline.key_facts))
                except LlmUnavailable:
                    llm[0] = False
                    return offline
            written = rp.parse_report(community.id, done.text, offline.key_facts, offline.key_entities, done.model)
            return written or offline

        reports = list(await asyncio.gather(*(one(c) for c in communities)))
        self.runs[scope].method = summary_methods(r.method for r in reports) or self.runs[scope].method
        vectors = await tools.embed([f"{r.title}. {r.summary}" for r in reports]) if reports else []
        return list(zip(reports, vectors))

    async def _state(self, tools, scope: Scope) -> CommunityState:
        """The collection's communities as stored (read once per process; this process writes them)."""
        if scope not in self.states:
            stored = await self.stored(tools)
            hierarchy = read_hierarchy(stored, self.params)
            self.states[scope] = CommunityState(hierarchy if hierarchy.levels else None, runs_of(stored, RECORD_PREFIX))
        return self.states[scope]

    async def coverage(self, tools, scope: Scope) -> Coverage:
        state = await self._state(tools, scope)
        linked = (await asyncio.to_thread(fact_graph, await tools.match(limit=MAX_ROWS))).entities
        members = state.hierarchy.levels[0] if state.hierarchy and state.hierarchy.levels else []
        return Coverage.of("entities", linked, (m for c in members for m in c.members))

    async def repair(self, tools, scope: Scope, gap: Coverage) -> str:
        """Re-detect around the entities missing or gone (a full detection when there are no communities)."""
        return await self.refresh(tools, scope, Changes(nodes=set(gap.missing | gap.extra)))

    async def counts(self, tools, scope: Scope) -> dict[str, int]:
        state = await self._state(tools, scope)
        levels = state.hierarchy.levels if state.hierarchy else []
        reports = sum(1 for level in levels for c in level if rp.needs_report(c))
        return {**{f"communities-level-{i}": len(level) for i, level in enumerate(levels)}, "reports": reports}


async def known_architecture(tools) -> tuple[Landscape, list[Risk]]:
    """The collection's landscape and its risks as of now, for the reports (empty when the store cannot
    be asked: the reports then tell their communities by their relations alone)."""
    try:
        landscape = await read_landscape(lambda query, limit: history.rows(tools, query, max(1, limit)))
    except TraceGraphError as exc:
        log.warning("community: the architecture could not be read (%s); reports without it", exc)
        return Landscape(), []
    return landscape, find_risks(landscape, datetime.now(UTC))


def _modularity(graph: FactGraph, hierarchy: Hierarchy) -> float | None:
    return round(modularity(graph, hierarchy, 0), 4) if hierarchy.levels else None
