"""Institutional memory about an entity (RSN-08): the decisions, failure patterns, exceptions to policy
and memories that name it, ranked by relevance and recency, each with its document, author and date.

Relevance is the cosine between the question (or, when none is given, "why was <entity> decided and what
happened to it") and the item's title and text, with the bundled embedding model (the spec's cross-encoder
when none is configured), weighed by how directly the item touches the entity: a decision *about* it
counts more than one that merely mentions it. Recency halves every `half_life_days`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

from tracegraph.base.architecture import at_date
from tracegraph.base.architecture.graph import Entity, text
from tracegraph.base.architecture.memory_reasons import with_reasons
from tracegraph.base.architecture.triples import KIND_OF_CLASS, RELATION_OF_PREDICATE, RELATIONS
from tracegraph.base.provenance.vocab import DC, PROV, RDF, RDFS, TG
from tracegraph.base.retrieval.rerank import EmbeddingReranker
from tracegraph.base.temporal.query import Rows
from tracegraph.schemas.architecture import MemoryItem, MemoryResponse, Source

Embed = Callable[[Sequence[str]], Awaitable[list[list[float]]]]
MAX_ITEMS = 2_000
# How directly each relation ties an item to the entity.
RELATION_WEIGHT = {"why": 1.0, "affected": 0.9, "caused-by": 0.9, "excepts": 0.9, "concerns": 0.6}
# An ADR no longer in force still explains the past, but ranks below one that is.
STATUS_WEIGHT = {"superseded": 0.6, "deprecated": 0.6, "rejected": 0.5}
UNDATED_RECENCY = 0.25  # an item without a date: older than most, newer than none
RELEVANCE_SHARE = 0.7  # of the score; the rest is recency


def default_question(label: str) -> str:
    return f"Why was {label} designed this way, what was decided about {label}, and what went wrong with it?"


async def read_items(rows: Rows, entity: str) -> list[dict[str, str]]:
    """One dict per (item, relation) touching the entity."""
    relations = " ".join(f"<{p.iri}>" for p in RELATIONS.values())
    query = f"""SELECT ?m ?rel ?type ?title ?summary ?why ?author ?date ?status ?line ?doc ?dtitle WHERE {{
        VALUES ?rel {{ {relations} }} ?m ?rel <{entity}> ; <{RDF.type.iri}> ?type ; <{RDFS.label.iri}> ?title .
        OPTIONAL {{ ?m <{TG.summary.iri}> ?summary }} OPTIONAL {{ ?m <{DC.creator.iri}> ?author }}
        OPTIONAL {{ ?m <{DC.date.iri}> ?date }} OPTIONAL {{ ?m <{TG.decisionStatus.iri}> ?status }}
        OPTIONAL {{ ?m <{TG.lineNumber.iri}> ?line }}
        OPTIONAL {{ ?m <{TG.rationale.iri}>|<{TG.rootCause.iri}>|<{TG.policy.iri}> ?why }}
        OPTIONAL {{ ?m <{PROV.wasDerivedFrom.iri}> ?doc . OPTIONAL {{ ?doc <{DC.title.iri}> ?dtitle }} }} }}"""
    return [{name: text(value) for name, value in row.items()} for row in await rows(query, MAX_ITEMS)
            if text(row.get("type")) in KIND_OF_CLASS]


def recency(date: str, today: datetime, half_life_days: float) -> float:
    """2^(−age/half-life) for a dated item (1.0 for a future date), UNDATED_RECENCY without one.

    >>> recency("2024-01-01", datetime(2025, 1, 1, tzinfo=UTC), 366)
    0.5
    """
    try:
        when = datetime.fromisoformat(date[:10]).replace(tzinfo=UTC)
    except ValueError:
        return UNDATED_RECENCY
    age = max((today - when).days, 0)
    return round(0.5 ** (age / half_life_days), 4)


async def memory(rows: Rows, entity: Entity, embed: Embed, *, question: str = "", limit: int = 20,
                 half_life_days: float = 365.0, today: datetime | None = None,
                 as_of: str | None = None) -> MemoryResponse:
    """The items about `entity`, best first; as of a date (at_date.py), those that existed then, their
    recency counted to that date."""
    if as_of:
        today = datetime.fromisoformat(as_of.replace("Z", "+00:00"))
    today = today or datetime.now(UTC)
    found = await at_date.memory_items(rows, await read_items(rows, entity.iri), as_of)
    by_node: dict[str, dict[str, str]] = {}
    for row in found:  # one item per node, by its most direct relation
        relation = RELATION_OF_PREDICATE[row["rel"]]
        held = by_node.get(row["m"])
        if held is None or RELATION_WEIGHT[relation] > RELATION_WEIGHT[held["relation"]]:
            by_node[row["m"]] = {**row, "relation": relation}
    if not by_node:
        return MemoryResponse(ranking="no decision, failure pattern, exception or memory names this entity")
    asked = question.strip() or default_question(entity.label)
    items = list(by_node.values())
    similarity = await EmbeddingReranker(embed).scores(asked, [f"{i['title']}. {i.get('summary', '')}" for i in items])
    ranked = []
    for item, cosine in zip(items, similarity, strict=True):
        relevance = round(max(cosine, 0.0) * RELATION_WEIGHT[item["relation"]], 4)
        fresh = recency(item.get("date", ""), today, half_life_days)
        status = item.get("status", "")
        score = (RELEVANCE_SHARE * relevance + (1 - RELEVANCE_SHARE) * fresh) * STATUS_WEIGHT.get(status, 1.0)
        line = item.get("line", "")
        ranked.append(MemoryItem(
            node=item["m"], kind=KIND_OF_CLASS[item["type"]], title=item["title"], text=item.get("summary", ""),
            why=item.get("why", ""),
            status=status, relation=item["relation"], score=round(score, 4), relevance=relevance, recency=fresh,
            source=Source(document=item.get("doc", ""), title=item.get("dtitle", ""),
                          line=int(line) if line.isdigit() else None, author=item.get("author", ""),
                          date=item.get("date", ""), kind="graph")))
    ranked.sort(key=lambda i: (-i.score, i.title))
    how = (f"score = ({RELEVANCE_SHARE:g} × relevance + {1 - RELEVANCE_SHARE:g} × recency) × status weight; "
           f"relevance = cosine to {'the question' if question.strip() else 'a why-question about the entity'} "
           f"× relation weight (why 1, affected/caused-by/excepts 0.9, concerns 0.6); recency halves every "
           f"{half_life_days:g} days (undated {UNDATED_RECENCY}); superseded/deprecated ×0.6, rejected ×0.5")
    return MemoryResponse(items=await with_reasons(rows, ranked[:limit]), ranking=how)
