"""Community reports: which entities and facts are central, an offline extractive report, and the
prompt for an LLM report and the parsing of its answer.

A report is derived from exactly its `key_facts`: the offline one quotes them, the LLM one is asked
about them and nothing else, so a report resolves to the facts (and through them to the documents)
it was written from. Centrality is weighted PageRank, computed once per fact graph.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from tracegraph.base.communities.detect import Community
from tracegraph.base.communities.graph import FactGraph
from tracegraph.base.provenance.uris import entity_uri
from tracegraph.base.stores.keyword import readable, sentence
from tracegraph.schemas.rdf import Triple

OFFLINE = "offline: "
NEUTRAL_RATING = 5.0


@dataclass(frozen=True, slots=True)
class Report:
    """What a community is about, derived from exactly `key_facts`."""

    community: str  # the community's id
    title: str
    summary: str
    key_entities: tuple[str, ...]  # IRIs, most central first
    key_facts: tuple[Triple, ...]
    rating: float  # importance, 0 to 10
    rating_reason: str
    method: str  # "LLM (<model>)", or "offline: …"


# ---------------------------------------------------------------- reading facts as text

fact_sentence = sentence  # a fact as the words it says: labels where known, else readable IRIs


def entity_name(graph: FactGraph, entity: str) -> str:
    return graph.labels.get(entity) or readable(entity)


# ---------------------------------------------------------------- what is central in a community

def _ranked(graph: FactGraph, community: Community) -> tuple[np.ndarray, np.ndarray]:
    """(members' vertices, the same most central first); ties go to the IRI that sorts first."""
    vertices = graph.vertices(community.members)
    return vertices, vertices[np.lexsort((vertices, -graph.centrality[vertices]))]


def key_entities(graph: FactGraph, community: Community, limit: int = 10) -> tuple[str, ...]:
    """The community's most central entities (IRIs), most central first."""
    return tuple(graph.entities[v] for v in _ranked(graph, community)[1][:limit].tolist())


def key_facts(graph: FactGraph, community: Community, limit: int = 20) -> tuple[Triple, ...]:
    """The community's most central facts, best first: those linking two of its entities, and the types
    and literal-valued facts of its top entities, scored by the centrality of their ends (summed).

    Only facts touching the `limit` most central entities are candidates, so a community holding most of
    the graph costs its top entities' degree, not its size; a fact between two lesser entities would
    rank below those anyway, unless a top entity has fewer than `limit` facts in all.
    """
    members, ranked = _ranked(graph, community)
    top = ranked[:limit]
    edges, _, others = graph.incident(top)
    edges = np.unique(edges[np.isin(others, members)])
    rank = graph.centrality
    scores = rank[graph.sources[edges]] + rank[graph.targets[edges]]
    best = edges[np.lexsort((edges, -scores))][:limit]
    candidates = [(float(rank[graph.sources[e]] + rank[graph.targets[e]]), 0, i, fact)
                  for i, e in enumerate(best.tolist()) for fact in graph.edge_facts(e)]
    for i, vertex in enumerate(top.tolist()):
        candidates += [(float(rank[vertex]), 1, i, fact) for fact in graph.attributes.get(graph.entities[vertex], ())]
    candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
    return tuple(c[3] for c in candidates[:limit])


def internal_fact_count(graph: FactGraph, community: Community) -> int:
    """How many facts link two of the community's entities."""
    members = graph.vertices(community.members)
    edges, owners, others = graph.incident(members)
    internal = np.isin(others, members) & (owners < others)
    return int(graph.weights[edges[internal]].sum())


# ---------------------------------------------------------------- the offline report

def structural_rating(graph: FactGraph, community: Community) -> tuple[float, str]:
    """An importance score without an LLM, and its reason: half for the community's size, half for the facts
    inside it, each on a log scale relative to the whole graph, so 10 is the whole graph and a pair of
    entities with one fact scores about 1."""
    size, entities = len(community.members), max(len(graph.entities), 1)
    inside, facts = internal_fact_count(graph, community), max(graph.fact_count, 1)
    rating = 5 * math.log1p(size) / math.log1p(entities) + 5 * math.log1p(inside) / math.log1p(facts)
    rating = round(min(max(rating, 0.0), 10.0), 1)
    reason = (f"structural score, no LLM: 5 x log(1 + entities) / log(1 + all entities) + 5 x log(1 + facts inside) "
              f"/ log(1 + all facts), with {size} of {entities} entities and {inside} of {facts} facts")
    return rating, reason


def _title(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def needs_report(community: Community) -> bool:
    """Whether a community gets a report of its own. One that merged nothing on its level (a single
    child: the same members) is its child again, whose report stands for it; on sparse real text most
    upper-level communities are such, and would only repeat their child's report."""
    return len(community.children) != 1


def offline_report(graph: FactGraph, community: Community, *, facts: int = 20, entities: int = 10) -> Report:
    """An extractive report (no LLM): the most central entities, then the most central facts as sentences."""
    central = key_entities(graph, community, entities)
    quoted = key_facts(graph, community, facts)
    names = [entity_name(graph, e) for e in central]
    rating, reason = structural_rating(graph, community)
    intro = (f"Offline extractive summary (no LLM wrote this) of a level-{community.level} community "
             f"of {len(community.members)} entities.")
    lines = [intro,
             f"Central entities: {', '.join(names)}.",
             "Most central facts:",
             *(f"- {fact_sentence(fact, graph.labels)}." for fact in quoted)]
    return Report(
        community=community.id, title=_title(names[:3]) if names else community.id, summary="\n".join(lines),
        key_entities=central, key_facts=quoted, rating=rating, rating_reason=reason,
        method=(f"{OFFLINE}extractive — the {len(central)} most central entities by weighted PageRank and the "
                f"{len(quoted)} most central facts among them, quoted as sentences; no LLM"))


# ---------------------------------------------------------------- the LLM report

REPORT_SYSTEM = (
    "You write reports on communities of a knowledge graph: groups of entities more densely linked to each "
    "other than to the rest. Use only the facts you are given; do not add knowledge of your own. Answer with "
    "a single JSON object and nothing else.")


def report_prompt(graph: FactGraph, community: Community, facts: Sequence[Triple]) -> str:
    """The user prompt for a community's report, asking about exactly `facts`."""
    names = [entity_name(graph, e) for e in key_entities(graph, community)]
    numbered = "\n".join(f"{i}. {fact_sentence(f, graph.labels)}." for i, f in enumerate(facts, 1))
    return (f"A community of {len(community.members)} entities. Its most central entities, most central first: "
            f"{'; '.join(names)}.\n\nIts most central facts:\n{numbered}\n\n"
            'Reply with JSON: {"title": "a short name for the community", '
            '"summary": "a few sentences on what it is about, from the facts above", '
            '"key_entities": ["the most important entity names"], '
            '"key_relations": ["the most important facts, as sentences"], '
            '"rating": "a number from 0 to 10: how important this community is", '
            '"rating_reason": "one sentence on why"}')


def _json_object(text: str) -> dict | None:
    """The first JSON object in `text`, wherever it is (code fences, prose around it)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        found = re.match(r"\s*(-?\d+(?:\.\d+)?)", value)  # "7", "7.5/10"
        value = float(found.group(1)) if found else None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def parse_report(community: str, text: str, facts: Sequence[Triple], key_entities: Sequence[str], model: str,
                 *, fallback_rating: float = NEUTRAL_RATING) -> Report | None:
    """The report in an LLM's answer, or None if it has no usable title and summary.

    The entities the model names (matched to `key_entities` by their IRI slug) come first. A rating
    outside 0-10 is clamped; one that is not a number becomes `fallback_rating`, and the reason says so.
    """
    data = _json_object(text)
    if data is None or not _text(data.get("title")) or not _text(data.get("summary")):
        return None
    summary = _text(data["summary"])
    relations = [_text(r) for r in data.get("key_relations") or () if _text(r)]
    if relations:
        summary += "\nKey relations:\n" + "\n".join(f"- {r}" for r in relations)
    named = [entity_uri(n) for n in data.get("key_entities") or () if isinstance(n, str) and n.strip()]
    ordered = tuple(dict.fromkeys([e for e in named if e in key_entities] + list(key_entities)))
    reason = _text(data.get("rating_reason"))
    given = _number(data.get("rating"))
    if given is None:
        rating = fallback_rating
        reason = (f"the model gave no usable rating ({data.get('rating')!r}); {fallback_rating} is a neutral default"
                  + (f"; its reason: {reason}" if reason else ""))
    else:
        rating = min(max(given, 0.0), 10.0)
        if rating != given:
            reason = f"{reason} (rating {given} clamped to 0-10)".strip()
    return Report(community=community, title=_text(data["title"]), summary=summary, key_entities=ordered,
                  key_facts=tuple(facts), rating=rating, rating_reason=reason, method=f"LLM ({model})")
