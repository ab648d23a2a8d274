"""SHACL shapes of the architecture data (specs/ontology/shapes.ttl): CODEOWNERS rules and their
owners, the four kinds of memory node and the source lines they were read from. A small graph built
by hand, as base/architecture's docstring describes it, conforms; each kind of damage is reported."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tracegraph.base.provenance import extraction
from tracegraph.base.provenance.shacl import ShaclReport, validate_trace
from tracegraph.base.provenance.vocab import DC, PROV, RDF, RDFS, TG, XSD
from tracegraph.base.stores.protocol import SOURCE_GRAPH
from tracegraph.schemas.rdf import IriTerm, Triple, iri, literal

E = "https://trustgraph.ai/e/"
CODEOWNERS, ADR, POSTMORTEM = "urn:doc:codeowners", "urn:doc:adr-0012", "urn:doc:postmortem-2024-06"
RULE = "urn:trustgraph:codeowners-rule:skyline-models"
TEAM, PERSON = E + "grid-analytics", E + "ada-kern"
SKYLINE, ORBIS, NIMBUS = E + "skyline", E + "orbis-cloud", E + "nimbus-cloud"
DECISION = "urn:trustgraph:memory:adr-0012-decision"
FAILURE = "urn:trustgraph:memory:postmortem-2024-06"
EXCEPTION = "urn:trustgraph:memory:adr-0012-exception"
MEMORY = "urn:trustgraph:memory:lesson"
LINE = "urn:trustgraph:line:adr-0012-9"
MEMORIES = {"Decision": DECISION, "FailurePattern": FAILURE, "PolicyException": EXCEPTION, "Memory": MEMORY}


def t(s: str, p: IriTerm, o, g: str | None = None) -> Triple:
    return Triple(s=iri(s), p=p, o=o, g=g)


def memory(node: str, kind: IriTerm, title: str, **links: str) -> list[Triple]:
    return [t(node, RDF.type, kind), t(node, RDFS.label, literal(title)), t(node, DC.creator, literal("Tomas Brandt")),
            t(node, DC.date, literal("2025-10-02")), t(node, TG.summary, literal(title)),
            *(t(node, TG[relation], iri(entity)) for relation, entity in links.items())]


def architecture() -> list[Triple]:
    """One CODEOWNERS rule with a team and a person, a memory node of each kind, and a source line."""
    return [
        t(RULE, RDF.type, TG.CodeOwnersRule), t(RULE, TG.pathPattern, literal("/services/skyline/models/")),
        t(RULE, TG.lineNumber, literal(7, XSD.integer.iri)), t(RULE, TG.codeOwner, iri(TEAM)),
        t(RULE, TG.codeOwner, iri(PERSON)), t(RULE, PROV.wasDerivedFrom, iri(CODEOWNERS)),
        t(TEAM, RDF.type, TG.Team), t(TEAM, TG.contactHandle, literal("@corvid/grid-analytics")),
        t(TEAM, RDFS.label, literal("@corvid/grid-analytics")),
        t(PERSON, RDF.type, TG.Person), t(PERSON, TG.contactHandle, literal("@ada-kern")),
        *memory(DECISION, TG.Decision, "Run Skyline in two regions", why=SKYLINE),
        t(DECISION, TG.decisionStatus, literal("accepted")), t(DECISION, TG.rationale, literal("the June 2024 outage")),
        t(DECISION, TG.consequence, literal("a standby region")),
        t(DECISION, TG.decisionDriver, literal("survive the loss of one data centre")),
        t(DECISION, TG.consideredOption, literal("A second region on the Orbis Cloud: the cheapest")),
        t(DECISION, TG.consideredOption, literal("A standby region on a second cloud provider: chosen.")),
        t(DECISION, TG.chosenOption, literal("A standby region on a second cloud provider: chosen.")),
        *memory(FAILURE, TG.FailurePattern, "Skyline forecast outage", affected=SKYLINE, causedBy=ORBIS),
        t(FAILURE, TG.rootCause, literal("a cooling failure")), t(FAILURE, TG.impact, literal("no forecasts")),
        t(FAILURE, TG.actionItem, literal("add a standby region")), t(FAILURE, TG.actionItem, literal("drill it")),
        *memory(EXCEPTION, TG.PolicyException, "Second cloud for Skyline", excepts=SKYLINE, concerns=NIMBUS),
        t(EXCEPTION, TG.policy, literal("single-cloud policy")),
        *memory(MEMORY, TG.Memory, "Keep a second forecasting supplier", concerns=SKYLINE),
        t(LINE, RDF.type, TG.SourceLine, SOURCE_GRAPH), t(LINE, TG.lineNumber, literal(9), SOURCE_GRAPH),
        t(LINE, PROV.wasDerivedFrom, iri(ADR), SOURCE_GRAPH),
    ]


def without(triples: list[Triple], s: str, p: IriTerm) -> list[Triple]:
    out = [x for x in triples if not (x.s == iri(s) and x.p == p)]
    assert len(out) < len(triples), "the test meant to remove something"
    return out


def replaced(triples: list[Triple], s: str, p: IriTerm, *objects) -> list[Triple]:
    return [*without(triples, s, p), *(t(s, p, o) for o in objects)]


def added(triples: list[Triple], s: str, p: IriTerm, o) -> list[Triple]:
    return [*triples, t(s, p, o)]


def assert_reported(report: ShaclReport, *fragments: str) -> None:
    assert not report.conforms
    assert any(all(f in m for f in fragments) for m in report.messages), report.messages


def test_a_hand_built_architecture_graph_conforms():
    report = validate_trace(architecture())
    assert report.conforms, report.messages


def test_a_source_line_as_the_extraction_builder_writes_it_conforms():
    component = extraction.Component("architecture", "0.1.0")
    triples = [*extraction.document_triples(ADR, title="ADR 0012", mime_type="text/markdown", date="2025-10-02"),
               *extraction.source_line_triples(LINE, ADR, number=9, component=component,
                                               timestamp="2025-10-02T00:00:00Z")]
    report = validate_trace(triples)
    assert report.conforms, report.messages


def test_a_rule_without_owners_is_valid():  # "/services/legacy/" alone: its paths are unowned
    report = validate_trace(without(architecture(), RULE, TG.codeOwner))
    assert report.conforms, report.messages


def test_a_decision_without_a_status_is_valid():
    report = validate_trace(without(architecture(), DECISION, TG.decisionStatus))
    assert report.conforms, report.messages


Damage = Callable[[list[Triple]], list[Triple]]
DAMAGE: dict[str, tuple[Damage, tuple[str, ...]]] = {
    "rule without a path pattern": (
        lambda g: without(g, RULE, TG.pathPattern), (f"<{RULE}>", "tg:pathPattern", "exactly one")),
    "rule with two path patterns": (
        lambda g: added(g, RULE, TG.pathPattern, literal("*.sql")), (f"<{RULE}>", "tg:pathPattern")),
    "rule with an empty path pattern": (
        lambda g: replaced(g, RULE, TG.pathPattern, literal(" ")), (f"<{RULE}>", "non-empty string")),
    "rule without a line number": (
        lambda g: without(g, RULE, TG.lineNumber), (f"<{RULE}>", "tg:lineNumber", "positive integer")),
    "rule on line zero": (
        lambda g: replaced(g, RULE, TG.lineNumber, literal(0)), (f"<{RULE}>", "tg:lineNumber", '"0"')),
    "rule with a word for a line number": (
        lambda g: replaced(g, RULE, TG.lineNumber, literal("seven")), (f"<{RULE}>", "tg:lineNumber")),
    "rule with two line numbers": (
        lambda g: added(g, RULE, TG.lineNumber, literal(8)), (f"<{RULE}>", "tg:lineNumber")),
    "rule with an owner given as text": (
        lambda g: added(g, RULE, TG.codeOwner, literal("corvid-billing")), (f"<{RULE}>", "tg:codeOwner", "IRIs")),
    "rule not derived from its document": (
        lambda g: without(g, RULE, PROV.wasDerivedFrom), (f"<{RULE}>", "prov:wasDerivedFrom")),
    "rule minted under another scheme": (
        lambda g: [Triple(s=iri("urn:rule:1"), p=x.p, o=x.o) if x.s == iri(RULE) else x for x in g],
        ("<urn:rule:1>", "urn:trustgraph:codeowners-rule:")),
    "owner without a contact handle": (
        lambda g: without(g, PERSON, TG.contactHandle), (f"<{PERSON}>", "tg:contactHandle", "at least one")),
    "owner neither team nor person": (
        lambda g: without(g, TEAM, RDF.type), (f"<{TEAM}>", "tg:Team or a tg:Person")),
    "memory without a title": (
        lambda g: without(g, FAILURE, RDFS.label), (f"<{FAILURE}>", "rdfs:label", "exactly one title")),
    "memory with two titles": (
        lambda g: added(g, DECISION, RDFS.label, literal("Two regions")), (f"<{DECISION}>", "rdfs:label")),
    "memory with two authors": (
        lambda g: added(g, MEMORY, DC.creator, literal("Mei Tanaka")), (f"<{MEMORY}>", "dc:creator", "at most one")),
    "memory with two dates": (
        lambda g: added(g, EXCEPTION, DC.date, literal("2025-10-03")), (f"<{EXCEPTION}>", "dc:date")),
    "memory dated in words": (
        lambda g: replaced(g, FAILURE, DC.date, literal("20 June 2024")), (f"<{FAILURE}>", "dc:date", "YYYY-MM-DD")),
    "memory dated with a time": (
        lambda g: replaced(g, FAILURE, DC.date, literal("2024-06-20T09:00:00Z")), (f"<{FAILURE}>", "dc:date")),
    "memory linked to a name instead of an entity": (
        lambda g: replaced(g, MEMORY, TG.concerns, literal("Skyline")), (f"<{MEMORY}>", "tg:concerns", "are IRIs")),
    "memory with a text given as an IRI": (
        lambda g: replaced(g, FAILURE, TG.rootCause, iri(ORBIS)), (f"<{FAILURE}>", "tg:rootCause", "are literals")),
    "memory minted under another scheme": (
        lambda g: [Triple(s=iri("urn:adr:12"), p=x.p, o=x.o) if x.s == iri(DECISION) else x for x in g],
        ("<urn:adr:12>", "urn:trustgraph:memory:")),
    "decision with an unknown status": (
        lambda g: replaced(g, DECISION, TG.decisionStatus, literal("approved")),
        (f"<{DECISION}>", "tg:decisionStatus", "accepted, proposed, superseded, deprecated or rejected", '"approved"')),
    "decision with two statuses": (
        lambda g: added(g, DECISION, TG.decisionStatus, literal("superseded")), (f"<{DECISION}>", "tg:decisionStatus")),
    "decision choosing an option it did not consider": (
        lambda g: replaced(g, DECISION, TG.chosenOption, literal("A third cloud")),
        (f"<{DECISION}>", "one of its tg:consideredOption values")),
    "decision with two chosen options": (
        lambda g: added(g, DECISION, TG.chosenOption, literal("A second region on the Orbis Cloud: the cheapest")),
        (f"<{DECISION}>", "at most one tg:chosenOption")),
    "decision option given as an IRI": (
        lambda g: added(g, DECISION, TG.consideredOption, iri(NIMBUS)), (f"<{DECISION}>", "options and drivers")),
    "policy exception without its policy": (
        lambda g: without(g, EXCEPTION, TG.policy), (f"<{EXCEPTION}>", "tg:policy", "names the policy")),
    "source line without a line number": (
        lambda g: without(g, LINE, TG.lineNumber), (f"<{LINE}>", "tg:lineNumber", "a SourceLine")),
    "source line not derived from a document": (
        lambda g: without(g, LINE, PROV.wasDerivedFrom), (f"<{LINE}>", "prov:wasDerivedFrom")),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_each_kind_of_damage_is_reported(damage):
    change, fragments = DAMAGE[damage]
    assert_reported(validate_trace(change(architecture())), *fragments)


@pytest.mark.parametrize("kind", MEMORIES)
def test_every_kind_of_memory_must_link_to_an_entity(kind):
    node = MEMORIES[kind]
    links = (TG.why, TG.affected, TG.causedBy, TG.excepts, TG.concerns)
    unlinked = [x for x in architecture() if not (x.s == iri(node) and x.p in links)]
    report = validate_trace(unlinked)
    assert_reported(report, f"<{node}>", "links to at least one entity")
    assert len(report.messages) == 1, report.messages
