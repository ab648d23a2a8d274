"""Offline community reports composed from canonical relations and architecture records: a report names
its services, their dependencies and owners, the incidents that touch them and the risks computed over
the whole landscape; it is derived from the facts behind those lines, never from co-occurrence."""

from __future__ import annotations

from tracegraph.base.architecture.risks import find_risks
from tracegraph.base.communities.architecture_report import CO_OCCURRENCE, METHOD, architecture_report
from tracegraph.base.communities.detect import Community
from tracegraph.base.communities.graph import fact_graph
from tracegraph.base.provenance.vocab import TG
from tracegraph.schemas.rdf import Triple, iri

from support.architecture_landscape import E, INCIDENT, OWNED, TODAY, fact, knowledge, landscape

SKYLINE_GROUP = ("Skyline", "Orbis Cloud", "Nimbus Cloud", "Demand Feed", "Storage Gateway", "Sable Water Authority",
                 "Grid Analytics team")


def community(*names: str) -> Community:
    return Community(id="urn:trustgraph:community:0:test", level=0, members=tuple(sorted(E[n] for n in names)))


def test_a_report_names_services_dependencies_owners_incidents_and_risks():
    land = landscape()
    report = architecture_report(fact_graph(knowledge()), community(*SKYLINE_GROUP), land, find_risks(land, TODAY))
    lines = report.summary.splitlines()
    assert report.title == "Skyline, Storage Gateway and Orbis Cloud"
    assert lines[1] == ("Services: Skyline, Storage Gateway, Orbis Cloud, Demand Feed, Nimbus Cloud, "
                        "Sable Water Authority.")
    assert lines[2:7] == ["Dependencies:",
                          "- Skyline depends on Demand Feed, Nimbus Cloud and Orbis Cloud; runs on Orbis Cloud.",
                          "- Storage Gateway depends on Orbis Cloud; calls Skyline.",
                          "- Demand Feed calls Storage Gateway.",
                          "- Sable Water Authority uses Skyline."]
    assert "- Skyline: is owned by Grid Analytics team; CODEOWNERS names Forecasting Guild and Ada Kern." in lines
    assert "- Skyline forecast outage (2026-06-20, postmortem): names Skyline, Demand Feed and Orbis Cloud." in lines
    risks = lines[lines.index("Risks:") + 1:]
    assert [r.split(" (severity")[0] for r in risks] == [
        "- Orbis Cloud is a single point of failure",
        "- Dependency cycle: Skyline → Demand Feed → Storage Gateway → Skyline",
        "- Incident on 2026-06-20: Skyline forecast outage", "- Ownership of Skyline is disputed"]
    assert report.method == METHOD and report.method.startswith("offline: ")
    assert report.rating == 9.0 and report.rating_reason.startswith("10 × the severity of its worst risk (0.90)")
    facts = set(report.key_facts)
    assert {fact("Demand Feed", "calls", "Storage Gateway"), OWNED,
            Triple(s=iri(INCIDENT), p=TG.causedBy, o=iri(E["Orbis Cloud"]))} <= facts, "each line's facts"
    assert report.key_entities[0] == E["Skyline"]


def test_a_group_without_architecture_is_told_by_its_relations_and_co_occurrence_is_left_out():
    land = landscape()
    report = architecture_report(fact_graph(knowledge()), community("Helios Grid", "Corvid Analytics", "Skyline"),
                                 land, find_risks(land, TODAY))
    assert "Relations:" not in report.summary, "Skyline's dependencies make it an architecture report"
    plain = architecture_report(fact_graph(knowledge()), community("Helios Grid", "Corvid Analytics"), land, [])
    assert plain.summary.splitlines()[1:] == ["Relations:",
                                              "- Helios Grid is the largest customer of Corvid Analytics."]
    assert all(f.p.iri != CO_OCCURRENCE for f in plain.key_facts)
    assert plain.title == "Helios Grid and Corvid Analytics"
