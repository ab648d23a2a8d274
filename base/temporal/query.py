"""Reading the history: records of given facts, the graph as it held at a date, and what changed
between two dates. SPARQL over the history graph (one round trip each), checked again in Python by
`Record.holds`, the one definition of "held at" both use.

A query runs through a `Rows` function, so the triples processor (its store) and retrieval (the
triples service) share it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from tracegraph.base.provenance.vocab import RDF, TG
from tracegraph.base.stores.protocol import HISTORY_FACTS_GRAPH, HISTORY_GRAPH, CollectionRef, TripleStore
from tracegraph.base.temporal.nquads import term_nt
from tracegraph.base.temporal.records import Record, quoted_fact, read_record
from tracegraph.schemas.rdf import IriTerm, Term, Triple, TripleTerm, fact_key

Rows = Callable[[str, int], Awaitable[Sequence[Mapping[str, Term]]]]  # (SELECT query, row limit) -> rows
MAX_RECORD_ROWS = 200_000
_BATCH = 200  # facts per VALUES block


def sparql_term(term: Term) -> str:
    """A term in SPARQL syntax (RDF 1.2 triple terms as `<<( s p o )>>`): its N-Triples text."""
    return term_nt(term)


def _instant(value: str) -> str:
    return f'"{value}"^^<http://www.w3.org/2001/XMLSchema#dateTime>'


def _records(rows: Sequence[Mapping[str, Term]]) -> list[Record]:
    """Rows of (?r ?p ?v) — every quad of each record — as Records."""
    quads: dict[str, list[Triple]] = defaultdict(list)
    for row in rows:
        r, p, v = row.get("r"), row.get("p"), row.get("v")
        if isinstance(r, IriTerm) and isinstance(p, IriTerm) and v is not None:
            quads[r.iri].append(Triple(s=r, p=p, o=v))
    return [rec for uri, qs in quads.items() if (rec := read_record(uri, qs)) is not None]


def store_rows(store: TripleStore, ref: CollectionRef) -> Rows:
    """Rows from a collection's own store (the triples processor; retrieval reads over the bus)."""
    async def rows(sparql: str, limit: int):
        return (await store.query(ref, sparql, limit=limit)).rows
    return rows


async def slot_values(rows: Rows, slots: Sequence[tuple[Term, Term]]) -> list[Triple]:
    """Every value these (subject, predicate) slots ever had (the history-facts graph), in one round trip;
    `records_for` then reads their records (two index lookups: a join through the triple term is slower)."""
    values = " ".join(f"({sparql_term(s)} {sparql_term(p)})" for s, p in slots)
    found = await rows(f"SELECT ?s ?sp ?o WHERE {{ VALUES (?s ?sp) {{ {values} }} "
                       f"GRAPH <{HISTORY_FACTS_GRAPH}> {{ ?s ?sp ?o }} }}", MAX_RECORD_ROWS)
    return [Triple(s=row["s"], p=row["sp"], o=row["o"]) for row in found
            if isinstance(row.get("sp"), IriTerm) and row.get("s") is not None and row.get("o") is not None]


async def records_for(rows: Rows, facts: Sequence[Triple]) -> dict[str, list[Record]]:
    """Every record (active or not) of each fact, by fact_key."""
    found: dict[str, list[Record]] = defaultdict(list)
    unique = list({fact_key(f): f for f in facts}.values())
    for i in range(0, len(unique), _BATCH):
        values = " ".join(sparql_term(quoted_fact(f)) for f in unique[i:i + _BATCH])
        query = (f"SELECT ?r ?p ?v WHERE {{ VALUES ?t {{ {values} }} GRAPH <{HISTORY_GRAPH}> "
                 f"{{ ?r <{RDF.reifies.iri}> ?t . ?r ?p ?v }} }}")
        for record in _records(await rows(query, MAX_RECORD_ROWS)):
            found[fact_key(record.fact)].append(record)
    return found


def _holding_filter(at: str, known: str | None) -> str:
    """SPARQL for `Record.holds(at, known)` over ?rec ?from ?ret ?until ?sat."""
    if known is None:
        knew, ended = "!BOUND(?ret)", "BOUND(?until)"
    else:
        k = _instant(known)
        knew, ended = f"?rec <= {k} && (!BOUND(?ret) || ?ret > {k})", f"BOUND(?until) && ?sat <= {k}"
    a = _instant(at)
    return f"FILTER({knew} && ?from <= {a} && !({ended} && ?until <= {a}))"


_RECORD_TIMES = (f"?r <{TG.recordedAt.iri}> ?rec ; <{TG.validFrom.iri}> ?from . "
                 f"OPTIONAL {{ ?r <{TG.retractedAt.iri}> ?ret }} OPTIONAL {{ ?r <{TG.validUntil.iri}> ?until }} "
                 f"OPTIONAL {{ ?r <{TG.supersededAt.iri}> ?sat }}")


def snapshot_query(at: str, known: str | None, limit: int) -> str:
    """The records holding at `at` as known at `known` (at most `limit`), with all their quads."""
    start = f"GRAPH <{HISTORY_GRAPH}> {{ ?r <{RDF.reifies.iri}> ?t . {_RECORD_TIMES} }}"
    return (f"SELECT ?r ?p ?v WHERE {{ {{ SELECT DISTINCT ?r WHERE {{ {start} {_holding_filter(at, known)} }} "
            f"LIMIT {limit} }} GRAPH <{HISTORY_GRAPH}> {{ ?r ?p ?v }} }}")


async def _facts_about(rows: Rows, subject: str, limit: int) -> list[Triple]:
    """Every fact the subject ever had (the history-facts graph, by its subject index)."""
    found = await rows(f"SELECT ?p ?o WHERE {{ GRAPH <{HISTORY_FACTS_GRAPH}> {{ <{subject}> ?p ?o }} }} LIMIT {limit}", limit)
    return [Triple(s=IriTerm(iri=subject), p=row["p"], o=row["o"]) for row in found
            if isinstance(row.get("p"), IriTerm) and row.get("o") is not None]


@dataclass
class FactState:
    """A fact and the records behind it (those that hold, for a snapshot or one side of a diff)."""

    fact: Triple
    records: list[Record] = field(default_factory=list)


def merge(records: Sequence[Record]) -> list[FactState]:
    by_fact: dict[str, FactState] = {}
    for record in records:
        by_fact.setdefault(fact_key(record.fact), FactState(record.fact)).records.append(record)
    return list(by_fact.values())


async def snapshot(rows: Rows, at: str, known: str | None = None, subject: str | None = None,
                   limit: int = 1000) -> tuple[list[FactState], bool]:
    """The facts holding at `at` (as known at `known`; None: now), and whether the limit cut them.
    About one subject: its facts first, then their records (two indexed lookups, not a scan)."""
    if subject:
        facts = await _facts_about(rows, subject, limit * 4)
        found = [r for records in (await records_for(rows, facts)).values() for r in records]
        states = merge([r for r in found if r.holds(at, known)])
        return states[:limit], len(states) > limit or len(facts) >= limit * 4
    found = _records(await rows(snapshot_query(at, known, limit), MAX_RECORD_ROWS))
    holding = [r for r in found if r.holds(at, known)]
    return merge(holding), len(found) >= limit


def _window_filter(start: str, end: str, axis: str) -> str:
    s, e = _instant(start), _instant(end)
    inside = lambda v: f"(BOUND({v}) && {v} > {s} && {v} <= {e})"  # noqa: E731
    if axis == "recorded":
        return f"FILTER({inside('?rec')} || {inside('?ret')} || {inside('?sat')})"
    return f"FILTER(!BOUND(?ret) && ({inside('?from')} || {inside('?until')}))"


def changed_facts_query(start: str, end: str, axis: str, limit: int) -> str:
    """The facts with a record whose boundary on `axis` falls in (start, end]."""
    return (f"SELECT DISTINCT ?t WHERE {{ GRAPH <{HISTORY_GRAPH}> {{ ?r <{RDF.reifies.iri}> ?t . {_RECORD_TIMES} }} "
            f"{_window_filter(start, end, axis)} }} LIMIT {limit}")


@dataclass
class Change:
    change: str  # added, removed, changed
    fact: FactState
    previous: FactState | None = None


async def diff(rows: Rows, start: str, end: str, axis: str = "valid", limit: int = 1000) -> tuple[list[Change], bool]:
    """Facts added, removed and changed between `start` and `end`: on the `valid` axis, the world as
    known now at each date; on the `recorded` axis, the graph as it stood at each date."""
    candidates = [row["t"].triple for row in await rows(changed_facts_query(start, end, axis, limit), limit)
                  if isinstance(row.get("t"), TripleTerm)]
    records = await records_for(rows, candidates)
    before_known, after_known = (start, end) if axis == "recorded" else (None, None)
    added: list[FactState] = []
    removed: list[FactState] = []
    for fact in candidates:
        mine = records.get(fact_key(fact), [])
        before = [r for r in mine if r.holds(start, before_known)]
        after = [r for r in mine if r.holds(end, after_known)]
        if after and not before:
            added.append(FactState(fact, after))
        elif before and not after:
            removed.append(FactState(fact, before))
    return pair_changes(added, removed), len(candidates) >= limit


def pair_changes(added: list[FactState], removed: list[FactState]) -> list[Change]:
    """A value replaced — the same subject and predicate removed once and added once — is one change."""
    slot = lambda state: (str(state.fact.s), str(state.fact.p))  # noqa: E731
    gone: dict[tuple[str, str], list[FactState]] = defaultdict(list)
    for state in removed:
        gone[slot(state)].append(state)
    changes: list[Change] = []
    for state in added:
        olds = gone.get(slot(state))
        if olds and len(olds) == 1 and sum(slot(a) == slot(state) for a in added) == 1:
            changes.append(Change("changed", state, olds.pop()))
        else:
            changes.append(Change("added", state))
    changes += [Change("removed", state) for states in gone.values() for state in states]
    return changes
