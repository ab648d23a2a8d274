"""Architectural risks on a small hand-made graph: exactly the risks expected, each with its severity,
its entities and the facts (and documents) it rests on."""

from __future__ import annotations

from tracegraph.base.architecture.landscape import ArchitectureRecord, Evidence, OwnerClaim, assemble
from tracegraph.base.architecture.risks import (
    CYCLE, DISPUTED, HUB, INCIDENT_RISK, SINGLE_POINT, STALE, SUPERSEDED, DependencyGraph, find_risks,
)
from tracegraph.base.provenance.uris import entity_uri
from tracegraph.base.provenance.vocab import RDF, TG
from tracegraph.schemas.rdf import Triple, fact_key, iri

from support.architecture_landscape import (
    ADR, CODEOWNERS, E, INCIDENT, REPLACED, TODAY, fact, landscape,
)


def test_the_hand_made_graph_gives_exactly_the_expected_risks_in_order():
    risks = find_risks(landscape(), TODAY)
    assert [(r.kind, r.severity) for r in risks] == [
        (SINGLE_POINT, 0.9), (CYCLE, 0.7), (INCIDENT_RISK, 0.7), (DISPUTED, 0.6), (STALE, 0.5), (SUPERSEDED, 0.45)]
    spof, cycle, incident, disputed, stale, superseded = risks

    assert spof.title == "Orbis Cloud is a single point of failure"
    # Skyline has a second cloud, but still reaches Orbis Cloud through Demand Feed and Storage Gateway.
    assert spof.entities == (E["Orbis Cloud"], E["Storage Gateway"], E["Demand Feed"], E["Skyline"],
                             E["Sable Water Authority"])
    assert "Skyline also has an alternative of the same kind (Nimbus Cloud)" in spof.detail
    assert spof.measure == ("0.3 + 0.6 × √(4 that would stop with it / 7 other entities in dependencies) = 0.75, "
                            "+ 0.15 (an incident names it)")
    facts = {e.fact for e in spof.evidence}
    assert {fact("Storage Gateway", "depends on", "Orbis Cloud"), fact("Demand Feed", "calls", "Storage Gateway"),
            fact("Sable Water Authority", "uses", "Skyline")} <= facts
    assert Triple(s=iri(INCIDENT), p=TG.causedBy, o=iri(E["Orbis Cloud"])) in facts
    assert set(spof.documents) == {"urn:doc:adr-7", "urn:doc:pm"}

    assert cycle.title == "Dependency cycle: Skyline → Demand Feed → Storage Gateway → Skyline"
    assert set(cycle.entities) == {E["Skyline"], E["Demand Feed"], E["Storage Gateway"]}
    assert {fact("Skyline", "depends on", "Demand Feed"), fact("Demand Feed", "calls", "Storage Gateway"),
            fact("Storage Gateway", "calls", "Skyline")} <= {e.fact for e in cycle.evidence}

    assert incident.title == "Incident on 2026-06-20: Skyline forecast outage"
    assert incident.entities == (E["Skyline"], E["Demand Feed"], E["Orbis Cloud"])
    assert incident.detail == ("Skyline forecast outage (postmortem line 6, 2026-06-20) hit Skyline and Demand Feed; "
                               "caused by Orbis Cloud. Root cause: The cooling failure took the Orbis Cloud offline.")

    assert disputed.title == "Ownership of Skyline is disputed"
    assert "Grid Analytics team (is owned by; skyline-review-2025, 2025-09-15)" in disputed.detail
    assert "CODEOWNERS names Forecasting Guild and Ada Kern (CODEOWNERS line 9)" in disputed.detail
    assert disputed.detail.endswith("Forecasting Guild owned it until 2025-09-15 (skyline-review-2024, 2024-03-04), "
                                    "so CODEOWNERS looks out of date.")
    assert {s.document for e in disputed.evidence for s in e.sources} == {
        "urn:doc:review-2025", "urn:doc:codeowners", "urn:doc:review-2024"}

    assert stale.title == "Ownership of Ledger rests only on old sources"
    assert stale.entities == (E["Ledger"], E["Payments team"])

    assert superseded.title == "Feature Flag Service is superseded but still cited"
    assert superseded.detail == "Replaced by flagd; Ad still depends on it."
    assert {e.fact for e in superseded.evidence} == {REPLACED, fact("Ad", "depends on", "Feature Flag Service")}


def test_dependents_with_an_alternative_make_a_hub_not_a_single_point_of_failure():
    both = [fact(s, "runs on", cloud) for s in ("Skyline", "Ledger") for cloud in ("Orbis Cloud", "Nimbus Cloud")]
    risks = find_risks(assemble(both, labels={e: n for n, e in E.items()}), TODAY)
    assert [(r.kind, r.title, r.severity) for r in risks] == [
        (HUB, "Nimbus Cloud is a dependency hub", 0.2), (HUB, "Orbis Cloud is a dependency hub", 0.2)]


def test_agreeing_owners_and_a_single_dependent_are_no_risk():
    agree = [fact("Storage Gateway", "depends on", "Orbis Cloud"),
             fact("Storage Gateway", "is owned by", "Grid Analytics team")]
    rule = OwnerClaim(E["Storage Gateway"], entity_uri("grid-analytics"), "CODEOWNERS", "codeowners",
                      Evidence(Triple(s=iri("urn:rule"), p=TG.codeOwner, o=iri(entity_uri("grid-analytics"))),
                               (CODEOWNERS,)))
    assert find_risks(assemble(agree, rule_claims=[rule]), TODAY) == []


def test_a_superseded_decision_that_alone_supports_current_facts_is_still_cited():
    retired = ArchitectureRecord("urn:m:adr3", "decision", "ADR 3: Use Concourse", "2019-01-01", "superseded",
                                 (), (Evidence(Triple(s=iri("urn:m:adr3"), p=RDF.type, o=TG.Decision), (ADR,)),), ADR)
    only = fact("Demand Feed", "calls", "Storage Gateway")
    risks = find_risks(assemble([only], cited={fact_key(only): [ADR]}, records=[retired]), TODAY)
    assert [(r.kind, r.title) for r in risks] == [(SUPERSEDED, "ADR 3: Use Concourse (superseded) is superseded but "
                                                               "still cited")]
    assert only in {e.fact for e in risks[0].evidence}


def test_cycles_are_strongly_connected_parts_and_a_loop_is_told_from_the_most_connected_member():
    graph = DependencyGraph(landscape())
    assert graph.cycles == [frozenset({E["Skyline"], E["Demand Feed"], E["Storage Gateway"]})]
    assert graph.alternatives(E["Skyline"], E["Orbis Cloud"]) == [E["Nimbus Cloud"]]
    assert graph.exposure(E["Skyline"])[0] == [E["Sable Water Authority"]], "its own loop is the cycle's risk"


def test_an_entity_depending_directly_on_many_others_is_a_dependency_hub():
    many = [fact("Checkout", "calls", name) for name in ("Cart", "Currency", "Payment", "Shipping", "Email")]
    risks = find_risks(assemble(many, labels={e: n for n, e in E.items()}), TODAY)
    assert [(r.kind, r.title, r.severity) for r in risks] == [(HUB, "Checkout is a dependency hub", 0.45)]
    assert risks[0].detail.startswith("It depends directly on 5 others (Cart, Currency, Email, Payment and Shipping)")
    assert find_risks(assemble(many[:4]), TODAY) == []
