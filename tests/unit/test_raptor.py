"""The RAPTOR tree core: clustering, build, walk, incremental add/remove, summarisers, RDF round trip."""

import doctest
import re
from dataclasses import dataclass

import numpy as np
import pytest
import tracegraph.base.raptor.cluster
import tracegraph.base.raptor.rdf
from tracegraph.base.errors import LlmUnavailable
from tracegraph.base.provenance.vocab import TG
from tracegraph.base.raptor.cluster import bounded_clusters
from tracegraph.base.raptor.rdf import build_triples, read_tree, tree_triples
from tracegraph.base.raptor.tree import (
    LlmSummariser,
    OfflineSummariser,
    Passage,
    Tree,
    TreeParams,
    add,
    build,
    nearest_cluster,
    remove,
    summarise_stale,
    walk,
)
from tracegraph.base.stores.protocol import RAPTOR_GRAPH

TOPICS = 10
PER_TOPIC = 20
PARAMS = TreeParams()


def unit(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=-1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def centres() -> np.ndarray:
    return unit(np.random.default_rng(0).normal(size=(TOPICS, 384)))


def passage(centres: np.ndarray, topic: int, n: int, rng: np.random.Generator) -> Passage:
    vector = unit(centres[topic] + rng.normal(scale=0.04, size=384))
    text = (f"Topic {topic} passage {n} opens with its own lead sentence. "
            f"It goes on about topic {topic} item {n}. A third remark on item {n}.")
    return Passage(uri=f"urn:chunk:{topic}-{n}", text=text, vector=vector, document=f"urn:doc:{topic}")


def corpus(centres: np.ndarray) -> list[Passage]:
    rng = np.random.default_rng(1)
    return [passage(centres, t, n, rng) for n in range(PER_TOPIC) for t in range(TOPICS)]


def topic_of(uri: str) -> int:
    return int(uri.rsplit(":", 1)[1].split("-")[0])


def assert_consistent(tree: Tree, uris: set[str]) -> None:
    """One root; every passage under exactly one level-1 node; parents, levels and counts agree."""
    assert tree.root is not None and tree.parent(tree.root) is None
    placed = [c for i in tree.levels[1] for c in tree.nodes[i].children]
    assert sorted(placed) == sorted(uris)
    for node in tree.nodes.values():
        assert re.fullmatch(rf"urn:trustgraph:raptor:{node.level}:[0-9a-f]{{16}}", node.id)
        assert 0 < len(node.children) <= PARAMS.max_cluster
        assert node.passage_count == len(tree.passages_under(node.id))
        assert abs(float(np.linalg.norm(node.vector)) - 1) < 1e-4
        for child in node.children:
            assert tree.parent(child) == node.id
            if node.level > 1:
                assert tree.nodes[child].level == node.level - 1
    reachable, stack = set(), [tree.root]
    while stack:
        node = tree.nodes[stack.pop()]
        reachable.add(node.id)
        if node.level > 1:
            stack.extend(node.children)
    assert reachable == set(tree.nodes)


@pytest.mark.parametrize("module", [tracegraph.base.raptor.cluster, tracegraph.base.raptor.rdf])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


def test_clusters_are_deterministic_bounded_and_cover_every_row():
    vectors = unit(np.random.default_rng(3).normal(size=(500, 16)))
    first = bounded_clusters(vectors, branching=8, max_size=16, seed=42)
    again = bounded_clusters(vectors, branching=8, max_size=16, seed=42)
    assert [g.tolist() for g in first] == [g.tolist() for g in again]
    assert sorted(np.concatenate(first).tolist()) == list(range(500))
    assert max(len(g) for g in first) <= 16 and len(first) >= 500 // 16


def test_clusters_of_one_few_and_identical_vectors():
    assert [g.tolist() for g in bounded_clusters(unit(np.ones((1, 4))), branching=8, max_size=16, seed=1)] == [[0]]
    assert [len(g) for g in bounded_clusters(unit(np.eye(3)), branching=8, max_size=16, seed=1)] == [3]
    same = bounded_clusters(unit(np.ones((40, 4))), branching=8, max_size=16, seed=1)
    assert sorted(len(g) for g in same) == [8] * 5


async def test_build_gives_one_consistent_tree_with_offline_summaries(centres):
    passages = corpus(centres)
    tree = await build(passages, OfflineSummariser(), PARAMS)
    assert_consistent(tree, {p.uri for p in passages})
    assert tree.nodes[tree.root].passage_count == len(passages)
    assert len(tree.nodes[tree.root].children) <= PARAMS.branching
    assert tree.height >= 2
    for node in tree.nodes.values():
        assert node.method.startswith("offline: extractive") and node.summary
        assert len(node.summary) <= PARAMS.summary_chars
    again = await build(passages, OfflineSummariser(), PARAMS)
    assert set(again.nodes) == set(tree.nodes)


async def test_level_one_clusters_follow_the_planted_topics(centres):
    tree = await build(corpus(centres), OfflineSummariser(), PARAMS)
    mixed = [i for i in tree.levels[1] if len({topic_of(c) for c in tree.nodes[i].children}) > 1]
    assert not mixed


async def test_walk_prefers_the_branch_nearest_the_question(centres):
    tree = await build(corpus(centres), OfflineSummariser(), PARAMS)
    found = walk(tree, centres[3], threshold=0.3, beam=2, relative=0.9)
    assert found.candidate_chunks and all(topic_of(c) == 3 for c in found.candidate_chunks)
    assert found.visits[0].node_id == tree.root and found.visits[0].expanded
    assert found.expanded[0] == tree.root
    skipped = [v for v in found.visits if not v.expanded]
    assert skipped and all(v.reason for v in skipped)
    assert any("threshold" in v.reason or "best" in v.reason for v in skipped)
    expanded_level_one = [i for i in found.expanded if tree.nodes[i].level == 1]
    assert set(found.candidate_chunks) == {c for i in expanded_level_one for c in tree.nodes[i].children}


async def test_walk_always_reaches_passages_even_below_threshold(centres):
    tree = await build(corpus(centres), OfflineSummariser(), PARAMS)
    found = walk(tree, -centres[0], threshold=0.99)
    assert found.candidate_chunks
    assert "below threshold" in found.visits[1].reason and found.visits[1].expanded


async def test_add_places_a_passage_in_its_branch_and_touches_only_its_ancestors(centres):
    passages = corpus(centres)
    tree = await build(passages, OfflineSummariser(), PARAMS)
    before = {i: n.summary for i, n in tree.nodes.items()}
    new = passage(centres, 7, 99, np.random.default_rng(5))
    change = await add(tree, [new], OfflineSummariser(), PARAMS)
    assert_consistent(tree, {p.uri for p in passages} | {new.uri})
    parent = tree.parent(new.uri)
    assert {topic_of(c) for c in tree.nodes[parent].children} == {7}
    chain, node = set(), parent
    while node is not None:
        chain.add(node)
        node = tree.parent(node)
    created = set(tree.nodes) - set(before)
    assert change.changed == chain | created and not change.removed
    assert all(tree.nodes[i].summary == s for i, s in before.items() if i not in change.changed)
    assert "topic 7 item 99" in tree.nodes[parent].summary or "passage 99" in tree.nodes[parent].summary


async def test_add_splits_a_cluster_that_grows_too_big(centres):
    passages = corpus(centres)
    tree = await build(passages, OfflineSummariser(), PARAMS)
    old_ids = set(tree.nodes)
    rng = np.random.default_rng(6)
    extra = [passage(centres, 2, 100 + n, rng) for n in range(40)]
    change = await add(tree, extra, OfflineSummariser(), PARAMS)
    assert_consistent(tree, {p.uri for p in passages + extra})
    assert set(tree.nodes) - old_ids, "a node should have been split off"
    assert old_ids <= set(tree.nodes)  # ids kept through the update
    assert set(tree.nodes) - old_ids <= change.changed


async def test_add_to_an_empty_tree_builds_it(centres):
    tree = Tree()
    passages = corpus(centres)[:30]
    change = await add(tree, passages, OfflineSummariser(), PARAMS)
    assert_consistent(tree, {p.uri for p in passages})
    assert change.changed == set(tree.nodes)


async def test_remove_drops_emptied_nodes_and_every_reference(centres):
    passages = corpus(centres)
    tree = await build(passages, OfflineSummariser(), PARAMS)
    victim = tree.levels[1][0]
    gone = set(tree.nodes[victim].children) | {passages[0].uri, passages[1].uri}
    change = await remove(tree, gone, OfflineSummariser(), PARAMS)
    assert victim in change.removed and victim not in tree.nodes
    assert not change.removed & change.changed
    kept = {p.uri for p in passages} - gone
    assert_consistent(tree, kept)
    assert not gone & set(tree.parents) and not gone & set(tree.passages)
    assert not any(gone & set(n.children) or change.removed & set(n.children) for n in tree.nodes.values())
    leads = [p.text.split(". ")[0] for p in passages if p.uri in gone]
    assert not any(lead in n.summary for lead in leads for n in tree.nodes.values())


async def test_removing_everything_empties_the_tree(centres):
    passages = corpus(centres)[:40]
    tree = await build(passages, OfflineSummariser(), PARAMS)
    change = await remove(tree, [p.uri for p in passages], OfflineSummariser(), PARAMS)
    assert tree.root is None and not tree.nodes and not tree.parents
    assert not change.changed and change.removed


@dataclass
class FakeCompletion:
    text: str
    model: str


async def test_llm_summariser_uses_the_completion():
    prompts = []

    async def complete(system: str, prompt: str) -> FakeCompletion:
        prompts.append((system, prompt))
        return FakeCompletion(" Both passages are about owls. ", "fake-model")

    summary, method = await LlmSummariser(complete).summarise(["Owls hunt.", "Owls hoot."], 300)
    assert (summary, method) == ("Both passages are about owls.", "LLM (fake-model)")
    assert "300 characters" in prompts[0][0] and "[2] Owls hoot." in prompts[0][1]


async def test_llm_summariser_falls_back_offline_for_the_rest_of_the_build(centres):
    calls = 0

    async def complete(system: str, prompt: str) -> FakeCompletion:
        nonlocal calls
        calls += 1
        raise LlmUnavailable("no LLM endpoint configured")

    tree = await build(corpus(centres)[:60], LlmSummariser(complete), PARAMS)
    assert calls <= 4  # only the calls already in flight when the first failed
    for node in tree.nodes.values():
        assert node.method.startswith("offline: extractive") and "LLM unavailable" in node.method


async def test_rdf_round_trip_and_add_without_passage_vectors(centres):
    passages = corpus(centres)
    tree = await build(passages, OfflineSummariser(), PARAMS)
    triples = tree_triples(tree, "urn:trustgraph:raptor-build:1")
    assert all(t.g == RAPTOR_GRAPH for t in triples)
    back = read_tree(triples)
    assert back.root == tree.root and set(back.nodes) == set(tree.nodes) and not back.passages
    for node_id, node in tree.nodes.items():
        other = back.nodes[node_id]
        assert (other.level, other.children, other.summary, other.method, other.passage_count) == (
            node.level, node.children, node.summary, node.method, node.passage_count)
        assert np.allclose(other.vector, node.vector)
    assert back.parents == tree.parents

    new = passage(centres, 4, 77, np.random.default_rng(8))
    change = await add(back, [new], OfflineSummariser(), PARAMS)
    parent = back.parent(new.uri)
    assert parent in change.changed and {topic_of(c) for c in back.nodes[parent].children} == {4}
    assert back.nodes[parent].passage_count == tree.nodes[parent].passage_count + 1

    build_facts = build_triples("urn:trustgraph:raptor-build:1", PARAMS, "full", "2025-01-01T00:00:00Z",
                                "2025-01-01T00:00:01Z", len(passages))
    assert any(t.p == TG.seed and t.o.value == "42" for t in build_facts)
    assert any(t.o == TG.RaptorBuild for t in build_facts)


class CountingSummariser(OfflineSummariser):
    """Offline summaries, counted: what one update's budget allows is visible."""

    def __init__(self) -> None:
        self.calls = 0

    async def summarise(self, texts, max_chars):
        self.calls += 1
        return await super().summarise(texts, max_chars)


async def test_a_batch_writes_at_most_its_summary_budget_and_the_rest_waits(centres):
    params = TreeParams(summaries_per_passage=1.0, min_summaries=2)
    passages = corpus(centres)
    tree = await build(passages, OfflineSummariser(), params)
    rng = np.random.default_rng(8)
    extra = [passage(centres, t, 200 + t, rng) for t in range(4)]  # four topics: four branches touched
    summariser = CountingSummariser()
    change = await add(tree, extra, summariser, params)
    assert summariser.calls == params.summary_budget(len(extra)) == 4
    assert tree.stale, "the ancestors beyond the budget wait"
    assert all(tree.nodes[n].level > 1 for n in tree.stale), "the clusters holding the new passages go first"
    assert set(tree.stale) <= change.changed, "their centroids changed, so they are stored even so"
    written = await summarise_stale(tree, summariser, params, budget=100)
    assert not tree.stale and written and summariser.calls == 4 + len(written)


async def test_a_full_build_and_incremental_batches_both_cover_every_passage(centres):
    passages = corpus(centres)
    params = TreeParams(min_summaries=1, summaries_per_passage=0.5)
    grown = await build(passages[:20], OfflineSummariser(), params)
    for start in range(20, len(passages), 30):
        await add(grown, passages[start:start + 30], OfflineSummariser(), params)
    full = await build(passages, OfflineSummariser(), params)
    for tree in (grown, full):
        assert_consistent(tree, {p.uri for p in passages})
    for tree in (grown, full):  # placement by descent still keeps topics mostly apart
        assert purity(tree) >= 0.8


def purity(tree: Tree) -> float:
    """The share of passages whose cluster's commonest topic is their own."""
    kept = 0
    for node_id in tree.levels[1]:
        topics = [topic_of(c) for c in tree.nodes[node_id].children]
        kept += max(topics.count(t) for t in set(topics))
    return kept / len(tree.parents.keys() - tree.nodes.keys())


async def test_the_descent_finds_the_cluster_of_a_passages_topic(centres):
    tree = await build(corpus(centres), OfflineSummariser(), PARAMS)
    new = passage(centres, 4, 300, np.random.default_rng(9))
    cluster = tree.nodes[nearest_cluster(tree, new.vector, beam=1)]
    assert {topic_of(c) for c in cluster.children} == {4}
