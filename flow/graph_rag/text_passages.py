"""Passages GraphRAG reads as text: those personalised PageRank ranked among the best for a question
but from which extraction took no fact (a table flattened to text, a list, prose that relates nothing
by name). Their facts cannot carry them into the answer, so their text does, as the text units of a
local GraphRAG search do: quotable by the offline answer, given to the LLM beside the facts, and recorded
in the Focus step as tg:ChunkSelections, so the answer still traces to the chunk it used."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tracegraph.base.retrieval.passage_graph import PassageGraph
from tracegraph.base.retrieval.ppr import RankedPassage


@dataclass(frozen=True, slots=True)
class TextPassage:
    uri: str
    document: str
    title: str
    score: float
    text: str
    ranked: str  # why the ranking put it there (dense, BM25)

    @property
    def reason(self) -> str:
        return f"no fact was extracted from this passage: read as text ({self.ranked})"


def factless(graph: PassageGraph, ranked: Sequence[RankedPassage]) -> list[RankedPassage]:
    """The ranked passages the graph holds no fact of, in rank order."""
    out = []
    for passage in ranked:
        vertex = graph.passage_index.get(passage.uri)
        if vertex is None or not graph.facts[vertex]:
            out.append(passage)
    return out


async def read(tools, passages: Sequence[RankedPassage]) -> list[TextPassage]:
    """The passages with their text (fetched for those the ranking found without it)."""
    missing = [p.uri for p in passages if not p.text]
    fetched = {c.uri: c.text for c in await tools.chunks(missing)} if missing else {}
    found = [TextPassage(p.uri, p.document, p.title, p.score, p.text or fetched.get(p.uri, ""), p.reason)
             for p in passages]
    return [p for p in found if p.text.strip()]


def prompt_block(passages: Sequence[TextPassage]) -> str:
    """The passages as the LLM's prompt shows them, after the knowledge statements."""
    return "\n".join(f"- ({p.title or p.document}) {' '.join(p.text.split())}" for p in passages)


def in_walk_order(sources: Sequence[tuple[str, str]], ranked_at: dict[str, float]) -> list[tuple[str, str]]:
    """Documents in the passage walk's order where it ranked them, then those only other strategies found, in
    their given (evidence) order: ordered by reranked facts, the sources buried the second passage a multi-hop
    answer needs (bench/fusion_weights.py).

    >>> in_walk_order([("urn:doc:a", "A"), ("urn:doc:b", "B"), ("urn:doc:c", "C")], {"urn:doc:b": 0, "urn:doc:a": 3})
    [('urn:doc:b', 'B'), ('urn:doc:a', 'A'), ('urn:doc:c', 'C')]
    """
    return sorted(sources, key=lambda source: ranked_at.get(source[0], math.inf))


def interleaved(sources: Sequence[tuple[str, str]], ranked_at: dict[str, float], texts: Sequence[TextPassage],
                ranks: dict[str, int]) -> list[tuple[str, str]]:
    """Sources with the text passages' documents put where their PageRank rank puts them: after the last
    source whose own passage ranked better, else before the first that ranked worse, else last. `ranked_at`
    is each source document's best passage rank (absent: no ranked passage gave it).

    >>> text = TextPassage("urn:chunk:t", "urn:doc:t", "Table", 0.5, "…", "")
    >>> interleaved([("urn:doc:a", "A"), ("urn:doc:b", "B")], {"urn:doc:a": 0, "urn:doc:b": 4}, [text],
    ...             {"urn:chunk:t": 2})
    [('urn:doc:a', 'A'), ('urn:doc:t', 'Table'), ('urn:doc:b', 'B')]
    """
    out = list(sources)
    for text in sorted(texts, key=lambda t: ranks.get(t.uri, len(ranks))):
        if any(document == text.document for document, _ in out):
            continue
        rank = ranks.get(text.uri, len(ranks))
        better = [i for i, (document, _) in enumerate(out) if ranked_at.get(document, rank) < rank]
        worse = [i for i, (document, _) in enumerate(out) if ranked_at.get(document, -1) > rank]
        at = better[-1] + 1 if better else worse[0] if worse else len(out)
        out.insert(at, (text.document, text.title or text.document))
        ranked_at[text.document] = rank
    return out
