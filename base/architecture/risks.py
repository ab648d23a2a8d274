"""Architectural risks computed from a collection's landscape (landscape.py): pure functions, so a
hand-made graph gives exactly the risks expected. Each risk names its entities, carries the facts it
rests on (with their documents) and a severity from 0 to 1 whose formula `measure` states:

- single point of failure: at least `min_dependents` entities depend on it directly, and `n` of the `N`
  other entities in dependencies would stop with it (those depending on it directly or through others
  with no alternative of the same kind on the way; members of its own dependency cycle belong to the
  cycle's risk): 0.3 + 0.6 × √(n / N), + 0.15 when an incident names it;
- dependency hub: many depend on it but each has an alternative (0.1 per dependent, at most 0.4), or it
  depends directly on `fan_out` or more others (0.3 + 0.03 per dependency, at most 0.6);
- dependency cycle (entities that depend on each other in a loop): 0.4 + 0.05 per member, at most 0.7,
  + 0.15 when one incident names two or more of them;
- incident (a post-mortem's failure pattern): 0.25 + 0.45 × recency, which halves every year;
- disputed ownership (current owners from different sources with no owner in common): 0.5, + 0.1 when
  one side still names an owner a later statement replaced;
- stale ownership (every source naming the owner is dated, the newest more than two years old): 0.3 +
  0.1 per year beyond, at most 0.5;
- superseded still cited (something replaced, superseded or deprecated that current facts still depend
  on or call live, or that is the only source of current facts): 0.4 + 0.05 per citing fact, at most 0.6.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import igraph

from tracegraph.base.architecture.graph import name_key
from tracegraph.base.architecture.landscape import (
    LIVE_STATUSES, RETIRED_STATUSES, Dependency, Evidence, Landscape, OwnerClaim, place,
)
from tracegraph.base.architecture.memory import recency
from tracegraph.base.extraction.vocabulary import REPLACED_BY, STATUS
from tracegraph.base.provenance.vocab import RDF
from tracegraph.schemas.architecture import Source
from tracegraph.schemas.rdf import IriTerm

SINGLE_POINT, HUB, CYCLE = "single-point-of-failure", "dependency-hub", "dependency-cycle"
INCIDENT_RISK, DISPUTED, STALE = "incident", "disputed-ownership", "stale-ownership"
SUPERSEDED = "superseded-still-cited"
KIND_NAMES = {SINGLE_POINT: "single point of failure", HUB: "dependency hub", CYCLE: "dependency cycle",
              INCIDENT_RISK: "incident", DISPUTED: "disputed ownership", STALE: "stale ownership",
              SUPERSEDED: "superseded but still cited"}
INCIDENT_BONUS = 0.15
DAY_SECONDS = 86_400


@dataclass(frozen=True, slots=True)
class RiskParams:
    min_dependents: int = 2  # direct dependents that make a hub
    fan_out: int = 5  # direct dependencies that make a hub
    incident_half_life_days: float = 365.0
    stale_after_days: int = 730


@dataclass(frozen=True, slots=True)
class Risk:
    kind: str
    title: str
    detail: str  # what the facts say, in a sentence or two
    severity: float  # 0 to 1
    measure: str  # how the severity was computed
    entities: tuple[str, ...]  # the entities at risk, the one it is about first
    evidence: tuple[Evidence, ...]

    @property
    def documents(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.document for e in self.evidence for s in e.sources if s.document))


def find_risks(landscape: Landscape, today: datetime, params: RiskParams = RiskParams()) -> list[Risk]:
    """Every risk the landscape shows, most severe first."""
    graph = DependencyGraph(landscape)
    risks = [*single_points_of_failure(landscape, graph, params), *fan_out_hubs(landscape, graph, params),
             *dependency_cycles(landscape, graph),
             *incidents(landscape, today, params), *ownership_risks(landscape, today, params),
             *superseded_still_cited(landscape)]
    return sorted(risks, key=lambda r: (-r.severity, r.kind, r.title))


class DependencyGraph:
    """Who depends on whom (one edge per pair, with every fact stating it), its cycles, and alternatives."""

    def __init__(self, landscape: Landscape) -> None:
        self.landscape = landscape
        self.out: dict[str, dict[str, list[Dependency]]] = defaultdict(lambda: defaultdict(list))
        self.into: dict[str, dict[str, list[Dependency]]] = defaultdict(lambda: defaultdict(list))
        for d in landscape.dependencies:
            self.out[d.dependent][d.dependency].append(d)
            self.into[d.dependency][d.dependent].append(d)
        self.entities = sorted({*self.out, *self.into})
        self.cycles = self._cycles()
        self._cycle_of = {e: cycle for cycle in self.cycles for e in cycle}

    def cycle_of(self, entity: str) -> frozenset[str]:
        """The entities in a dependency loop with `entity` (itself included; just itself when in none)."""
        return self._cycle_of.get(entity, frozenset({entity}))

    def kind(self, entity: str) -> frozenset[str]:
        """Its types and categories, and the last word of a name of two words or more ("Orbis Cloud": cloud)."""
        words = self.landscape.name(entity).lower().split()
        return self.landscape.kinds.get(entity, frozenset()) | ({f"name:{words[-1]}"} if len(words) > 1 else set())

    def alternatives(self, dependent: str, dependency: str) -> list[str]:
        """Other dependencies of `dependent` of the same kind as `dependency` (a second cloud, a replica)."""
        mine = self.kind(dependency)
        return sorted(o for o in self.out.get(dependent, {}) if o != dependency and mine & self.kind(o))

    def exposure(self, entity: str) -> tuple[list[str], list[Dependency]]:
        """Who would stop with `entity`: every entity depending on it, directly or through others, with no
        alternative on the way (its own cycle's members are walked through, not counted), nearest first;
        and the dependency facts that tie them to it."""
        own = self.cycle_of(entity)
        seen, stopped, ties = {entity}, [], []
        frontier = deque([entity])
        while frontier:
            current = frontier.popleft()
            for dependent in sorted(self.into.get(current, {})):
                if dependent in seen or self.alternatives(dependent, current):
                    continue
                seen.add(dependent)
                frontier.append(dependent)
                ties.append(self.into[current][dependent][0])
                if dependent not in own:
                    stopped.append(dependent)
        return stopped, ties

    def loop_through(self, cycle: frozenset[str]) -> list[str]:
        """A shortest loop inside the cycle, told from its most connected member back to it."""
        start = min(cycle, key=lambda e: (-len(self.into.get(e, {})) - len(self.out.get(e, {})),
                                          self.landscape.name(e).lower()))
        previous: dict[str, str] = {}
        frontier = deque([start])
        while frontier:
            current = frontier.popleft()
            for nxt in sorted(self.out.get(current, {})):
                if nxt == start:
                    path = [current]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if nxt in cycle and nxt not in previous:
                    previous[nxt] = current
                    frontier.append(nxt)
        return [start, start]

    def _cycles(self) -> list[frozenset[str]]:
        """Strongly connected components of two or more entities."""
        entities = self.entities
        index = {e: i for i, e in enumerate(entities)}
        edges = [(index[a], index[b]) for a, targets in self.out.items() for b in targets]
        graph = igraph.Graph(n=len(entities), edges=edges, directed=True)
        return [frozenset(entities[v] for v in part) for part in graph.connected_components(mode="strong")
                if len(part) > 1]


def single_points_of_failure(landscape: Landscape, graph: DependencyGraph, params: RiskParams) -> list[Risk]:
    risks = []
    for entity in sorted(graph.into):
        own = graph.cycle_of(entity)
        direct = [d for d in graph.into[entity] if d not in own]
        if len(direct) < params.min_dependents:
            continue
        stopped, ties = graph.exposure(entity)
        direct_facts = [dep.evidence for d in direct for dep in graph.into[entity][d]]
        hit = [r for r in landscape.incidents() if entity in r.entities("caused-by", "affected")]
        name = landscape.name(entity)
        covered = [d for d in direct if graph.alternatives(d, entity)]
        said = [f"{len(direct)} entities depend on it directly ({landscape.names(direct)})"]
        if covered:
            said.append(f"{landscape.names(covered)} also {_has(covered)} an alternative of the same kind "
                        f"({landscape.names({a for d in covered for a in graph.alternatives(d, entity)})})")
        if not stopped:
            severity = round(min(0.4, 0.1 * len(direct)), 2)
            risks.append(Risk(HUB, f"{name} is a dependency hub", "; ".join(said) + ".", severity,
                              f"0.1 per direct dependent ({len(direct)}), at most 0.4", (entity, *direct),
                              tuple(direct_facts)))
            continue
        said.append(f"{len(stopped)} would stop with it ({landscape.names(stopped)})")
        others = max(len(graph.entities) - 1, 1)
        severity = 0.3 + 0.6 * math.sqrt(len(stopped) / others)
        measure = (f"0.3 + 0.6 × √({len(stopped)} that would stop with it / {others} other entities in dependencies)"
                   f" = {severity:.2f}")
        if hit:
            said.append(f"an incident names it: {_record_titles(hit)}")
            severity, measure = severity + INCIDENT_BONUS, measure + f", + {INCIDENT_BONUS} (an incident names it)"
        evidence = _unique([*direct_facts, *(t.evidence for t in ties), *_incident_evidence(hit, {entity})])
        risks.append(Risk(SINGLE_POINT, f"{name} is a single point of failure", "; ".join(said) + ".",
                          round(min(severity, 1.0), 2), measure, (entity, *stopped), evidence))
    return risks


def fan_out_hubs(landscape: Landscape, graph: DependencyGraph, params: RiskParams) -> list[Risk]:
    """Entities that depend directly on many others: an outage of any of them reaches it."""
    risks = []
    for entity, targets in sorted(graph.out.items()):
        if len(targets) < params.fan_out:
            continue
        severity = round(min(0.6, 0.3 + 0.03 * len(targets)), 2)
        named = sorted(targets, key=lambda t: landscape.name(t).lower())
        risks.append(Risk(HUB, f"{landscape.name(entity)} is a dependency hub",
                          f"It depends directly on {len(targets)} others ({landscape.names(named)}): an outage or a "
                          "breaking change of any of them reaches it.", severity,
                          f"0.3 + 0.03 × {len(targets)} direct dependencies, at most 0.6 = {severity:.2f}",
                          (entity, *named), tuple(d.evidence for t in named for d in targets[t])))
    return risks


def dependency_cycles(landscape: Landscape, graph: DependencyGraph) -> list[Risk]:
    risks = []
    for cycle in graph.cycles:
        loop = graph.loop_through(cycle)
        facts = [graph.out[a][b][0].evidence for a, b in zip(loop, loop[1:])]
        facts += [d.evidence for a in sorted(cycle) for b, found in sorted(graph.out[a].items()) if b in cycle
                  for d in found]
        hit = [r for r in landscape.incidents() if len(cycle & set(r.entities())) >= 2]
        severity = min(0.7, 0.4 + 0.05 * len(cycle))
        measure = f"0.4 + 0.05 × {len(cycle)} members, at most 0.7 = {severity:.2f}"
        shown = " → ".join(landscape.name(e) for e in loop)
        detail = (f"{landscape.names(loop[:-1])} depend on each other in a loop"
                  + (f" of {len(cycle)} entities in all" if len(cycle) > len(loop) - 1 else "")
                  + ": a change or an outage of one of them reaches the others")
        if hit:
            detail += f"; an incident names {len(cycle & set(hit[0].entities()))} of them: {_record_titles(hit)}"
            severity, measure = severity + INCIDENT_BONUS, measure + f", + {INCIDENT_BONUS} (an incident names several)"
        members = tuple(dict.fromkeys([*loop[:-1], *sorted(cycle)]))
        risks.append(Risk(CYCLE, f"Dependency cycle: {shown}", detail + ".", round(min(severity, 1.0), 2), measure,
                          members, _unique([*facts, *_incident_evidence(hit, cycle)])))
    return risks


def incidents(landscape: Landscape, today: datetime, params: RiskParams) -> list[Risk]:
    risks = []
    for record in landscape.incidents():
        hit = record.entities("affected") or record.entities()
        causes = [e for e in record.entities("caused-by") if e not in hit]
        fresh = recency(record.date, today, params.incident_half_life_days)
        severity = 0.25 + 0.45 * fresh
        when = record.date or "an unknown date"
        detail = f"{record.title} ({place(record.source)}) hit {landscape.names(hit[:5])}" + \
                 (f" and {len(hit) - 5} more" if len(hit) > 5 else "") + \
                 (f"; caused by {landscape.names(causes[:5])}" if causes else "") + \
                 (f". Root cause: {_clipped(record.cause)}" if record.cause else "")
        title = record.title if record.date and record.date in record.title else f"Incident on {when}: {record.title}"
        risks.append(Risk(INCIDENT_RISK, title, detail.rstrip(".") + ".", round(severity, 2),
                          f"0.25 + 0.45 × recency {fresh:.2f} (halving every {params.incident_half_life_days:g} days)"
                          f" = {severity:.2f}", (*hit, *causes), record.evidence))
    return risks


def ownership_risks(landscape: Landscape, today: datetime, params: RiskParams) -> list[Risk]:
    """Disputed ownership, else stale ownership, per entity."""
    claims: dict[str, list[OwnerClaim]] = defaultdict(list)
    for claim in landscape.owners:
        claims[claim.entity].append(claim)
    risks = []
    for entity, found in sorted(claims.items()):
        risk = _disputed(landscape, entity, found) or _stale(landscape, entity, found, today, params)
        if risk is not None:
            risks.append(risk)
    return risks


def _disputed(landscape: Landscape, entity: str, claims: Sequence[OwnerClaim]) -> Risk | None:
    current = [c for c in claims if c.holds]
    graph_side = [c for c in current if c.origin == "graph"]
    rule_side = [c for c in current if c.origin == "codeowners"]
    owned = [c for c in graph_side if c.relation == "is owned by"]
    sides = None
    if graph_side and rule_side and not _keys(graph_side) & _keys(rule_side):
        sides = (graph_side, rule_side, "the graph", "CODEOWNERS")
    elif len(_keys(owned)) > 1 and len({s.document for c in owned for s in c.evidence.sources}) > 1:
        newest = max(owned, key=lambda c: c.evidence.newest)
        sides = ([newest], [c for c in owned if name_key(c.owner) != name_key(newest.owner)], "one source", "another")
    if sides is None:
        return None
    first, second, first_name, second_name = sides
    former = [c for c in claims if not c.holds and name_key(c.owner) in _keys([*first, *second])]
    behind = second_name if {name_key(c.owner) for c in former} & _keys(second) else first_name
    severity, measure = 0.5, "0.5 (current owners from different sources, none in common)"
    detail = (f"{first_name} names {_owners(landscape, first)}; {second_name} names {_owners(landscape, second)}")
    if former:
        replaced = "; ".join(f"{landscape.name(c.owner)} {_past(c.relation)} it until {c.until} "
                             f"({place(c.evidence.sources[0] if c.evidence.sources else None)})" for c in former)
        detail += f". {replaced}, so {behind} looks out of date"
        severity, measure = 0.6, measure + ", + 0.1 (one side names an owner a later statement replaced)"
    return Risk(DISPUTED, f"Ownership of {landscape.name(entity)} is disputed", _capitalised(detail) + ".", severity,
                measure,
                (entity, *dict.fromkeys(c.owner for c in [*first, *second])),
                _unique([c.evidence for c in [*first, *second, *former]]))


def _stale(landscape: Landscape, entity: str, claims: Sequence[OwnerClaim], today: datetime,
           params: RiskParams) -> Risk | None:
    current = [c for c in claims if c.holds]
    if not current or any(not s.date for c in current for s in c.evidence.sources) \
            or not all(c.evidence.sources for c in current):
        return None
    newest = max(c.evidence.newest for c in current)
    age = _age_days(newest, today)
    if age is None or age <= params.stale_after_days:
        return None
    beyond = (age - params.stale_after_days) / 365
    severity = round(min(0.5, 0.3 + 0.1 * beyond), 2)
    return Risk(STALE, f"Ownership of {landscape.name(entity)} rests only on old sources",
                f"{_owners(landscape, current)}, and no source newer than {newest} says so "
                f"({age // 365} years before {today.date().isoformat()}).", severity,
                f"0.3 + 0.1 × {beyond:.1f} years beyond {params.stale_after_days} days, at most 0.5 = {severity:.2f}",
                (entity, *dict.fromkeys(c.owner for c in current)), _unique([c.evidence for c in current]))


def superseded_still_cited(landscape: Landscape) -> list[Risk]:
    risks = []
    replaced: dict[str, list[Evidence]] = defaultdict(list)
    successor: dict[str, list[str]] = defaultdict(list)
    for item in landscape.lifecycle:
        if item.relation == REPLACED_BY:
            replaced[item.entity].append(item.evidence)
            successor[item.entity].append(item.value)
        elif item.relation == STATUS and item.value in RETIRED_STATUSES:
            replaced[item.entity].append(item.evidence)
    for old, why in sorted(replaced.items()):
        users = [d for d in landscape.dependencies if d.dependency == old]
        live = [i for i in landscape.lifecycle if i.entity == old and i.relation == STATUS and i.value in LIVE_STATUSES]
        citing = [*(d.evidence for d in users), *(i.evidence for i in live)]
        if not citing:
            continue
        said = [f"replaced by {landscape.names(successor[old])}"] if successor[old] else []
        said += [f"{landscape.names(dict.fromkeys(d.dependent for d in users))} still "
                f"{'depends' if len(set(d.dependent for d in users)) == 1 else 'depend'} on it"] if users else []
        said += [f"a source still calls it {i.value} ({place(_first(i.evidence))})" for i in live]
        risks.append(_superseded_risk(landscape.name(old), "; ".join(said), (old, *(d.dependent for d in users)),
                                      [*why, *citing], len(citing)))
    for record in landscape.records:
        if record.kind != "decision" or record.status not in RETIRED_STATUSES or record.source is None:
            continue
        resting = [d for d in landscape.dependencies if d.evidence.sources
                   and {s.document for s in d.evidence.sources} == {record.source.document}]
        if resting:
            said = (f"its document is the only source of {len(resting)} current fact(s): "
                    + "; ".join(f"{landscape.name(d.dependent)} {d.relation} {landscape.name(d.dependency)}"
                                for d in resting[:3]))
            risks.append(_superseded_risk(f"{record.title} ({record.status})", said,
                                          tuple(dict.fromkeys(d.dependent for d in resting)),
                                          [*record.evidence[:1], *(d.evidence for d in resting)], len(resting)))
    return risks


def _superseded_risk(what: str, said: str, entities: tuple[str, ...], evidence: list[Evidence], citing: int) -> Risk:
    severity = round(min(0.6, 0.4 + 0.05 * citing), 2)
    return Risk(SUPERSEDED, f"{what} is superseded but still cited", _capitalised(said) + ".", severity,
                f"0.4 + 0.05 × {citing} citing fact(s), at most 0.6 = {severity:.2f}", tuple(dict.fromkeys(entities)),
                _unique(evidence))


# ---------------------------------------------------------------- wording and small helpers

def _keys(claims: Iterable[OwnerClaim]) -> set[str]:
    return {name_key(c.owner) for c in claims}


def _owners(landscape: Landscape, claims: Sequence[OwnerClaim]) -> str:
    """"Grid Analytics team (is owned by; skyline-review-2025, 2025-09-15)"; owners named by one source
    alike share the parenthesis: "Forecasting Guild and Ada Kern (CODEOWNERS line 9)"."""
    said: dict[str, list[str]] = defaultdict(list)  # what and where -> owners
    for claim in claims:
        where = "; ".join(dict.fromkeys(place(s) for s in claim.evidence.sources)) or "no source recorded"
        how = where if claim.origin == "codeowners" else f"{claim.relation}; {where}"
        if claim.owner not in said[how]:
            said[how].append(claim.owner)
    parts = [f"{landscape.names(owners)} ({how})" for how, owners in said.items()]
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else "".join(parts)


def _first(evidence: Evidence) -> Source | None:
    return evidence.sources[0] if evidence.sources else None


def _past(relation: str) -> str:
    """"is owned by" → "owned"; "CODEOWNERS" → "was named owner of"."""
    words = relation.split()
    return words[1] if len(words) == 3 and words[0] == "is" else "was named owner of"


def _clipped(text: str, most: int = 240) -> str:
    """The first sentence of a text, and at most `most` characters of it."""
    first = " ".join(text.split()).split(". ")[0]
    return first if len(first) <= most else first[: most - 1].rsplit(" ", 1)[0] + " …"


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _has(entities: Sequence[str]) -> str:
    return "has" if len(entities) == 1 else "have"


def _record_titles(records: Sequence) -> str:
    return "; ".join(f"{r.title} ({r.date})" if r.date else r.title for r in records)


def _incident_evidence(records: Sequence, entities: Iterable[str]) -> list[Evidence]:
    """Each incident's type fact and its links to `entities`."""
    wanted = set(entities)
    return [e for r in records for e in r.evidence
            if e.fact.p.iri == RDF.type.iri or (isinstance(e.fact.o, IriTerm) and e.fact.o.iri in wanted)]


def _unique(evidence: Iterable[Evidence]) -> tuple[Evidence, ...]:
    return tuple(dict.fromkeys(evidence))


def _age_days(day: str, today: datetime) -> int | None:
    try:
        then = datetime.fromisoformat(day[:10]).replace(tzinfo=today.tzinfo)
    except ValueError:
        return None
    return int((today - then).total_seconds() // DAY_SECONDS)
