"""The architecture a collection's graph describes, as a small model the risk and report functions read
without a store: dependencies in the extractor's canonical vocabulary, who owns what (graph facts, the
CODEOWNERS rules deciding an entity's code path, and owners a later statement replaced), lifecycle facts
(replacements, statuses) and the decisions and incidents of the architecture memory. Every item keeps the
facts it rests on and their sources (document, line, date where the document gives one), so whatever is
concluded from it can say where it comes from. Read from a store by landscape_read.py."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from tracegraph.base.extraction.vocabulary import (
    DEPENDENCY_LABELS, OWNERSHIP_LABELS, REPLACED_BY, STATUS, SUPERSEDES,
)
from tracegraph.base.provenance.uris import relation_uri
from tracegraph.base.stores.keyword import readable
from tracegraph.schemas.architecture import Source
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Triple, fact_key

# Canonical predicate IRI -> its label, for the relations the landscape reads.
CANONICAL = {relation_uri(label): label
             for label in (*DEPENDENCY_LABELS, *OWNERSHIP_LABELS, REPLACED_BY, SUPERSEDES, STATUS)}
INCIDENT = "failure-pattern"  # the record kind a post-mortem gives
RETIRED_STATUSES = frozenset({"superseded", "deprecated", "retired", "decommissioned", "replaced", "obsolete"})
LIVE_STATUSES = frozenset({"accepted", "active", "stable", "current", "approved", "adopted"})


@dataclass(frozen=True, slots=True)
class Evidence:
    """A fact and the documents it was read from, dated where the document says when."""

    fact: Triple
    sources: tuple[Source, ...] = ()

    @property
    def newest(self) -> str:
        """The latest date among its sources ("" when none is dated)."""
        return max((s.date for s in self.sources if s.date), default="")


@dataclass(frozen=True, slots=True)
class Dependency:
    """`dependent` —relation→ `dependency` ("Skyline depends on Demand Feed")."""

    dependent: str
    dependency: str
    relation: str  # its canonical label
    evidence: Evidence


@dataclass(frozen=True, slots=True)
class OwnerClaim:
    """One source naming an owner of `entity`: a graph fact, or the CODEOWNERS rule deciding its code path."""

    entity: str
    owner: str
    relation: str  # "is owned by", "is led by" …, or "CODEOWNERS"
    origin: Literal["graph", "codeowners"]
    evidence: Evidence
    until: str = ""  # YYYY-MM-DD a later statement replaced it; "" while it holds

    @property
    def holds(self) -> bool:
        return not self.until


@dataclass(frozen=True, slots=True)
class ArchitectureRecord:
    """A decision, incident (failure pattern), exception to policy or memory, and the entities it names."""

    node: str
    kind: str  # "decision", "failure-pattern", "exception" or "memory"
    title: str
    date: str = ""  # YYYY-MM-DD
    status: str = ""
    links: tuple[tuple[str, str], ...] = ()  # (relation: why, affected, caused-by, excepts, concerns; entity)
    evidence: tuple[Evidence, ...] = ()  # its type fact and its links, with the document and line
    source: Source | None = None
    cause: str = ""  # an incident's root cause, a decision's rationale, as the document words it

    def entities(self, *relations: str) -> tuple[str, ...]:
        """The entities it names by those relations (any relation when none is given), first named first."""
        return tuple(dict.fromkeys(e for r, e in self.links if not relations or r in relations))


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """A lifecycle fact: `entity` is replaced by `other`, or has the status `value`."""

    entity: str
    relation: str  # REPLACED_BY or STATUS
    value: str  # the successor's IRI, or the status in lower case
    evidence: Evidence


@dataclass(frozen=True)
class Landscape:
    """Everything the risk and report functions need, with names for the entities in it."""

    dependencies: tuple[Dependency, ...] = ()
    owners: tuple[OwnerClaim, ...] = ()
    records: tuple[ArchitectureRecord, ...] = ()
    lifecycle: tuple[Lifecycle, ...] = ()
    kinds: Mapping[str, frozenset[str]] = field(default_factory=dict)  # entity -> its types and categories
    labels: Mapping[str, str] = field(default_factory=dict)

    def name(self, entity: str) -> str:
        return self.labels.get(entity) or readable(entity)

    def names(self, entities: Iterable[str]) -> str:
        """"A", "A and B", "A, B and C"."""
        listed = [self.name(e) for e in entities]
        if len(listed) < 2:
            return "".join(listed)
        return ", ".join(listed[:-1]) + " and " + listed[-1]

    def services(self) -> tuple[str, ...]:
        """The entities that take part in a dependency or have an owner, most connected first."""
        counts: dict[str, int] = {}
        for d in self.dependencies:
            for entity in (d.dependent, d.dependency):
                counts[entity] = counts.get(entity, 0) + 1
        for claim in self.owners:
            counts.setdefault(claim.entity, 0)
        return tuple(sorted(counts, key=lambda e: (-counts[e], self.name(e).lower())))

    def incidents(self) -> tuple[ArchitectureRecord, ...]:
        return tuple(r for r in self.records if r.kind == INCIDENT)


def assemble(facts: Sequence[Triple], *, cited: Mapping[str, Sequence[Source]] | None = None,
             records: Sequence[ArchitectureRecord] = (), rule_claims: Sequence[OwnerClaim] = (),
             former: Sequence[OwnerClaim] = (), kinds: Mapping[str, Iterable[str]] | None = None,
             labels: Mapping[str, str] | None = None) -> Landscape:
    """The landscape of the current canonical facts (`facts`; others are ignored), each with its sources
    (`cited`, by fact_key), beside the records, the CODEOWNERS claims and the former graph owners read
    elsewhere."""
    cited, kinds, labels = cited or {}, kinds or {}, labels or {}
    dependencies: list[Dependency] = []
    owners: list[OwnerClaim] = [*rule_claims, *former]
    lifecycle: list[Lifecycle] = []
    for fact in dict.fromkeys(facts):
        label = CANONICAL.get(fact.p.iri)
        if label is None or not isinstance(fact.s, IriTerm):
            continue
        evidence = Evidence(fact, tuple(cited.get(fact_key(fact), ())))
        if isinstance(fact.o, IriTerm) and label in DEPENDENCY_LABELS and fact.s.iri != fact.o.iri:
            dependencies.append(Dependency(fact.s.iri, fact.o.iri, label, evidence))
        elif isinstance(fact.o, IriTerm) and label in OWNERSHIP_LABELS:
            owners.append(OwnerClaim(fact.s.iri, fact.o.iri, label, "graph", evidence))
        elif isinstance(fact.o, IriTerm) and label in (REPLACED_BY, SUPERSEDES):
            old, new = (fact.s.iri, fact.o.iri) if label == REPLACED_BY else (fact.o.iri, fact.s.iri)
            lifecycle.append(Lifecycle(old, REPLACED_BY, new, evidence))
        elif isinstance(fact.o, LiteralTerm) and label == STATUS:
            lifecycle.append(Lifecycle(fact.s.iri, STATUS, fact.o.value.strip().lower(), evidence))
    return Landscape(tuple(dependencies), tuple(owners), tuple(records), tuple(lifecycle),
                     {e: frozenset(k) for e, k in kinds.items()}, dict(labels))


def place(source: Source | None) -> str:
    """Where a source is, as a reader finds it: "adr-0007 line 12, 2024-05-10"."""
    if source is None:
        return "no source recorded"
    where = source.title or readable(source.document) or source.document
    where += f" line {source.line}" if source.line is not None else ""
    return where + (f", {source.date}" if source.date else "")
