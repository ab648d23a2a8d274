"""The architecture answers as of a date (`as-of`): the facts around an entity that held then, read from
the history (the history-facts graph keeps every value that ever held, and a record says when each held);
facts of earlier owners only if they had begun by then; the CODEOWNERS files that existed then; memory
items dated by then. Every function here returns its input unchanged for `as_of` None (an answer as of
now), so callers thread the date through without branching. A collection that keeps no history cannot
be read as of a date: `keeps_history` tells the caller, who then answers from the current graph and
says so (timeline.NO_HISTORY)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from tracegraph.base.architecture import graph
from tracegraph.base.architecture.rules import Ruleset
from tracegraph.base.retrieval import history
from tracegraph.base.stores.protocol import HISTORY_FACTS_GRAPH
from tracegraph.base.temporal.query import Rows, records_for
from tracegraph.schemas.rdf import Triple, fact_key

T = TypeVar("T")
MAX_DOCUMENTS = 100_000


async def keeps_history(rows: Rows) -> bool:
    """Whether the collection keeps the history an answer as of a date is read from."""
    return bool(await rows(history.PRESENCE_QUERY, 1))


async def holding(rows: Rows, facts: Sequence[Triple], as_of: str) -> list[Triple]:
    """Those of `facts` that a record says held at `as_of` (as known now)."""
    records = await records_for(rows, facts)
    return [f for f in facts if any(r.holds(as_of) for r in records.get(fact_key(f), ()))]


async def edges(rows: Rows, entities: Sequence[str], as_of: str | None, *, limit: int = graph.MAX_ROWS,
                endings: Sequence[str] = ()) -> list[Triple]:
    """graph.edges as the graph held at `as_of`: every fact that ever held around `entities`, less those
    that did not hold then; the current graph's for `as_of` None."""
    if as_of is None:
        return await graph.edges(rows, entities, limit, endings)
    ever = await graph.edges(rows, entities, limit, endings, within=HISTORY_FACTS_GRAPH)
    return await holding(rows, ever, as_of)


async def begun(rows: Rows, named: Sequence[tuple[T, Triple]], as_of: str | None) -> list[tuple[T, Triple]]:
    """Those of (key, fact) pairs whose fact had begun to hold by `as_of` (one of its live records valid
    from then or earlier): an owner replaced before the date is history then, one named later is not yet."""
    if as_of is None or not named:
        return list(named)
    records = await records_for(rows, [fact for _, fact in named])
    return [(key, fact) for key, fact in named
            if any(r.active and r.valid_from <= as_of for r in records.get(fact_key(fact), ()))]


async def _document_dates(rows: Rows) -> dict[str, str]:
    return history.document_dates_from(await rows(history.DOCUMENT_DATES_QUERY, MAX_DOCUMENTS))


def _existed(document: str, dates: Mapping[str, str], as_of: str) -> bool:
    """Whether a document was valid by `as_of` (one the history does not date counts as valid, as for passages)."""
    return dates.get(document, "") <= as_of


async def rules(rows: Rows, ruleset: Ruleset, as_of: str | None) -> Ruleset:
    """The CODEOWNERS files of `ruleset` that existed at `as_of`: from their own date, else from the
    day they were added."""
    if as_of is None or not ruleset.files:
        return ruleset
    dates = await _document_dates(rows)
    return Ruleset({doc: parsed for doc, parsed in ruleset.files.items() if _existed(doc, dates, as_of)})


async def memory_items(rows: Rows, items: Sequence[dict[str, str]], as_of: str | None) -> list[dict[str, str]]:
    """The memory items (memory.read_items rows) that existed at `as_of`: dated by then, or, undated,
    from a document valid by then."""
    if as_of is None or not items:
        return list(items)
    dates = await _document_dates(rows) if any(not i.get("date") for i in items) else {}
    return [i for i in items
            if (i["date"][:10] <= as_of[:10] if i.get("date") else _existed(i.get("doc", ""), dates, as_of))]
