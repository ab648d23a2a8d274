"""Hierarchical Leiden communities: the fact graph, full detection on a planted graph, and incremental updates."""

import importlib.util
import random
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from tracegraph.base.communities.detect import (
    Community,
    DetectionParams,
    Hierarchy,
    community_id,
    detect,
    modularity,
    update,
)
from tracegraph.base.communities.graph import FactGraph, fact_graph
from tracegraph.base.provenance.vocab import RDF, RDFS, TG
from tracegraph.schemas.rdf import IriTerm, Triple, iri, literal

_PATH = Path(__file__).resolve().parents[2] / "bench" / "communities.py"
_SPEC = importlib.util.spec_from_file_location("bench_communities", _PATH)
bench = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = bench  # its dataclasses look their module up
_SPEC.loader.exec_module(bench)

E = "https://trustgraph.ai/e/"
DEPENDS = iri("https://trustgraph.ai/r/depends-on")
SUPPLIES = iri("https://trustgraph.ai/r/supplies")


def fact(s: str, o: str, p: IriTerm = DEPENDS) -> Triple:
    return Triple(s=iri(E + s), p=p, o=iri(E + o))


@pytest.fixture(scope="module")
def planted():
    """4 domains of 3 topics, 600 entities: level 0 finds the topics, the top level the domains."""
    return bench.planted_facts(4000, domains=4, topics=3, cross_topic=0.1)


@pytest.fixture(scope="module")
def graph(planted) -> FactGraph:
    return fact_graph(planted.facts)


@pytest.fixture(scope="module")
def hierarchy(graph) -> Hierarchy:
    return detect(graph, DetectionParams())


def changed_entities(facts: list[Triple]) -> set[str]:
    return {t.s.iri for t in facts} | {t.o.iri for t in facts if isinstance(t.o, IriTerm)}


def assert_consistent(graph: FactGraph, hierarchy: Hierarchy) -> None:
    """Every level partitions exactly the graph's entities; parents and children agree; ids are content ids."""
    for level, communities in enumerate(hierarchy.levels):
        members = [m for c in communities for m in c.members]
        assert sorted(members) == graph.entities, f"level {level} is not a partition of the graph's entities"
        for c in communities:
            assert c.level == level and c.members == tuple(sorted(c.members))
            assert c.id == community_id(level, c.members)
            if level == 0:
                assert c.children == ()
            else:
                children = [hierarchy.community(child) for child in c.children]
                assert all(child.parent == c.id for child in children)
                assert sorted(m for child in children for m in child.members) == list(c.members)
            if level == len(hierarchy.levels) - 1:
                assert c.parent is None
            else:
                assert c.id in hierarchy.community(c.parent).children


# ---------------------------------------------------------------- the fact graph

def test_fact_graph_links_entities_by_their_facts_and_keeps_the_rest_as_attributes():
    facts = [
        fact("helios", "orbis"), fact("orbis", "helios", SUPPLIES), fact("helios", "orbis"),  # a duplicate
        fact("orbis", "corvid"), fact("corvid", "corvid"),  # a self-link is no edge, but an attribute
        Triple(s=iri(E + "helios"), p=RDF.type, o=iri(E + "Company")),
        Triple(s=iri(E + "helios"), p=iri("https://trustgraph.ai/r/founded"), o=literal("1999")),
        Triple(s=iri(E + "helios"), p=RDFS.label, o=literal("Helios Grid")),
        Triple(s=iri(E + "lonely"), p=RDF.type, o=iri(E + "Company")),  # only attributes: isolated
        Triple(s=iri("urn:chunk:1"), p=DEPENDS, o=iri(E + "helios")),  # not knowledge
        Triple(s=iri(E + "helios"), p=TG.member, o=iri(E + "zeta")),  # our own vocabulary
        fact("helios", "named").model_copy(update={"g": "urn:graph:source"}),  # not the default graph
    ]
    graph = fact_graph(facts)
    assert graph.entities == [E + "corvid", E + "helios", E + "orbis"]
    assert graph.fact_count == 3
    assert sorted(graph.weights.tolist()) == [1.0, 2.0]
    assert {t.p for t in graph.pair_facts(E + "orbis", E + "helios")} == {DEPENDS, SUPPLIES}
    assert graph.pair_facts(E + "helios", E + "corvid") == []
    assert graph.labels[E + "helios"] == "Helios Grid"
    assert {t.p.iri for t in graph.attributes[E + "helios"]} == {RDF.type.iri, "https://trustgraph.ai/r/founded"}
    assert E + "lonely" not in graph.index
    assert len(graph.facts_of([E + "helios", E + "orbis"])) == 2 + 2  # two links, two attributes
    assert graph.facts_of([E + "helios", E + "corvid"]) == [*graph.attributes[E + "helios"], fact("corvid", "corvid")]


# ---------------------------------------------------------------- full detection

def test_detection_is_deterministic_for_a_seed_whatever_the_order_of_the_facts(planted, hierarchy):
    shuffled = list(planted.facts)
    random.Random(3).shuffle(shuffled)
    again = detect(fact_graph(shuffled), DetectionParams())
    assert again.levels == hierarchy.levels


def test_levels_go_fine_to_coarse_and_nest(graph, hierarchy):
    sizes = [len(level) for level in hierarchy.levels]
    assert len(sizes) >= 2
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)
    assert_consistent(graph, hierarchy)
    entity = graph.entities[0]
    assert entity in hierarchy.community_of(entity, 1).members


def test_planted_topics_and_domains_are_found(planted, graph, hierarchy):
    assert modularity(graph, hierarchy, 0) > 0.3
    assert bench.nmi(graph, hierarchy, 0, planted.topic) > 0.9
    nearest = min(range(len(hierarchy.levels)), key=lambda i: abs(len(hierarchy.levels[i]) - planted.domains))
    assert bench.nmi(graph, hierarchy, nearest, planted.domain) > 0.9


def test_a_bounded_number_of_levels():
    planted = bench.planted_facts(4000, domains=4, topics=3, cross_topic=0.1)
    assert len(detect(fact_graph(planted.facts), DetectionParams(max_levels=1)).levels) == 1


# ---------------------------------------------------------------- incremental updates

def test_a_new_document_leaves_every_untouched_community_as_it_was(planted, graph, hierarchy):
    document = bench.new_document(planted, seed=5)
    changed = changed_entities(document)
    after = fact_graph(planted.facts + document)
    result = update(hierarchy, after, changed, DetectionParams())
    new = result.hierarchy
    assert_consistent(after, new)
    new_level0 = {c.id: c for c in new.levels[0]}
    touched = [c for c in hierarchy.levels[0] if changed & set(c.members)]
    assert touched and set(result.affected_level0_ids) == {c.id for c in touched}
    for c in hierarchy.levels[0]:
        if c not in touched:
            assert new_level0[c.id].members == c.members
    # Above level 0, a previous community none of whose entities was re-detected keeps its grouping.
    redetected = {m for c in touched for m in c.members} | (set(after.entities) - set(graph.entities))
    for level, communities in enumerate(hierarchy.levels[1:len(new.levels)], 1):
        for c in communities:
            if redetected.isdisjoint(c.members):
                assert set(c.members) <= set(new.community_of(c.members[0], level).members)
    before_ids = {c.id for c in hierarchy.communities()}
    after_ids = {c.id for c in new.communities()}
    assert {c.id for c in result.added} == after_ids - before_ids
    assert {c.id for c in result.removed} == before_ids - after_ids
    assert any(c.level == 0 for c in result.added)


def test_an_incremental_update_matches_a_full_detection_in_quality(planted, hierarchy):
    document = bench.new_document(planted, seed=8)
    after = fact_graph(planted.facts + document)
    incremental = update(hierarchy, after, changed_entities(document)).hierarchy
    assert modularity(after, incremental, 0) > modularity(after, detect(after), 0) - 0.02


def test_upper_levels_keep_the_previous_grouping_of_unchanged_communities(planted, hierarchy):
    """A grouping Leiden would never choose (level-0 communities paired off in id order) survives an update
    wherever neither community of a pair was touched: only new communities move."""
    level0 = sorted(hierarchy.levels[0], key=lambda c: c.id)
    pairs = [level0[i:i + 2] for i in range(0, len(level0), 2)]
    parents = [Community(id=community_id(1, [m for c in pair for m in c.members]), level=1,
                         members=tuple(sorted(m for c in pair for m in c.members)),
                         children=tuple(sorted(c.id for c in pair))) for pair in pairs]
    previous = Hierarchy([[replace(c, parent=parent.id) for pair, parent in zip(pairs, parents) for c in pair],
                          parents], DetectionParams())
    document = bench.new_document(planted, seed=5)
    result = update(previous, fact_graph(planted.facts + document), changed_entities(document), DetectionParams())
    affected = set(result.affected_level0_ids)
    untouched = [(pair, parent) for pair, parent in zip(pairs, parents) if affected.isdisjoint(c.id for c in pair)]
    assert len(untouched) >= len(pairs) - 1
    for pair, parent in untouched:
        assert set(parent.members) <= set(result.hierarchy.community_of(parent.members[0], 1).members)


def test_no_change_changes_nothing(graph, hierarchy):
    result = update(hierarchy, graph, [], DetectionParams())
    assert result.hierarchy.levels == hierarchy.levels
    assert result.added == result.removed == result.affected_level0_ids == ()


def test_removed_entities_are_members_of_nothing(planted, graph, hierarchy):
    hub = hierarchy.levels[0][0].members[0]
    dropped = [t for t in planted.facts if hub in (t.s.iri, getattr(t.o, "iri", None))]
    dropped += [t for t in planted.facts if isinstance(t.o, IriTerm)][::50]
    gone = set(map(id, dropped))
    after = fact_graph([t for t in planted.facts if id(t) not in gone])
    assert hub not in after.index
    result = update(hierarchy, after, changed_entities(dropped), DetectionParams())
    assert_consistent(after, result.hierarchy)  # every member at every level is in the graph
    assert all(hub not in c.members for c in result.hierarchy.communities())
    assert any(hub in c.members for c in result.removed)
