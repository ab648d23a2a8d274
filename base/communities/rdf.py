"""Communities, reports and detection runs as triples in the named graph urn:graph:community, and back.

Reading them back is what lets a restarted processor update incrementally instead of from scratch.
RDF keeps no order among a subject's values, so reports read back list their key entities and facts
in sorted order (the most-central-first order is a property of the run that wrote them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from tracegraph.base.communities.detect import (
    ID_PREFIX,
    Community,
    DetectionParams,
    Hierarchy,
)
from tracegraph.base.communities.reports import Report
from tracegraph.base.provenance.vectors import decode_vector, encode_vector
from tracegraph.base.provenance.vocab import PROV, RDF, RDFS, TG, XSD
from tracegraph.base.stores.protocol import COMMUNITY_GRAPH
from tracegraph.schemas.base import prevalidated
from tracegraph.schemas.rdf import (
    IriTerm,
    LiteralTerm,
    Term,
    Triple,
    TripleTerm,
    cached_iri,
    literal,
)

REPORT_PREFIX = "urn:trustgraph:community-report:"
DETECTION_PREFIX = "urn:trustgraph:community-detection:"


def detection_uri(fingerprint: str, started: str) -> str:
    """A detection run: the graph it ran over and when it started."""
    return DETECTION_PREFIX + hashlib.sha1(f"{fingerprint}\n{started}".encode()).hexdigest()[:16]


def report_uri(community_id: str) -> str:
    """The report of a community (one each; a new report of the same community replaces it)."""
    return REPORT_PREFIX + community_id.removeprefix(ID_PREFIX)


def graph_fingerprint(facts: Iterable[Triple]) -> str:
    """SHA-1 over the sorted facts as N-Triples lines: the same facts, the same fingerprint."""
    return fingerprint_of_lines(fingerprint_line(t) for t in facts)


def fingerprint_line(fact: Triple) -> str:
    """A fact's line in the fingerprint (kept with the fact where a collection's graph is kept)."""
    return f"{fact.s} {fact.p} {fact.o} ."


def fingerprint_of_lines(lines: Iterable[str]) -> str:
    return hashlib.sha1("\n".join(sorted(lines)).encode()).hexdigest()


def _triple(s: str, p: IriTerm, o: Term) -> Triple:
    # Terms here are built valid; a collection's member triples run to millions, too many to revalidate.
    return prevalidated(Triple, {"s": cached_iri(s), "p": p, "o": o, "g": COMMUNITY_GRAPH})


def detection_triples(run_uri: str, params: DetectionParams, mode: str, started: str, ended: str,
                      fact_count: int, entity_count: int, fingerprint: str,
                      modularity: float | None) -> list[Triple]:
    """One detection run (mode "full" or "incremental"); times as `provenance.query.now()` gives them."""
    if mode not in ("full", "incremental"):
        raise ValueError(f"detection mode is full or incremental, not {mode!r}")
    triples = [
        _triple(run_uri, RDF.type, TG.CommunityDetection),
        _triple(run_uri, RDF.type, PROV.Activity),
        _triple(run_uri, TG.algorithm, literal(params.algorithm)),
        _triple(run_uri, TG.resolution, literal(params.resolution, XSD.double.iri)),
        _triple(run_uri, TG.seed, literal(params.seed, XSD.integer.iri)),
        _triple(run_uri, TG.detectionMode, literal(mode)),
        _triple(run_uri, PROV.startedAtTime, literal(started, XSD.dateTime.iri)),
        _triple(run_uri, PROV.endedAtTime, literal(ended, XSD.dateTime.iri)),
        _triple(run_uri, TG.factCount, literal(fact_count, XSD.integer.iri)),
        _triple(run_uri, TG.entityCount, literal(entity_count, XSD.integer.iri)),
        _triple(run_uri, TG.graphFingerprint, literal(fingerprint)),
    ]
    if modularity is not None:
        triples.append(_triple(run_uri, TG.modularity, literal(modularity, XSD.double.iri)))
    return triples


def community_triples(community: Community, run_uri: str) -> list[Triple]:
    c = community.id
    digest = c.rsplit(":", 1)[-1]
    triples = [
        _triple(c, RDF.type, TG.Community),
        _triple(c, RDFS.label, literal(f"Community {community.level}:{digest[:8]}")),
        _triple(c, TG.level, literal(community.level, XSD.integer.iri)),
        _triple(c, TG.memberCount, literal(len(community.members), XSD.integer.iri)),
        _triple(c, PROV.wasGeneratedBy, cached_iri(run_uri)),
        *(_triple(c, TG.member, cached_iri(m)) for m in community.members),
    ]
    if community.parent is not None:
        triples.append(_triple(c, TG.parentCommunity, cached_iri(community.parent)))
    return triples


def report_triples(report: Report, run_uri: str, vector: Sequence[float] | None) -> list[Triple]:
    """A report, derived from (quoting) exactly its key facts, with its embedding if there is one."""
    r = report_uri(report.community)
    triples = [
        _triple(r, RDF.type, TG.CommunityReport),
        _triple(r, TG.reportOf, cached_iri(report.community)),
        _triple(r, RDFS.label, literal(report.title)),
        _triple(r, TG.summary, literal(report.summary)),
        _triple(r, TG.rating, literal(report.rating, XSD.double.iri)),
        _triple(r, TG.ratingReason, literal(report.rating_reason)),
        _triple(r, TG.method, literal(report.method)),
        _triple(r, PROV.wasGeneratedBy, cached_iri(run_uri)),
        *(_triple(r, TG.keyEntity, cached_iri(e)) for e in report.key_entities),
        *(_triple(r, PROV.wasDerivedFrom, TripleTerm(triple=fact.model_copy(update={"g": None})))
          for fact in report.key_facts),
    ]
    if vector is not None:
        triples.append(_triple(r, TG.embedding, literal(encode_vector(vector))))
    return triples


def _by_subject(triples: Iterable[Triple], kind: IriTerm) -> dict[str, dict[str, list[Term]]]:
    """subject -> predicate -> objects, for the subjects typed `kind`."""
    found: dict[str, dict[str, list[Term]]] = {}
    typed: set[str] = set()
    for t in triples:
        if isinstance(t.s, IriTerm):
            found.setdefault(t.s.iri, {}).setdefault(t.p.iri, []).append(t.o)
            if t.p.iri == RDF.type.iri and t.o == kind:
                typed.add(t.s.iri)
    return {s: values for s, values in found.items() if s in typed}


def _value(values: dict[str, list[Term]], predicate: IriTerm, default: str = "") -> str:
    for term in values.get(predicate.iri, ()):
        if isinstance(term, LiteralTerm):
            return term.value
    return default


def _iris(values: dict[str, list[Term]], predicate: IriTerm) -> list[str]:
    return sorted(term.iri for term in values.get(predicate.iri, ()) if isinstance(term, IriTerm))


def read_hierarchy(triples: Iterable[Triple], params: DetectionParams) -> Hierarchy:
    """The hierarchy the community triples describe (children are rebuilt from the parent links)."""
    found = _by_subject(triples, TG.Community)
    parents = {c: next(iter(_iris(v, TG.parentCommunity)), None) for c, v in found.items()}
    children: dict[str, list[str]] = {}
    for child, parent in sorted(parents.items()):
        if parent is not None:
            children.setdefault(parent, []).append(child)
    levels: list[list[Community]] = []
    for c, values in found.items():
        level = int(_value(values, TG.level, "0"))
        levels.extend([] for _ in range(level + 1 - len(levels)))
        levels[level].append(Community(id=c, level=level, members=tuple(_iris(values, TG.member)),
                                       parent=parents[c], children=tuple(children.get(c, ()))))
    return Hierarchy([sorted(level, key=lambda c: (-len(c.members), c.id)) for level in levels], params)


def read_reports(triples: Iterable[Triple]) -> dict[str, tuple[Report, list[float] | None]]:
    """Community id -> (its report, its embedding or None)."""
    reports: dict[str, tuple[Report, list[float] | None]] = {}
    for values in _by_subject(triples, TG.CommunityReport).values():
        community = next(iter(_iris(values, TG.reportOf)), None)
        if community is None:
            continue
        facts = [t.triple for t in values.get(PROV.wasDerivedFrom.iri, ()) if isinstance(t, TripleTerm)]
        vector = _value(values, TG.embedding)
        reports[community] = (Report(
            community=community, title=_value(values, RDFS.label), summary=_value(values, TG.summary),
            key_entities=tuple(_iris(values, TG.keyEntity)), key_facts=tuple(sorted(facts, key=str)),
            rating=float(_value(values, TG.rating, "0")), rating_reason=_value(values, TG.ratingReason),
            method=_value(values, TG.method)), decode_vector(vector) if vector else None)
    return reports
