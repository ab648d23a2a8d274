"""What retrieval reads of a collection's history, through the retrieval tools' SPARQL: whether it
keeps any; every record of some facts with the older records each one superseded; the documents'
valid-from dates and the statements of some chunks since superseded; and the facts around some
nodes as they ever held. One round trip each (facts in batches), so weighing evidence costs an
answer one query, and a collection without history none (see HistoryPresence)."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from tracegraph.base.errors import RemoteError
from tracegraph.base.provenance.vocab import PROV, RDF, TG
from tracegraph.base.stores.protocol import HISTORY_FACTS_GRAPH, HISTORY_GRAPH, SOURCE_GRAPH
from tracegraph.base.temporal.query import MAX_RECORD_ROWS, sparql_term
from tracegraph.base.temporal.records import Record, quoted_fact, read_record
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Term, Triple, fact_key

Rows = Sequence[Mapping[str, Term]]
TIMEOUT = 30.0
FACT_BATCH = 250  # facts per VALUES block
NODE_BATCH = 50  # nodes per neighbourhood query

PRESENCE_QUERY = f"SELECT ?s WHERE {{ GRAPH <{HISTORY_GRAPH}> {{ ?s ?p ?o }} }} LIMIT 1"
_H = HISTORY_GRAPH


def _value(term: Term | None) -> str | None:
    if isinstance(term, IriTerm):
        return term.iri
    return term.value if isinstance(term, LiteralTerm) else None


async def rows(tools, query: str, limit: int = MAX_RECORD_ROWS) -> Rows:
    """A read-only SELECT through the tools' SPARQL: its bindings."""
    return (await tools.sparql(query, limit=limit, timeout=TIMEOUT)).bindings


async def has_history(tools) -> bool:
    """Whether the collection keeps any history; a store that answers no SPARQL keeps none we can read."""
    try:
        return bool(await rows(tools, PRESENCE_QUERY, 1))
    except RemoteError:
        return False


class HistoryPresence:
    """Per collection, whether it has any history, asked once and kept until a graph update (or
    `max_age` seconds): so an answer in a collection without history makes no history query at all."""

    def __init__(self, max_age: float = 120.0) -> None:
        self.max_age = max_age
        self._known: dict[tuple[str, str], tuple[float, bool]] = {}

    def invalidate(self, scope: tuple[str, str]) -> None:
        self._known.pop(scope, None)

    async def get(self, scope: tuple[str, str], ask: Callable[[], Awaitable[bool]]) -> bool:
        kept = self._known.get(scope)
        if kept and time.monotonic() - kept[0] < self.max_age:
            return kept[1]
        found = await ask()
        self._known[scope] = (time.monotonic(), found)
        return found


# ---------------------------------------------------------------- facts

@dataclass
class FactHistory:
    """A fact's records, and for each record the older records (of another value) it superseded."""

    records: list[Record] = field(default_factory=list)
    superseded: dict[str, list[str]] = field(default_factory=dict)


def fact_records_query(facts: Sequence[Triple]) -> str:
    """Every quad of every record of `facts`, plus (?r tg:supersededValue ?older) for each older record
    that ?r superseded."""
    values = " ".join(sparql_term(quoted_fact(f)) for f in facts)
    older = f"{{ ?v <{TG.supersededBy.iri}> ?r . BIND(<{TG.supersededValue.iri}> AS ?p) }}"
    return (f"SELECT ?r ?p ?v WHERE {{ VALUES ?t {{ {values} }} GRAPH <{_H}> {{ ?r <{RDF.reifies.iri}> ?t . "
            f"{{ ?r ?p ?v }} UNION {older} }} }}")


def fact_histories_from(found: Rows) -> dict[str, FactHistory]:
    quads: dict[str, list[Triple]] = defaultdict(list)
    older: dict[str, list[str]] = defaultdict(list)
    for row in found:
        r, p, v = row.get("r"), row.get("p"), row.get("v")
        if not (isinstance(r, IriTerm) and isinstance(p, IriTerm) and v is not None):
            continue
        if p == TG.supersededValue:
            older[r.iri].append(_value(v) or "")
        else:
            quads[r.iri].append(Triple(s=r, p=p, o=v))
    histories: dict[str, FactHistory] = defaultdict(FactHistory)
    for uri, record_quads in quads.items():
        record = read_record(uri, record_quads)
        if record is not None:
            history = histories[fact_key(record.fact)]
            history.records.append(record)
            if older.get(uri):
                history.superseded[uri] = sorted(set(older[uri]))
    return dict(histories)


async def fact_histories(tools, facts: Sequence[Triple]) -> dict[str, FactHistory]:
    """The history of each fact that has one, by fact_key; batches run concurrently."""
    unique = list({fact_key(f): f for f in facts}.values())
    batches = [unique[i:i + FACT_BATCH] for i in range(0, len(unique), FACT_BATCH)]
    found = await asyncio.gather(*(rows(tools, fact_records_query(batch)) for batch in batches))
    return {key: history for part in found for key, history in fact_histories_from(part).items()}


# ---------------------------------------------------------------- documents and passages

DOCUMENT_DATES_QUERY = (f"SELECT ?doc ?from WHERE {{ GRAPH <{_H}> {{ ?doc <{TG.validFrom.iri}> ?from "
                        f"FILTER NOT EXISTS {{ ?doc <{RDF.reifies.iri}> ?t }} }} }}")


def document_dates_from(found: Rows) -> dict[str, str]:
    """Document → its valid-from (the earliest, should it have been given two)."""
    dates: dict[str, str] = {}
    for row in found:
        doc, valid = _value(row.get("doc")), _value(row.get("from"))
        if doc and valid and isinstance(row.get("doc"), IriTerm):
            dates[doc] = min(dates.get(doc, valid), valid)
    return dates


async def document_dates(tools) -> dict[str, str]:
    """Every document's valid-from in the collection."""
    return document_dates_from(await rows(tools, DOCUMENT_DATES_QUERY))


# A document that gave a date of its own: the keeper makes an undated one valid from when it was recorded.
# Documents (not fact records) by whether they carry a date of their own: valid-from differs from the day recorded.
DATED_SHARE_QUERY = (f"SELECT (COUNT(?doc) AS ?all) (SUM(IF(STR(?from) != STR(?rec), 1, 0)) AS ?dated) WHERE {{ "
                     f"GRAPH <{_H}> {{ ?doc <{TG.validFrom.iri}> ?from ; <{TG.recordedAt.iri}> ?rec "
                     f"FILTER NOT EXISTS {{ ?doc <{RDF.reifies.iri}> ?t }} }} }}")
# A collection reads dates in questions as "when" once this share of its documents is dated: status notes, ADRs,
# reviews. Encyclopedia passages (one dated page in 1,890 on the MuSiQue sample) read "in 1930" as what to look for.
DATED_SHARE = 0.1


async def has_dated_documents(tools) -> bool:
    """Whether enough documents of the collection carry a date of their own (false without history): only then
    do the dates a question names say when to read the collection, rather than what to look for."""
    try:
        found = await rows(tools, DATED_SHARE_QUERY, 1)
    except RemoteError:
        return False
    counts = found[0] if found else {}
    every, dated = (int(getattr(counts.get(k), "value", 0) or 0) for k in ("all", "dated"))
    return every > 0 and dated / every >= DATED_SHARE


@dataclass
class PassageHistory:
    """Documents' valid-from, and per chunk the (document, valid-until) of its statements since superseded."""

    dates: dict[str, str] = field(default_factory=dict)
    ended: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def passage_history_query(documents: Sequence[str], chunks: Sequence[str]) -> str:
    docs = " ".join(f"<{d}>" for d in documents)
    parts = " ".join(f"<{c}>" for c in chunks)
    stated = (f"GRAPH <{SOURCE_GRAPH}> {{ ?sg <{PROV.wasDerivedFrom.iri}> ?chunk ; <{TG.contains.iri}> ?t }} "
              f"GRAPH <{_H}> {{ ?r <{RDF.reifies.iri}> ?t ; <{TG.statedIn.iri}> ?doc ; <{TG.validUntil.iri}> ?until "
              f"FILTER NOT EXISTS {{ ?r <{TG.retractedAt.iri}> ?gone }} }}")
    return (f"SELECT ?doc ?from ?chunk ?until WHERE {{ {{ VALUES ?doc {{ {docs} }} GRAPH <{_H}> "
            f"{{ ?doc <{TG.validFrom.iri}> ?from }} }} UNION {{ VALUES ?chunk {{ {parts} }} {stated} }} }}")


def passage_history_from(found: Rows) -> PassageHistory:
    history = PassageHistory()
    for row in found:
        doc, chunk, until = _value(row.get("doc")), _value(row.get("chunk")), _value(row.get("until"))
        if chunk and doc and until:
            history.ended.setdefault(chunk, []).append((doc, until))
        elif doc and (valid := _value(row.get("from"))):
            history.dates[doc] = min(history.dates.get(doc, valid), valid)
    return history


async def passage_history(tools, passages: Sequence[tuple[str, str | None]]) -> PassageHistory:
    """For (chunk, document) pairs: the documents' dates and the chunks' superseded statements."""
    documents = list(dict.fromkeys(d for _, d in passages if d))
    chunks = list(dict.fromkeys(c for c, _ in passages))
    if not chunks:
        return PassageHistory()
    return passage_history_from(await rows(tools, passage_history_query(documents, chunks)))


# ---------------------------------------------------------------- the graph as it ever held

def around_query(nodes: Sequence[str], limit: int) -> str:
    """Facts of the history-facts graph with one of `nodes` as subject or object, at most `limit` per
    node and direction (as TripleStore.around reads the current graph)."""
    parts = []
    for node in nodes:
        n = f"<{node}>"
        parts += [f"{{ SELECT ?s ?p ?o WHERE {{ GRAPH <{HISTORY_FACTS_GRAPH}> {{ {n} ?p ?o }} BIND({n} AS ?s) }} "
                  f"LIMIT {limit} }}",
                  f"{{ SELECT ?s ?p ?o WHERE {{ GRAPH <{HISTORY_FACTS_GRAPH}> {{ ?s ?p {n} }} BIND({n} AS ?o) }} "
                  f"LIMIT {limit} }}"]
    return f"SELECT DISTINCT ?s ?p ?o WHERE {{ {' UNION '.join(parts)} }}"


async def facts_around(tools, nodes: Sequence[str], limit: int) -> list[Triple]:
    """Every fact that ever held around `nodes`, each once (whether it held at a date is the caller's
    question: see Timeline.holding)."""
    found: dict[str, Triple] = {}
    for start in range(0, len(nodes), NODE_BATCH):
        batch = list(nodes[start:start + NODE_BATCH])
        for row in await rows(tools, around_query(batch, limit), 2 * limit * len(batch)):
            s, p, o = row.get("s"), row.get("p"), row.get("o")
            if s is not None and isinstance(p, IriTerm) and o is not None:
                fact = Triple(s=s, p=p, o=o)
                found.setdefault(fact_key(fact), fact)
    return list(found.values())
