"""Passage ranking by personalised PageRank over the passage graph (the idea of HippoRAG 2, our own
code): a random walk restarts at the passages that dense and BM25 search find for the question and
at the entities the question names, and passages are ranked by how often the walk visits them. A
passage that shares a rare entity with the best hits — the second hop of a multi-hop question —
gathers mass although it shares no words with the question.

Every rank carries its reasons (the seeds, their weights, each passage's scores), so the trace can
say why a passage was chosen."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from tracegraph.base.provenance.uris import entity_uri
from tracegraph.base.retrieval.passage_graph import PassageGraph, without_qualifier
from tracegraph.base.retrieval.tools import RetrievedChunk

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PprLimits:
    candidates: int = 30  # passages asked of dense and of BM25 search each
    passage_seeds: int = 3  # best hybrid passages the walk restarts at
    keyword_weight: float = 0.5  # BM25 (scaled to the best hit) against cosine similarity
    sharpness: float = 3.0  # a seed passage restarts the walk with weight hybrid score ** sharpness
    entity_weight: float = 1.0  # a named entity's restart weight, before its rarity discount
    rarity: float = 0.5  # a named entity's weight is divided by (passages mentioning it) ** rarity
    synonym_similarity: float = 0.9  # a name links to an entity whose label embeds at least this close
    damping: float = 0.85  # chance the walk goes on rather than restarts
    hybrid_mix: float = 0.0  # the hybrid score's share beside PPR mass in the final order


@dataclass(frozen=True, slots=True)
class Seed:
    """A restart point of the walk: a passage or an entity IRI, its weight, and why."""

    node: str
    weight: float
    reason: str


@dataclass(frozen=True, slots=True)
class RankedPassage:
    uri: str
    document: str
    title: str
    score: float  # PPR mass, scaled so the best passage has 1
    dense: float | None  # cosine similarity, when dense search found it
    keyword: float | None  # BM25 score, when keyword search found it
    text: str = ""

    @property
    def reason(self) -> str:
        found = [f"dense {self.dense:.2f}" if self.dense is not None else "",
                 f"BM25 {self.keyword:.1f}" if self.keyword is not None else ""]
        found = [f for f in found if f] or ["reached through the graph only"]
        return f"personalised PageRank {self.score:.3f}; " + ", ".join(found)


@dataclass
class PassageRanking:
    passages: list[RankedPassage]
    seeds: list[Seed]
    notes: list[str] = field(default_factory=list)
    method: str = ""
    candidates: int = 0  # passages dense and BM25 search found


def best_of_each_passage_first(items: Sequence[T], passage_of: Callable[[T], int | None]) -> list[T]:
    """`items` (best first) reordered so the best item of each passage comes first, in passage rank
    order, then every other item in its own order; items of no passage (None) are never moved up.
    So each relevant passage — a second hop included — is represented before any passage repeats.

    >>> best_of_each_passage_first(["a1", "a2", "b1", "x", "c1"], lambda i: {"a": 0, "b": 1, "c": 2}.get(i[0]))
    ['a1', 'b1', 'c1', 'a2', 'x']
    """
    first: dict[int, T] = {}
    for item in items:
        rank = passage_of(item)
        if rank is not None:
            first.setdefault(rank, item)
    return list(dict.fromkeys([*(first[r] for r in sorted(first)), *items]))


def hybrid_scores(dense: Sequence[RetrievedChunk], keyword: Sequence[RetrievedChunk],
                  keyword_weight: float) -> dict[str, float]:
    """cosine + keyword_weight × BM25 / best BM25, per passage found by either.

    >>> hybrid_scores([RetrievedChunk("a", 0.6, "", None)], [RetrievedChunk("b", 8.0, "", None),
    ...               RetrievedChunk("a", 4.0, "", None)], 0.5)
    {'a': 0.85, 'b': 0.5}
    """
    scores = {c.uri: c.score for c in dense}
    best = max((c.score for c in keyword), default=0.0)
    for c in keyword:
        if best > 0:
            scores[c.uri] = round(scores.get(c.uri, 0.0) + keyword_weight * c.score / best, 6)
    return scores


async def entity_seeds(tools, graph: PassageGraph, names: Sequence[str], limits: PprLimits) -> list[Seed]:
    """The graph's entities the question names: by normalised label (with and without a qualifier),
    else the nearest entity label by embedding when it is at least `synonym_similarity` close.
    Rare entities weigh more (÷ passages mentioning it ** `rarity`)."""
    seeds: dict[str, Seed] = {}
    unmatched = []
    for name in names:
        found = [e for e in dict.fromkeys([entity_uri(name), entity_uri(without_qualifier(name))])
                 if e in graph.entity_index]
        for entity in found:
            seeds.setdefault(entity, Seed(entity, limits.entity_weight / graph.mentions[entity] ** limits.rarity,
                                          f"named in the question as '{name}'"))
        if not found:
            unmatched.append(name)
    if unmatched:
        vectors = await tools.embed(unmatched)
        for name, vector in zip(unmatched, vectors):
            for entity, similarity in await tools.nearest_entities(vector, 3):
                if similarity >= limits.synonym_similarity and entity in graph.entity_index:
                    seeds.setdefault(entity, Seed(
                        entity, similarity * limits.entity_weight / graph.mentions[entity] ** limits.rarity,
                        f"'{name}' matches its label by embedding similarity {similarity:.2f}"))
    return list(seeds.values())


async def rank_passages(tools, graph: PassageGraph | None, question: str, vector: Sequence[float],
                        names: Sequence[str], limit: int, limits: PprLimits = PprLimits()) -> PassageRanking:
    """The `limit` best passages for a question, with the seeds that ranked them."""
    dense, keyword = await asyncio.gather(tools.nearest_chunks(vector, limits.candidates),
                                          tools.keyword_chunks(question, limits.candidates))
    hybrid = hybrid_scores(dense, keyword, limits.keyword_weight)
    dense_by = {c.uri: c for c in dense}
    keyword_by = {c.uri: c for c in keyword}
    ordered = sorted(hybrid, key=hybrid.get, reverse=True)
    if graph is None or graph.empty:
        passages = [RankedPassage(uri, (dense_by.get(uri) or keyword_by[uri]).document or "", "", hybrid[uri],
                                  _score(dense_by, uri), _score(keyword_by, uri),
                                  dense_by[uri].text if uri in dense_by else "") for uri in ordered[:limit]]
        return PassageRanking(passages, [], ["no passage graph yet (nothing extracted): dense + BM25 order"],
                              "hybrid dense + BM25 (no passage graph)", len(hybrid))
    seeds = [Seed(uri, hybrid[uri] ** limits.sharpness, f"passage: {_found_by(uri, dense, keyword)}")
             for uri in ordered if uri in graph.passage_index][: limits.passage_seeds]
    seeds += await entity_seeds(tools, graph, names, limits)
    reset = {}
    for seed in seeds:
        vertex = graph.passage_index.get(seed.node, graph.entity_index.get(seed.node))
        reset[vertex] = reset.get(vertex, 0.0) + seed.weight
    mass = await asyncio.to_thread(graph.personalised_pagerank, reset, limits.damping)
    count = len(graph.passages)
    best_mass = max(mass[:count], default=0.0) or 1.0
    best_hybrid = max(hybrid.values(), default=0.0) or 1.0
    final = {i: mass[i] / best_mass + limits.hybrid_mix * hybrid.get(graph.passages[i], 0.0) / best_hybrid
             for i in range(count)}
    top = sorted((i for i in final if final[i] > 0), key=final.get, reverse=True)[:limit]
    passages = [RankedPassage(graph.passages[i], graph.documents[i], graph.titles[i], round(mass[i] / best_mass, 4),
                              _score(dense_by, graph.passages[i]), _score(keyword_by, graph.passages[i]),
                              dense_by[graph.passages[i]].text if graph.passages[i] in dense_by else "")
                for i in top]
    notes = [f"personalised PageRank over {count} passages and {len(graph.entities)} entities "
             f"(damping {limits.damping}), restarting at {len(seeds)} seed(s)"]
    return PassageRanking(passages, seeds, notes, "personalised PageRank seeded by dense + BM25 passages and named "
                          "entities", len(hybrid))


def _score(found: dict[str, RetrievedChunk], uri: str) -> float | None:
    return round(found[uri].score, 4) if uri in found else None


def _found_by(uri: str, dense: Sequence[RetrievedChunk], keyword: Sequence[RetrievedChunk]) -> str:
    ranks = [f"{name} #{[c.uri for c in hits].index(uri) + 1}"
             for name, hits in (("dense", dense), ("BM25", keyword)) if uri in {c.uri for c in hits}]
    return ", ".join(ranks)
