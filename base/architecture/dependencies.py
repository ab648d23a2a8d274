"""An entity's dependency tree: what it depends on, calls, uses or imports (direction "out"), or what
does so to it ("in"), up to three edges away. One query per level; an entity already on the path from
the root is shown once more, marked as a cycle, and not expanded again, so cycles are reported, not looped."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from tracegraph.base.architecture import at_date, graph
from tracegraph.base.architecture.graph import Entity
from tracegraph.base.architecture.verbs import Verbs
from tracegraph.base.stores.keyword import readable
from tracegraph.base.temporal.query import Rows, records_for
from tracegraph.schemas.architecture import DependencyEdge, DependencyNode, DependencyResponse
from tracegraph.schemas.rdf import Triple, fact_key

MAX_EDGES_PER_LEVEL = 2_000


@dataclass(frozen=True, slots=True)
class Step:
    """One edge in the asked direction: `source` depends on `target` (out), or `target` depends on `source` (in)."""

    source: str
    target: str
    fact: Triple


def steps(facts: Sequence[Triple], frontier: set[str], verbs: Verbs, direction: str) -> list[Step]:
    """The dependency edges leaving the frontier in the asked direction, read by each predicate's voice:
    "A uses B" and "B is used by A" both mean A depends on B."""
    out = []
    for fact in facts:
        voice = verbs.voice(fact.p.iri)
        if voice is None:
            continue
        dependent, dependency = (fact.s.iri, fact.o.iri) if voice == "active" else (fact.o.iri, fact.s.iri)
        source, target = (dependent, dependency) if direction == "out" else (dependency, dependent)
        if source in frontier and source != target:
            out.append(Step(source, target, fact))
    return list({(s.source, s.target, fact_key(s.fact)): s for s in out}.values())


async def dependencies(rows: Rows, root: Entity, *, depth: int, direction: str, verbs: Verbs,
                       max_edges: int = 200, as_of: str | None = None) -> DependencyResponse:
    """The tree, nearest levels first: once `max_edges` edges are kept (a hub has thousands at depth 3),
    the rest are left out and `truncated` says so. `as_of`: the edges that held then (at_date.py)."""
    children: dict[str, list[Step]] = defaultdict(list)
    frontier, seen, truncated, kept = {root.iri}, {root.iri}, False, 0
    for _ in range(depth):
        facts = await at_date.edges(rows, sorted(frontier), as_of, limit=MAX_EDGES_PER_LEVEL + 1,
                                    endings=verbs.endings)
        truncated |= len(facts) > MAX_EDGES_PER_LEVEL
        level = sorted(steps(facts, frontier, verbs, direction), key=lambda s: (s.source, s.target, s.fact.p.iri))
        if kept + len(level) > max_edges:
            level, truncated = level[: max_edges - kept], True
        kept += len(level)
        for step in level:
            children[step.source].append(step)
        frontier = {s.target for s in level} - seen
        seen |= frontier
        if not frontier:
            break
    used = [s for listed in children.values() for s in listed]
    names = await graph.labels(rows, [root.iri, *{e for s in used for e in (s.source, s.target)}])
    names[root.iri] = root.label
    cited = await graph.sources(rows, [s.fact for s in used])
    weights = await _weights(rows, [s.fact for s in used])
    cycles: list[list[str]] = []
    edges: list[DependencyEdge] = []

    def grow(entity: str, level: int, path: tuple[str, ...]) -> DependencyNode:
        node_children = []
        if level < depth:
            by_target: dict[str, list[Step]] = defaultdict(list)  # two facts ("depends on", "runs on"): one child
            for step in children.get(entity, []):
                by_target[step.target].append(step)
            for target in sorted(by_target, key=lambda t: names[t].lower()):
                edges.extend(DependencyEdge(
                    source=step.source, target=step.target, source_label=names[step.source],
                    target_label=names[step.target], predicate=step.fact.p.iri,
                    predicate_label=readable(step.fact.p.iri), depth=level + 1,
                    weight=weights.get(fact_key(step.fact), 1.0), sources=cited.get(fact_key(step.fact), []))
                    for step in by_target[target])
                step = by_target[target][0]
                if step.target in path:
                    loop = [names[e] for e in path[path.index(step.target):]] + [names[step.target]]
                    cycles.append(loop)
                    node_children.append(DependencyNode(entity=step.target, label=names[step.target],
                                                        depth=level + 1, cycle=True))
                else:
                    node_children.append(grow(step.target, level + 1, (*path, step.target)))
        return DependencyNode(entity=entity, label=names[entity], depth=level, children=node_children)

    tree = grow(root.iri, 0, (root.iri,))
    unique_cycles = list({_rotation(c): c for c in cycles}.values())
    return DependencyResponse(root=tree, edges=list({(e.source, e.target, e.predicate): e for e in edges}.values()),
                              cycles=unique_cycles, predicates=list(verbs.active), truncated=truncated)


def _rotation(cycle: list[str]) -> tuple[str, ...]:
    """One key for a cycle whichever entity it is told from (A→B→A and B→A→B)."""
    ring = cycle[:-1]
    start = ring.index(min(ring))
    return tuple(ring[start:] + ring[:start])


async def _weights(rows: Rows, facts: Sequence[Triple]) -> dict[str, float]:
    """Each fact's extraction confidence: the best of its active records' (history on); none recorded → 1.0."""
    if not facts:
        return {}
    found = await records_for(rows, facts)
    weights = {}
    for key, records in found.items():
        rated = [r.confidence for r in records if r.confidence is not None and r.active]
        if rated:
            weights[key] = round(max(rated), 3)
    return weights
