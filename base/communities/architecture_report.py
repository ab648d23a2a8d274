"""The offline report of a community, from what the graph knows rather than which names occur together:
its services, their dependencies (the extractor's canonical relations), their owners, the decisions and
incidents of the architecture memory that name them, and the computed risks that touch them. A community
with none of these (people, companies, places) is told by its relations, co-occurrence left out.

The report is derived from exactly its `key_facts`, as every report is: here the facts behind each line."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from tracegraph.base.architecture.landscape import INCIDENT, ArchitectureRecord, Dependency, Landscape
from tracegraph.base.architecture.risks import Risk
from tracegraph.base.communities.detect import Community
from tracegraph.base.communities.graph import FactGraph
from tracegraph.base.communities.reports import (
    OFFLINE, Report, entity_name, fact_sentence, key_entities, key_facts, structural_rating,
)
from tracegraph.base.extraction.vocabulary import DEPENDENCY_LABELS
from tracegraph.base.provenance.vocab import RDF
from tracegraph.schemas.rdf import IriTerm, Triple

CO_OCCURRENCE = "https://trustgraph.ai/r/mentioned-with"  # the offline extractor's "two names in one sentence"
RECORD_HEADINGS = {"decision": "Decisions", INCIDENT: "Incidents", "exception": "Exceptions to policy",
                   "memory": "Lessons and notes"}
METHOD = (f"{OFFLINE}from the graph's canonical relations and architecture records — services, dependencies, "
          "owners, decisions, incidents and computed risks, each line derived from its facts; no LLM")


def architecture_report(graph: FactGraph, community: Community, landscape: Landscape, risks: Sequence[Risk], *,
                        facts: int = 40, entities: int = 10, listed: int = 8) -> Report:
    """The community's report: what it holds of the landscape, with at most `listed` lines per section."""
    members = set(community.members)
    central = key_entities(graph, community, entities)
    rank = {e: i for i, e in enumerate(key_entities(graph, community, len(community.members)))}
    services = sorted((s for s in landscape.services() if s in members), key=lambda e: rank.get(e, len(rank)))
    dependencies = [d for d in landscape.dependencies if d.dependent in members]
    owners = [c for c in landscape.owners if c.entity in members and c.holds]
    records = [r for r in landscape.records if members & set(r.entities())]
    touching = [r for r in risks if members & set(r.entities)]
    names = [landscape.labels.get(e) or entity_name(graph, e) for e in (services or central)]
    rating, reason = _rating(graph, community, touching)
    lines = [f"Offline report (no LLM wrote this) of a level-{community.level} community of "
             f"{len(community.members)} entities, from its canonical relations and architecture records."]
    quoted: list[Triple] = []
    if services:
        lines.append(f"Services: {', '.join(names[:listed])}.")
    if dependencies:
        told = _dependency_lines(landscape, dependencies, rank)
        lines += ["Dependencies:", *(f"- {line}" for line, _ in told[:listed])]
        quoted += [f for _, found in told[:listed] for f in found]
    if owners:
        told = _owner_lines(landscape, owners, rank)
        lines += ["Owners:", *(f"- {line}" for line, _ in told[:listed])]
        quoted += [f for _, found in told[:listed] for f in found]
    for kind, heading in RECORD_HEADINGS.items():
        mine = [r for r in records if r.kind == kind]
        if mine:
            lines += [f"{heading}:", *(f"- {_record_line(landscape, r, members)}" for r in mine[:listed])]
            quoted += [e.fact for r in mine[:listed] for e in r.evidence[:1]]
    if touching:
        lines += ["Risks:", *(f"- {r.title} (severity {r.severity:.2f}): {r.detail}"
                              for r in touching[:listed])]
        quoted += [e.fact for r in touching[:listed] for e in r.evidence]
    shown = [f for f in key_facts(graph, community, facts) if _relation(f) and f not in quoted][:5 if quoted else facts]
    if shown:
        lines += ["Other relations:" if quoted else "Relations:",
                  *(f"- {fact_sentence(f, graph.labels)}." for f in shown)]
        quoted += shown
    title = (", ".join(names[:2]) + " and " + names[2] if len(names) > 2 else " and ".join(names)) or community.id
    return Report(community=community.id, title=title, summary="\n".join(lines),
                  key_entities=tuple(dict.fromkeys([*(s for s in services if s in members), *central]))[:entities],
                  key_facts=tuple(dict.fromkeys(quoted))[:facts], rating=rating, rating_reason=reason, method=METHOD)


def _relation(fact: Triple) -> bool:
    """A relation between two things: not a type, a value or a definition, and not mere co-occurrence."""
    return isinstance(fact.o, IriTerm) and fact.p.iri not in (CO_OCCURRENCE, RDF.type.iri)


def _rating(graph: FactGraph, community: Community, risks: Sequence[Risk]) -> tuple[float, str]:
    """The structural rating, raised to 10 × the worst risk's severity when that is higher: a small group
    holding a single point of failure matters more than its size says."""
    rating, reason = structural_rating(graph, community)
    worst = max((r.severity for r in risks), default=0.0)
    if 10 * worst > rating:
        return round(10 * worst, 1), f"10 × the severity of its worst risk ({worst:.2f}); {reason}"
    return rating, reason


def _dependency_lines(landscape: Landscape, dependencies: Sequence[Dependency],
                      rank: dict[str, int]) -> list[tuple[str, list[Triple]]]:
    """One line per dependent, relations in the vocabulary's order: "Skyline depends on Demand Feed and
    Orbis Cloud; runs on Orbis Cloud." — most central dependent first."""
    by_dependent: dict[str, dict[str, list[Dependency]]] = defaultdict(lambda: defaultdict(list))
    for d in dependencies:
        by_dependent[d.dependent][d.relation].append(d)
    told = []
    for dependent in sorted(by_dependent, key=lambda e: (rank.get(e, len(rank)), landscape.name(e).lower())):
        relations = by_dependent[dependent]
        parts = [f"{label} {landscape.names(sorted({d.dependency for d in relations[label]}, key=landscape.name))}"
                 for label in DEPENDENCY_LABELS if label in relations]
        told.append((f"{landscape.name(dependent)} {'; '.join(parts)}.",
                     [d.evidence.fact for label in DEPENDENCY_LABELS for d in relations.get(label, [])]))
    return told


def _owner_lines(landscape: Landscape, owners, rank: dict[str, int]) -> list[tuple[str, list[Triple]]]:
    """One line per owned entity: the graph's owners by relation, then what CODEOWNERS says."""
    by_entity = defaultdict(list)
    for claim in owners:
        by_entity[claim.entity].append(claim)
    told = []
    for entity in sorted(by_entity, key=lambda e: (rank.get(e, len(rank)), landscape.name(e).lower())):
        claims = by_entity[entity]
        said = defaultdict(list)
        for c in sorted(claims, key=lambda c: c.origin != "graph"):
            said["CODEOWNERS names" if c.origin == "codeowners" else c.relation].append(c.owner)
        parts = [f"{how} {landscape.names(dict.fromkeys(who))}" for how, who in said.items()]
        told.append((f"{landscape.name(entity)}: {'; '.join(parts)}.", [c.evidence.fact for c in claims]))
    return told


def _record_line(landscape: Landscape, record: ArchitectureRecord, members: set[str]) -> str:
    when = f"{record.date}, " if record.date else ""
    status = f"{record.status}, " if record.status else ""
    named = [e for e in record.entities() if e in members]
    where = record.source.title if record.source and record.source.title else "no document recorded"
    return f"{record.title} ({when}{status}{where}): names {landscape.names(named[:5])}."
