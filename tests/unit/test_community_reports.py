"""Community reports (offline, and the LLM prompt and parsing) and the RDF form of communities and reports."""


import pytest
from tracegraph.base.communities.detect import DetectionParams, detect, update
from tracegraph.base.communities.graph import fact_graph
from tracegraph.base.provenance.vectors import decode_vector, encode_vector
from tracegraph.base.communities.rdf import (
    community_triples,
    detection_triples,
    detection_uri,
    graph_fingerprint,
    read_hierarchy,
    read_reports,
    report_triples,
    report_uri,
)
from tracegraph.base.communities.reports import (
    fact_sentence,
    key_facts,
    offline_report,
    parse_report,
    report_prompt,
)
from tracegraph.base.provenance.vocab import PROV, RDF, RDFS, TG
from tracegraph.base.stores.protocol import COMMUNITY_GRAPH
from tracegraph.schemas.rdf import IriTerm, Triple, TripleTerm, iri, literal

E = "https://trustgraph.ai/e/"
R = "https://trustgraph.ai/r/"
GRID = ["helios-grid", "orbis-systems", "corvid-power", "tern-cables", "vale-meters"]
FARM = ["oak-farm", "reed-mill", "lark-bakery", "fen-dairy"]


def link(s: str, p: str, o: str) -> Triple:
    return Triple(s=iri(E + s), p=iri(R + p), o=iri(E + o))


def collection() -> list[Triple]:
    """Two tightly knit groups (a power grid, a farm supply chain) joined by one fact."""
    facts = [link(GRID[0], "depends-on", other) for other in GRID[1:]]
    facts += [link(GRID[1], "supplies", GRID[2]), link(GRID[3], "supplies", GRID[4]), link(GRID[2], "works-with", GRID[3])]
    facts += [link(FARM[0], "supplies", FARM[1]), link(FARM[1], "supplies", FARM[2]), link(FARM[0], "supplies", FARM[3]),
              link(FARM[3], "supplies", FARM[2]), link(FARM[2], "works-with", FARM[0])]
    facts.append(link(FARM[2], "buys-from", GRID[4]))
    facts += [Triple(s=iri(E + GRID[0]), p=RDF.type, o=iri(E + "company")),
              Triple(s=iri(E + GRID[0]), p=iri(R + "founded"), o=literal("1999"))]
    facts += [Triple(s=iri(E + e), p=RDFS.label, o=literal(e.replace("-", " ").title())) for e in GRID + FARM]
    return facts


@pytest.fixture(scope="module")
def graph():
    return fact_graph(collection())


@pytest.fixture(scope="module")
def hierarchy(graph):
    return detect(graph, DetectionParams())


def grid_community(hierarchy):
    return hierarchy.community_of(E + GRID[0], 0)


# ---------------------------------------------------------------- offline reports

def test_fact_sentences_use_labels_or_readable_iris(graph):
    assert fact_sentence(link(GRID[0], "depends-on", GRID[1]), graph.labels) == "Helios Grid depends on Orbis Systems"
    assert fact_sentence(link("x-ray", "worksFor", "y"), {}) == "x ray works for y"
    typed = Triple(s=iri(E + GRID[0]), p=RDF.type, o=iri(E + "company"))
    assert fact_sentence(typed, graph.labels) == "Helios Grid is a company"
    assert fact_sentence(Triple(s=iri(E + "a"), p=iri(R + "founded"), o=literal("1999")), {}) == "a founded 1999"


def test_the_offline_report_says_it_is_offline_and_quotes_only_its_community(graph, hierarchy):
    community = grid_community(hierarchy)
    assert set(community.members) == {E + e for e in GRID}
    report = offline_report(graph, community)
    assert report.method.startswith("offline: extractive — ")
    assert "no LLM" in report.summary and "no LLM" in report.rating_reason
    assert report.key_entities[0] == E + GRID[0]  # the hub is the most central
    assert report.title.startswith("Helios Grid, ")
    assert set(report.key_entities) <= set(community.members)
    inside = set(community.members)
    for fact in report.key_facts:
        assert fact.s.iri in inside and (not isinstance(fact.o, IriTerm) or fact.p == RDF.type or fact.o.iri in inside)
    assert link(FARM[2], "buys-from", GRID[4]) not in report.key_facts  # crosses into the farm
    assert len([f for f in report.key_facts if f.p != RDF.type and isinstance(f.o, IriTerm)]) == 7  # every internal link
    assert "Helios Grid depends on Orbis Systems." in report.summary
    assert 0 < report.rating <= 10
    assert offline_report(fact_graph(collection()), community) == report  # stable


def test_the_fact_cap_keeps_the_most_central_facts(graph, hierarchy):
    community = grid_community(hierarchy)
    top = key_facts(graph, community, limit=3)
    assert len(top) == 3 and all(f.s.iri == E + GRID[0] for f in top)  # the hub's facts rank first
    assert key_facts(graph, community, limit=20)[:3] == top


def test_the_whole_graph_rates_higher_than_a_part(graph, hierarchy):
    whole = hierarchy.levels[-1][0] if len(hierarchy.levels[-1]) == 1 else None
    part = offline_report(graph, grid_community(hierarchy)).rating
    if whole is not None:
        assert offline_report(graph, whole).rating > part
    farm = offline_report(graph, hierarchy.community_of(E + FARM[0], 0)).rating
    assert farm < part  # fewer entities and facts


# ---------------------------------------------------------------- LLM reports

GOOD = ('{"title": "The Helios power grid", "summary": "Helios Grid depends on four suppliers.", '
        '"key_entities": ["Orbis Systems", "Helios Grid"], "key_relations": ["Helios Grid depends on Orbis Systems"], '
        '"rating": 7.5, "rating_reason": "critical infrastructure"}')


def parse(text: str):
    facts = (link(GRID[0], "depends-on", GRID[1]),)
    return parse_report("urn:trustgraph:community:0:abc", text, facts, (E + GRID[0], E + GRID[1], E + GRID[2]), "m-1")


def test_the_prompt_asks_about_exactly_the_given_facts(graph, hierarchy):
    community = grid_community(hierarchy)
    facts = key_facts(graph, community, limit=2)
    prompt = report_prompt(graph, community, facts)
    assert all(fact_sentence(f, graph.labels) in prompt for f in facts)
    assert "Helios Grid" in prompt and '"rating_reason"' in prompt
    assert fact_sentence(key_facts(graph, community, limit=5)[4], graph.labels) not in prompt


def test_parse_a_good_report():
    report = parse(GOOD)
    assert report.title == "The Helios power grid" and report.method == "LLM (m-1)"
    assert report.rating == 7.5 and report.rating_reason == "critical infrastructure"
    assert report.key_entities == (E + GRID[1], E + GRID[0], E + GRID[2])  # the model's order first
    assert "Key relations:\n- Helios Grid depends on Orbis Systems" in report.summary
    assert report.key_facts == (link(GRID[0], "depends-on", GRID[1]),)


def test_parse_fenced_json_with_prose_around_it():
    assert parse(f"Here is the report:\n```json\n{GOOD}\n```\nHope it helps {{}}.") == parse(GOOD)


@pytest.mark.parametrize(("rating", "expected"), [('"high"', 5.0), ("null", 5.0), ("true", 5.0), ("14", 10.0),
                                                  ("-2", 0.0), ('"8/10"', 8.0)])
def test_ratings_are_clamped_or_fall_back(rating, expected):
    report = parse(GOOD.replace('"rating": 7.5', f'"rating": {rating}'))
    assert report.rating == expected
    if expected == 5.0:
        assert "no usable rating" in report.rating_reason and "critical infrastructure" in report.rating_reason
    if rating in ("14", "-2"):
        assert "clamped" in report.rating_reason


def test_a_missing_rating_falls_back():
    report = parse(GOOD.replace('"rating": 7.5, ', ""))
    assert report.rating == 5.0 and "no usable rating" in report.rating_reason


@pytest.mark.parametrize("text", ["I cannot help with that.", "{not json", '{"title": "", "summary": "x"}',
                                  '{"title": "T"}', '["title", "summary"]', ""])
def test_unusable_answers_give_none(text):
    assert parse(text) is None


# ---------------------------------------------------------------- RDF

def test_hierarchy_and_reports_round_trip_through_rdf(graph, hierarchy):
    run = detection_uri(graph_fingerprint(graph.links), "2025-01-01T00:00:00.000000Z")
    triples = [t for c in hierarchy.communities() for t in community_triples(c, run)]
    reports = {c.id: offline_report(graph, c) for c in hierarchy.communities()}
    vectors = {cid: [0.5, -1.25, float(i)] for i, cid in enumerate(reports)}
    vectors[next(iter(reports))] = None
    triples += [t for cid, r in reports.items() for t in report_triples(r, run, vectors[cid])]
    assert all(t.g == COMMUNITY_GRAPH for t in triples)
    assert read_hierarchy(triples, hierarchy.params).levels == hierarchy.levels
    back = read_reports(triples)
    assert back.keys() == reports.keys()
    for cid, report in reports.items():
        read, vector = back[cid]
        assert (vector is None) if vectors[cid] is None else list(vector) == vectors[cid]
        assert read.key_entities == tuple(sorted(report.key_entities))  # RDF keeps no order
        assert read.key_facts == tuple(sorted(report.key_facts, key=str))
        assert (read.title, read.summary, read.rating, read.rating_reason, read.method) == (
            report.title, report.summary, report.rating, report.rating_reason, report.method)


def test_a_report_is_derived_from_its_quoted_facts(graph, hierarchy):
    report = offline_report(graph, grid_community(hierarchy))
    triples = report_triples(report, "urn:trustgraph:community-detection:1", None)
    quoted = [t.o.triple for t in triples if t.p == PROV.wasDerivedFrom]
    assert quoted == list(report.key_facts) and all(isinstance(t.o, TripleTerm) for t in triples if t.p == PROV.wasDerivedFrom)
    assert report_uri(report.community) == report.community.replace("community:", "community-report:")
    assert triples[0].s.iri == report_uri(report.community)
    assert not any(t.p == TG.embedding for t in triples)


def test_a_restarted_processor_updates_from_the_stored_hierarchy(graph, hierarchy):
    stored = read_hierarchy([t for c in hierarchy.communities() for t in community_triples(c, "urn:run")],
                            hierarchy.params)
    after = fact_graph(collection() + [link("new-co", "supplies", FARM[1])])
    changed = {E + "new-co", E + FARM[1]}
    assert update(stored, after, changed).hierarchy.levels == update(hierarchy, after, changed).hierarchy.levels


def test_detection_run_record():
    triples = detection_triples("urn:run", DetectionParams(), "incremental", "2025-01-01T00:00:00.000000Z",
                                "2025-01-01T00:00:01.000000Z", 12, 9, "abc", 0.42)
    values = {t.p.iri: t.o for t in triples if t.p != RDF.type}
    assert {t.o for t in triples if t.p == RDF.type} == {TG.CommunityDetection, PROV.Activity}
    assert values[TG.detectionMode.iri].value == "incremental"
    assert values[PROV.startedAtTime.iri].datatype.endswith("#dateTime")
    assert float(values[TG.modularity.iri].value) == 0.42 and values[TG.seed.iri].value == "42"
    assert "Leiden" in values[TG.algorithm.iri].value
    with pytest.raises(ValueError):
        detection_triples("urn:run", DetectionParams(), "partial", "", "", 0, 0, "", None)


def test_fingerprints_and_vectors():
    facts = collection()
    assert graph_fingerprint(facts) == graph_fingerprint(reversed(facts)) != graph_fingerprint(facts[1:])
    assert decode_vector(encode_vector([0.25, -3.0, 1e-3])) == pytest.approx([0.25, -3.0, 1e-3], rel=1e-6)


def test_a_community_that_merged_nothing_has_no_report_of_its_own():
    from tracegraph.base.communities.detect import Community
    from tracegraph.base.communities.reports import needs_report

    assert needs_report(Community("urn:c:0", 0, ("urn:e:a",)))
    assert not needs_report(Community("urn:c:1", 1, ("urn:e:a",), children=("urn:c:0",)))
    assert needs_report(Community("urn:c:2", 1, ("urn:e:a", "urn:e:b"), children=("urn:c:0", "urn:c:3")))
