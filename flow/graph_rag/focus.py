"""Focus: which explored edges to answer from, and why. LLM mode asks for JSONL `{"id", "reasoning"}`
keyed by the hash of the labelled edge; offline mode scores by embedding similarity and graph
distance and says so in each reason."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

import numpy as np
from dataclasses import dataclass, replace

from tracegraph.base.llm.embeddings import unit_rows
from tracegraph.base.provenance.query import SelectedEdge, excerpt
from tracegraph.base.retrieval.ppr import best_of_each_passage_first
from tracegraph.base.retrieval.staleness import weighed_score
from tracegraph.base.retrieval.timeline import EdgeWeight
from tracegraph.schemas.rdf import Triple, fact_key


@dataclass(frozen=True, slots=True)
class Edge:
    """An explored edge: original terms (for the trace), labels (for people and the LLM), hops from a
    seed; or, when found through a ranked passage, that passage's rank (0 = best) and PPR score."""

    triple: Triple
    labels: tuple[str, str, str]
    hops: int
    passage: int | None = None
    ppr: float | None = None

    @property
    def id(self) -> str:
        return edge_id(*self.labels)

    @property
    def text(self) -> str:
        return " ".join(self.labels)


def edge_id(s: str, p: str, o: str) -> str:
    """Upstream's edge id: sha256 of the labelled edge, first 8 hex digits.

    >>> edge_id("Helios Grid", "depends on", "Corvid Analytics")
    'bf82ca87'
    """
    return hashlib.sha256(f"{s}|{p}|{o}".encode()).hexdigest()[:8]


@dataclass(frozen=True, slots=True)
class Scored:
    edge: Edge
    score: float
    similarity: float
    concept: str | None  # the concept it is most similar to; None for the question itself


CO_OCCURRENCE = "mentioned with"  # the offline extractor's weakest claim: two names in one sentence
CO_OCCURRENCE_WEIGHT = 0.8


def score_edges(edges: Sequence[Edge], edge_vectors: Sequence[Sequence[float]], concepts: Sequence[str | None],
                concept_vectors: Sequence[Sequence[float]]) -> list[Scored]:
    """Best similarity to any concept, times the PPR score of the edge's passage (an edge found by
    walking from seed entities instead: discounted by a quarter per hop), and by CO_OCCURRENCE_WEIGHT
    for mere co-occurrence edges. A concept given as None is the question itself, searched whole:
    the trace names it by reference, never by copying the question into every edge."""
    if not edges or not concepts:
        return [Scored(e, 0.0, 0.0, None) for e in edges]
    # One matrix product: (edges × dim) · (dim × concepts), rows and columns normalised.
    e = unit_rows(np.asarray(edge_vectors, dtype=np.float32))
    c = unit_rows(np.asarray(concept_vectors, dtype=np.float32))
    similarity = e @ c.T
    best_index = similarity.argmax(axis=1)
    scored = []
    for i, edge in enumerate(edges):
        best = float(similarity[i, best_index[i]])
        weight = CO_OCCURRENCE_WEIGHT if edge.labels[1] == CO_OCCURRENCE else 1.0
        reach = edge.ppr if edge.ppr is not None else 1 / (1 + 0.25 * edge.hops)
        scored.append(Scored(edge, weight * best * reach, best, concepts[best_index[i]]))
    return sorted(scored, key=lambda s: s.score, reverse=True)


def weighed(scored: Sequence[Scored], weights: Mapping[str, EdgeWeight]) -> list[Scored]:
    """Each score times its edge's staleness weight (timeline.EdgeWeight, by fact_key), best first
    again; `scored` as it is when nothing was weighed."""
    if not weights:
        return list(scored)
    unweighed = EdgeWeight(1.0)
    return sorted((replace(s, score=weighed_score(s.score, weights.get(fact_key(s.edge.triple), unweighed).weight))
                   for s in scored), key=lambda s: s.score, reverse=True)


def with_staleness(selected: Sequence[SelectedEdge], weights: Mapping[str, EdgeWeight]) -> list[SelectedEdge]:
    """The selected edges carrying their staleness weight and the older values they superseded."""
    out = []
    for edge in selected:
        weight = weights.get(fact_key(Triple(s=edge.s, p=edge.p, o=edge.o)))
        out.append(edge if weight is None else replace(edge, staleness=weight.weight, superseded=weight.superseded))
    return out


def offline_selection(scored: Sequence[Scored], limit: int, floor: float = 0.0) -> tuple[list[SelectedEdge], list[str]]:
    """The edges to answer from, and notes for the trace. Edges less similar to the question than
    `floor` are not kept, even when that leaves fewer than `limit`. Edges found through ranked
    passages come passage by passage first — the best edge of each passage in rank order — so
    every relevant passage is represented before any passage gets a second edge.

    >>> from tracegraph.schemas.rdf import iri
    >>> def edge(n, passage, sim): return Scored(Edge(Triple(s=iri(f"e:{n}"), p=iri("r:p"), o=iri("e:x")),
    ...     (str(n), "p", "x"), 0, passage, 1.0), sim, sim, "q")
    >>> chosen, notes = offline_selection([edge(1, 0, 0.9), edge(2, 0, 0.8), edge(3, 1, 0.5), edge(4, 2, 0.1)], 3, 0.2)
    >>> [c.s.iri for c in chosen], notes
    (['e:1', 'e:3', 'e:2'], ['1 edge(s) less similar to the question than the relevance floor 0.20 left out; 3 kept (edge limit 3)'])
    """
    relevant = [s for s in scored if s.similarity >= floor]
    ordered = best_of_each_passage_first(relevant, lambda s: s.edge.passage)[:limit]
    notes = []
    if len(relevant) < len(scored):
        notes.append(f"{len(scored) - len(relevant)} edge(s) less similar to the question than the relevance floor "
                     f"{floor:.2f} left out; {len(ordered)} kept (edge limit {limit})")
    return [SelectedEdge(s.edge.triple.s, s.edge.triple.p, s.edge.triple.o, reasoning=_offline_reason(s),
                         score=s.score, concept=s.concept, ppr=s.edge.ppr) for s in ordered], notes


def _offline_reason(s: Scored) -> str:
    where = (f"from passage #{s.edge.passage + 1} (personalised PageRank {s.edge.ppr:.3f})" if s.edge.passage is not None
             else f"{s.edge.hops} hop(s) from a seed entity")
    target = f"'{excerpt(s.concept)}'" if s.concept is not None else "the question"
    return (f"offline selection: embedding similarity {s.similarity:.2f} to {target}, {where}"
            + (", co-occurrence only" if s.edge.labels[1] == CO_OCCURRENCE else "") + f", score {s.score:.2f}")


FOCUS_SYSTEM = (
    "You select the knowledge-graph edges needed to answer a question. Each input line is a JSON object "
    '{"id", "s", "p", "o"}. Answer with JSON Lines only, one object per relevant edge, most relevant first: '
    '{"id": "<id from the input>", "reasoning": "<one sentence: why this edge helps answer>"}.'
)


def focus_prompt(question: str, candidates: Sequence[Scored], limit: int) -> str:
    lines = [json.dumps({"id": c.edge.id, "s": c.edge.labels[0], "p": c.edge.labels[1], "o": c.edge.labels[2]})
             for c in candidates]
    return f"Question: {question}\nSelect at most {limit} edges.\nEdges:\n" + "\n".join(lines)


def parse_selection(reply: str, candidates: Sequence[Scored], limit: int) -> tuple[list[SelectedEdge], list[str]]:
    """Selected edges in the LLM's order, and notes on what was dropped (unknown ids, bad lines)."""
    by_id = {c.edge.id: c for c in candidates}
    chosen: list[SelectedEdge] = []
    unknown, malformed, seen = [], 0, set()
    for line in reply.strip().strip("`").splitlines():
        line = line.strip().removeprefix("json").strip()
        if not line:
            continue
        try:
            item = json.loads(line)
            edge_key, reasoning = str(item["id"]), str(item.get("reasoning", ""))
        except (json.JSONDecodeError, KeyError, TypeError):
            malformed += 1
            continue
        match = by_id.get(edge_key)
        if match is None:
            unknown.append(edge_key)
            continue
        if edge_key in seen or len(chosen) >= limit:
            continue
        seen.add(edge_key)
        t = match.edge.triple
        chosen.append(SelectedEdge(t.s, t.p, t.o, reasoning=reasoning, score=match.score, concept=match.concept,
                                   ppr=match.edge.ppr))
    notes = []
    if unknown:
        notes.append(f"LLM named {len(unknown)} edge id(s) not in the subgraph, dropped: {', '.join(unknown[:10])}")
    if malformed:
        notes.append(f"LLM returned {malformed} line(s) that were not {{\"id\", \"reasoning\"}} JSON, ignored")
    return chosen, notes
