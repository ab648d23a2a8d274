"""Global questions answered from the graph's architecture, without a store: what the question asks,
the offline risk answer (ranked, with evidence and sources), the platform's structure (groups and the
dependencies between them) and its answer, and the trace of the risks kept."""

from __future__ import annotations

import doctest

import pytest

from tracegraph.base.architecture import risks as risks_module
from tracegraph.base.architecture import structure as structure_module
from tracegraph.base.architecture.risks import find_risks
from tracegraph.base.architecture.structure import platform_structure
from tracegraph.base.provenance.global_search import risk_selection_triples
from tracegraph.base.provenance.query import edge_selection_uri, focus_triples, SelectedEdge
from tracegraph.base.provenance.shacl import validate_trace
from tracegraph.base.provenance.vocab import TG
from tracegraph.base.retrieval import global_answers as ga

from support.architecture_landscape import E, TODAY, landscape


def test_doctests():
    for module in (ga, structure_module, risks_module):
        result = doctest.testmod(module)
        assert result.failed == 0
    assert doctest.testmod(ga).attempted == 4


@pytest.mark.parametrize(("question", "intent", "count"), [
    ("What are our top 3 architectural risks?", "risks", 3),
    ("what are our top 3 architectural risks?", "risks", 3),
    ("Where are our single points of failure?", "risks", 5),
    ("How is the platform structured?", "structure", 5),
    ("how do the main components fit together?", "structure", 5),
    ("Give me an overview of the corpus", "overview", 5),
])
def test_what_a_global_question_asks(question, intent, count):
    assert (ga.global_intent(question), ga.asked_count(question)) == (intent, count)


def test_the_risk_answer_lists_the_asked_number_by_severity_with_evidence_and_sources():
    land = landscape()
    found = find_risks(land, TODAY)
    text = ga.risk_answer(found[:3], len(found), land)
    lines = text.splitlines()
    assert lines[0].startswith("Offline answer (no LLM configured): the 3 most severe of 6 architectural risks")
    assert lines[1] == f"1. Orbis Cloud is a single point of failure (severity 0.90). {found[0].detail}"
    assert lines[2].startswith("   Severity of a single point of failure: 0.3 + 0.6 × √(4 that would stop")
    assert lines[3].startswith("   Evidence: Skyline depends on Orbis Cloud (adr-0007, 2024-05-10); ")
    assert [line.split(" (severity")[0] for line in lines if line[:2] in ("1.", "2.", "3.")] == [
        "1. Orbis Cloud is a single point of failure",
        "2. Dependency cycle: Skyline → Demand Feed → Storage Gateway → Skyline",
        "3. Incident on 2026-06-20: Skyline forecast outage"]
    disputed = ga.risk_answer([found[3]], len(found), land)
    assert "the CODEOWNERS rule of line 9 names as code owner Forecasting Guild (CODEOWNERS line 9)" in disputed
    assert ga.risk_answer([], 0, land).startswith("Offline answer (no LLM configured): the graph shows no")


def levels():
    skyline = ["Skyline", "Orbis Cloud", "Nimbus Cloud", "Demand Feed", "Storage Gateway", "Grid Analytics team"]
    return [{"c:sky": [E[n] for n in skyline], "c:ad": [E["Ad"], E["Feature Flag Service"], E["flagd"]],
             "c:ledger": [E["Ledger"], E["Payments team"]], "c:helios": [E["Helios Grid"], E["Corvid Analytics"]],
             "c:sable": [E["Sable Water Authority"]]},
            {"c:all": [e for n, e in E.items()]}]


def test_the_structure_is_the_finest_level_whose_groups_holding_dependencies_are_few_and_their_links():
    land = landscape()
    found = platform_structure(levels(), land)
    assert found.level == 0 and found.others == 2, "Ledger and Helios Grid's groups hold no dependency"
    assert [(g.community, g.title, g.measure) for g in found.groups] == [
        ("c:sky", "Skyline, Orbis Cloud and Storage Gateway", 0.8889), ("c:ad", "Ad and Feature Flag Service", 0.1111),
        ("c:sable", "Sable Water Authority", 0.1111)]
    assert len(found.groups[0].inside) == 7
    (link,) = found.links
    assert (link.source, link.target, link.measure) == ("c:sable", "c:sky", 0.1111)
    assert [(d.dependent, d.dependency) for d in link.dependencies] == [(E["Sable Water Authority"], E["Skyline"])]
    assert platform_structure(levels(), land, most=2).level == 1, "three groups are too many at most=2"
    assert [(d.dependent, d.dependency) for d in found.groups[0].inside[:2]] == [
        (E["Skyline"], E["Orbis Cloud"]), (E["Skyline"], E["Orbis Cloud"])], "the best connected services first"

    text = ga.structure_answer(found, land).splitlines()
    assert text[0] == ("Offline answer (no LLM configured), from the graph's communities and its dependencies: the "
                       "platform falls into 3 main group(s) (level-0 communities; 2 more group(s) hold no dependency):")
    assert text[1].startswith("1. Skyline, Orbis Cloud and Storage Gateway (6 entities; services: Skyline, "
                              "Orbis Cloud,")
    assert text[-2:] == ["How the groups connect:",
                         "- Sable Water Authority → Skyline, Orbis Cloud and Storage Gateway: "
                         "Sable Water Authority uses Skyline."]


def test_a_kept_risk_is_traced_to_the_edge_selections_of_its_evidence_and_passes_the_shapes():
    land = landscape()
    risk = find_risks(land, TODAY)[0]
    focus, sid = "urn:trustgraph:prov:focus:s1", "s1"
    edges = [SelectedEdge(e.fact.s, e.fact.p, e.fact.o, reasoning="evidence of risk #1", score=risk.severity)
             for e in risk.evidence]
    triples = [*focus_triples(focus, "urn:trustgraph:prov:exploration:s1", sid, edges, None, "risks"),
               *risk_selection_triples(focus, sid, [risk], [[edge_selection_uri(sid, i) for i in range(len(edges))]])]
    node = "urn:trustgraph:prov:risk-selection:s1:0"
    values = {t.p.iri: t.o for t in triples if getattr(t.s, "iri", "") == node}
    assert values[TG.riskKind.iri].value == "single-point-of-failure" and values[TG.severity.iri].value == "0.9000"
    assert sum(1 for t in triples if t.p == TG.evidence) == len(risk.evidence)
    assert sum(1 for t in triples if t.p == TG.riskEntity) == 5
    report = validate_trace([t for t in triples if t.p != TG.evidence or t.o.iri != edge_selection_uri(sid, 0)])
    messages = [m for m in report.messages if "RiskSelection" in m]
    assert not messages, messages
    broken = validate_trace([t for t in triples if t.p != TG.evidence])
    assert any("rests on facts" in m for m in broken.messages)
