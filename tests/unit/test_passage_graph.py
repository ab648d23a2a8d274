"""The passage graph and personalised PageRank on small hand-made graphs: how passages and entities
link, which names link to which entities, and the exact order a walk ranks passages in."""

from __future__ import annotations

import doctest

import pytest

from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.retrieval import passage_graph, ppr
from tracegraph.base.retrieval.passage_graph import build, title_entities, without_qualifier
from tracegraph.base.retrieval.ppr import PprLimits, entity_seeds, hybrid_scores, rank_passages
from tracegraph.base.retrieval.tools import RetrievedChunk
from tracegraph.schemas.rdf import Triple, iri, literal


def fact(s: str, p: str, o: str) -> Triple:
    return Triple(s=iri(entity_uri(s)), p=iri(relation_uri(p)), o=iri(entity_uri(o)))


# Four passages: the question's journal (p1) names its publisher; p2 says who led that publisher;
# p3 and p4 are distractors, p4 sharing only a very common entity with p1.
PASSAGES = [("urn:chunk:p1", "urn:doc:1", "Journal of Psychotherapy Integration"),
            ("urn:chunk:p2", "urn:doc:2", "Adolescence"),
            ("urn:chunk:p3", "urn:doc:3", "B Boy (song)"),
            ("urn:chunk:p4", "urn:doc:4", "Psychotherapy")]
FACTS = [("urn:chunk:p1", fact("Journal of Psychotherapy Integration", "published by", "American Psychological Association")),
         ("urn:chunk:p1", fact("Journal of Psychotherapy Integration", "covers", "United States")),
         ("urn:chunk:p2", fact("G. Stanley Hall", "first president of", "American Psychological Association")),
         ("urn:chunk:p3", fact("B Boy", "released by", "Ruffhouse Records")),
         ("urn:chunk:p3", fact("B Boy", "recorded in", "United States")),
         ("urn:chunk:p4", fact("Psychotherapy", "practised in", "United States")),
         ("urn:chunk:p4", Triple(s=iri(entity_uri("Psychotherapy")), p=iri("http://purl.org/dc/elements/1.1/title"),
                                 o=literal("metadata, not knowledge")))]


@pytest.fixture
def graph() -> passage_graph.PassageGraph:
    return build(FACTS, PASSAGES)


def test_doctests():
    for module in (passage_graph, ppr):
        assert doctest.testmod(module).failed == 0


def test_titles_name_entities_with_and_without_their_qualifier():
    assert without_qualifier("B Boy (song)") == "B Boy"
    assert without_qualifier("(Untitled)") == "(Untitled)"  # nothing left without it: keep it whole
    assert title_entities("B Boy (song)") == [entity_uri("B Boy (song)"), entity_uri("B Boy")]
    assert title_entities("Paris") == [entity_uri("Paris")]


def test_passages_link_to_the_entities_of_their_facts_and_titles(graph):
    p1, p2 = graph.passage_index["urn:chunk:p1"], graph.passage_index["urn:chunk:p2"]
    apa = graph.entity_index[entity_uri("American Psychological Association")]
    assert graph.graph.are_adjacent(p1, apa) and graph.graph.are_adjacent(p2, apa)
    # p3's title without its qualifier is the "B Boy" its own facts mention: one entity, one vertex
    assert graph.graph.are_adjacent(graph.passage_index["urn:chunk:p3"], graph.entity_index[entity_uri("B Boy")])
    assert graph.mentions[entity_uri("United States")] == 3
    assert graph.documents == ["urn:doc:1", "urn:doc:2", "urn:doc:3", "urn:doc:4"]
    assert all("title" not in t.p.iri for facts in graph.facts for t in facts), "metadata is never a passage fact"


def test_rare_entities_weigh_more_than_common_ones(graph):
    def weight(passage: str, entity: str) -> float:
        edge = graph.graph.get_eid(graph.passage_index[passage], graph.entity_index[entity_uri(entity)])
        return graph.graph.es[edge]["weight"]
    assert weight("urn:chunk:p1", "American Psychological Association") > weight("urn:chunk:p1", "United States")


def test_the_walk_reaches_the_second_hop_through_a_shared_rare_entity(graph):
    start = {graph.passage_index["urn:chunk:p1"]: 1.0}
    mass = graph.personalised_pagerank(start, damping=0.5)
    ranked = sorted(range(len(graph.passages)), key=lambda i: mass[i], reverse=True)
    order = [graph.passages[i] for i in ranked]
    assert order[:2] == ["urn:chunk:p1", "urn:chunk:p2"]  # the shared rare entity outweighs the common one
    assert mass[graph.passage_index["urn:chunk:p2"]] > 1.5 * max(mass[graph.passage_index[p]]
                                                             for p in ("urn:chunk:p3", "urn:chunk:p4"))


class ScriptedTools:
    """Dense and BM25 hits given as lists; entity vectors as a name -> (entity, similarity) table."""

    def __init__(self, dense, keyword, nearest=None) -> None:
        self.dense, self.keyword_hits, self.nearest = dense, keyword, nearest or {}
        self.embedded: list[str] = []

    async def nearest_chunks(self, vector, limit):
        return self.dense[:limit]

    async def keyword_chunks(self, text, limit):
        return self.keyword_hits[:limit]

    async def embed(self, texts):
        self.embedded += texts
        return [[float(len(self.embedded) - len(texts) + i)] for i in range(len(texts))]

    async def nearest_entities(self, vector, limit):
        name = self.embedded[int(vector[0])]
        return [self.nearest[name]] if name in self.nearest else []


async def test_rank_passages_orders_by_ppr_and_says_why(graph):
    tools = ScriptedTools([RetrievedChunk("urn:chunk:p1", 0.62, "The Journal of …", "urn:doc:1"),
                           RetrievedChunk("urn:chunk:p4", 0.40, "Psychotherapy is …", "urn:doc:4")],
                          [RetrievedChunk("urn:chunk:p1", 9.0, "", "urn:doc:1")])
    ranking = await rank_passages(tools, graph, "Who was the first president of the association which published "
                                  "Journal of Psychotherapy Integration?", [0.0],
                                  ["Journal of Psychotherapy Integration"], limit=3, limits=PprLimits(passage_seeds=1))
    assert [p.uri for p in ranking.passages][:2] == ["urn:chunk:p1", "urn:chunk:p2"]
    assert len(ranking.passages) == 3
    assert ranking.passages[0].score == 1.0 and ranking.passages[0].dense == 0.62
    assert ranking.passages[1].dense is None and "reached through the graph only" in ranking.passages[1].reason
    assert [s.node for s in ranking.seeds] == ["urn:chunk:p1", entity_uri("Journal of Psychotherapy Integration")]
    assert "named in the question" in ranking.seeds[1].reason
    assert ranking.candidates == 2


async def test_names_link_by_normalised_label_then_by_embedding(graph):
    tools = ScriptedTools([], [], nearest={"Ruff House": (entity_uri("Ruffhouse Records"), 0.93),
                                           "Somewhere Else": (entity_uri("United States"), 0.5)})
    seeds = await entity_seeds(tools, graph, ["b boy (SONG)", "Ruff House", "Somewhere Else"], PprLimits())
    assert [s.node for s in seeds] == [entity_uri("B Boy (song)"), entity_uri("B Boy"), entity_uri("Ruffhouse Records")]
    assert "embedding similarity 0.93" in seeds[2].reason
    assert seeds[0].weight == pytest.approx(1.0)  # a name only its own passage mentions keeps full weight


async def test_without_a_graph_the_order_is_dense_plus_bm25():
    tools = ScriptedTools([RetrievedChunk("urn:chunk:a", 0.5, "a", "d1"), RetrievedChunk("urn:chunk:b", 0.45, "b", "d2")],
                          [RetrievedChunk("urn:chunk:b", 4.0, "", "d2")])
    ranking = await rank_passages(tools, None, "q", [0.0], [], limit=5)
    assert [p.uri for p in ranking.passages] == ["urn:chunk:b", "urn:chunk:a"]
    assert "no passage graph" in ranking.notes[0]
    assert hybrid_scores(tools.dense, tools.keyword_hits, 0.5) == {"urn:chunk:a": 0.5, "urn:chunk:b": 0.95}
