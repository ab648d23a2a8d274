"""When each owner of an entity held it, as a colleague would tell it: the date of every source naming an
owner (a document's own date, else only the day it was added), which statements a later one replaced (the
temporal keeper's supersession records), and which side of a graph–CODEOWNERS disagreement is newer, so
the current owner comes first and an earlier one is history. ownership.py gathers the claims; the
judgement here is pure, so it is tested without a store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from tracegraph.base.architecture import graph
from tracegraph.base.provenance.vocab import TG
from tracegraph.base.stores.protocol import HISTORY_GRAPH
from tracegraph.base.temporal.query import Rows
from tracegraph.base.temporal.records import Record
from tracegraph.schemas.architecture import Owner, Source
from tracegraph.schemas.rdf import Triple, fact_key

Side = Literal["graph", "codeowners", "same", "unknown", ""]


@dataclass(frozen=True, slots=True)
class DocumentDate:
    """A document's dates in the history: `own` is its own date (YYYY-MM-DD; "" when it carries none) and
    `added` the day it was added to the collection."""

    own: str
    added: str


async def document_dates(rows: Rows, documents: Sequence[str]) -> dict[str, DocumentDate]:
    """The dates of `documents` the history holds. The keeper makes an undated document valid from the
    moment it was recorded, so a valid-from equal to the recorded time means the document has no date."""
    unique = list(dict.fromkeys(d for d in documents if d))
    if not unique:
        return {}
    query = (f"SELECT ?doc ?from ?rec WHERE {{ VALUES ?doc {{ {graph.values(unique)} }} GRAPH <{HISTORY_GRAPH}> "
             f"{{ ?doc <{TG.validFrom.iri}> ?from ; <{TG.recordedAt.iri}> ?rec }} }}")
    earliest: dict[str, tuple[str, str]] = {}
    for row in await rows(query, 4 * len(unique)):
        doc, valid, recorded = graph.text(row.get("doc")), graph.text(row.get("from")), graph.text(row.get("rec"))
        if doc and valid and recorded:
            held = earliest.get(doc, (valid, recorded))
            earliest[doc] = (min(held[0], valid), min(held[1], recorded))
    return {doc: DocumentDate("" if valid == recorded else valid[:10], recorded[:10])
            for doc, (valid, recorded) in earliest.items()}


def dated(source: Source, dates: Mapping[str, DocumentDate]) -> Source:
    """`source` with its document's dates filled in (a date it already has, as a memory item's, is kept)."""
    known = dates.get(source.document)
    if known is None:
        return source
    return source.model_copy(update={"date": source.date or known.own, "added": source.added or known.added})


@dataclass(frozen=True, slots=True)
class Claim:
    """One source naming one owner: a graph fact as one document states it, or a CODEOWNERS rule."""

    owner: str  # IRI
    origin: Literal["graph", "codeowners"]
    source: Source  # dated; `superseded_by` set when a later statement replaced it
    holds: bool = True  # False once a later statement replaced it
    since: str = ""  # YYYY-MM-DD it holds from, when its document (or the fact itself) gives a date
    until: str = ""  # YYYY-MM-DD it stopped holding, when replaced


def graph_claims(owner: str, fact: Triple, sources: Sequence[Source], records: Sequence[Record],
                 everyone: Mapping[str, Record], cited: Mapping[str, Sequence[Source]],
                 dates: Mapping[str, DocumentDate], current: bool, at: str | None = None) -> list[Claim]:
    """One claim per document stating `fact` (its `sources`), dated and marked replaced by the document's
    latest record of it, as of `at` (None: now); `everyone` finds the record that replaced it (by IRI),
    `cited` that record's document and line. Without records (no history kept) a claim holds while the
    fact is `current` (held at `at`)."""
    claims = []
    for source in sources:
        record = max((r for r in records if r.document == source.document and r.active),
                     key=lambda r: (r.valid_from, r.recorded_at), default=None)
        if record is None:
            claims.append(Claim(owner, "graph", dated(source, dates), holds=current,
                                since=(dates.get(source.document) or DocumentDate("", "")).own))
            continue
        ended = record.valid_until is not None and (at is None or record.valid_until <= at)
        later = everyone.get(record.superseded_by or "") if ended else None
        replaced_by = _statement_source(later, cited, dates) if later else None
        document = dates.get(source.document)
        # A valid-from that is the day it was added (an undated document) is no date of the world.
        since = record.valid_from[:10] if document is None or document.own or \
            record.valid_from[:10] != document.added else ""
        claims.append(Claim(owner, "graph", dated(source, dates).model_copy(update={"superseded_by": replaced_by}),
                            holds=current and not ended, since=since,
                            until=(record.valid_until or "")[:10] if ended else ""))
    return claims


def _statement_source(record: Record, cited: Mapping[str, Sequence[Source]],
                      dates: Mapping[str, DocumentDate]) -> Source:
    """Where `record`'s statement is (its document and line), dated from the day it holds."""
    found = next((s for s in cited.get(fact_key(record.fact), ()) if s.document == record.document),
                 Source(document=record.document, kind="graph"))
    return dated(found, dates).model_copy(update={"date": record.valid_from[:10]})


def rule_claim(owner: str, source: Source, dates: Mapping[str, DocumentDate]) -> Claim:
    """A CODEOWNERS rule naming `owner`: it holds while the file says so, from the file's own date."""
    source = dated(source, dates)
    return Claim(owner, "codeowners", source, since=source.date)


@dataclass(frozen=True, slots=True)
class Judgement:
    """Who owns it now, which side is newer when the graph and CODEOWNERS disagree, and the sentence saying so."""

    current: frozenset[str]
    newer: Side = ""
    reason: str = ""


def judge(claims: Sequence[Claim], names: Mapping[str, str]) -> Judgement:
    """The current owners: those the graph still holds and those CODEOWNERS names; when the two disagree,
    those of the newer side (both when the dates cannot tell). `names` shows an owner to a reader."""
    in_graph = {c.owner for c in claims if c.origin == "graph" and c.holds}
    in_rules = {c.owner for c in claims if c.origin == "codeowners"}
    if not in_graph or not in_rules or in_graph == in_rules:
        return Judgement(frozenset(in_graph | in_rules))
    newer, reason = _newer_side(claims, in_graph, in_rules, names)
    current = in_graph if newer == "graph" else in_rules if newer == "codeowners" else in_graph | in_rules
    return Judgement(frozenset(current), newer, reason)


def _newer_side(claims: Sequence[Claim], in_graph: set[str], in_rules: set[str],
                names: Mapping[str, str]) -> tuple[Side, str]:
    rules = list({c.source.document: c.source for c in claims if c.origin == "codeowners"}.values())
    holding = [c for c in claims if c.origin == "graph" and c.holds]
    rules_day = max((s.date for s in rules), default="")
    newest = max((c for c in holding if c.since), key=lambda c: c.since, default=None)
    graph_day = newest.since if newest else ""
    files = ", ".join(_where(s) for s in rules)
    newest_graph = f"the graph's newest source, {_where(newest.source)}, is dated {graph_day}" if newest else ""
    # CODEOWNERS naming an owner the history says a later statement replaced, and not dated after it:
    # the file was not updated when the owner changed.
    replaced = sorted((c for c in claims if c.origin == "graph" and not c.holds and c.until
                       and c.owner in in_rules - in_graph and (not rules_day or rules_day < c.until)),
                      key=lambda c: c.until, reverse=True)
    if replaced:
        who = ", ".join(sorted({names.get(c.owner, c.owner) for c in replaced}))
        by = replaced[0].source.superseded_by
        later = f"{by.title or by.document} replaced" if by else "a later statement replaced"
        return "graph", (f"The graph is newer: CODEOWNERS ({files}, {_dated(rules)}) still names {who}, whom "
                         f"{later} on {replaced[0].until}.")
    if rules_day and graph_day:
        if rules_day > graph_day:
            return "codeowners", f"CODEOWNERS is newer: {files} is dated {rules_day}; {newest_graph}."
        if rules_day < graph_day:
            return "graph", f"The graph is newer: {newest_graph}; {files} is dated {rules_day}."
        return "same", f"Both sides are dated {graph_day}, so the dates cannot tell which is out of date."
    added = max((s.added for s in rules if s.added), default="")
    if rules_day:
        missing = f"the graph's sources carry no date of their own, and {files} is dated {rules_day}"
    else:
        missing = f"CODEOWNERS ({files}) carries no date of its own" + (f" (added {added})" if added else "")
    graph_dated = f", and {newest_graph}" if graph_day else ""
    return "unknown", f"Which side is newer cannot be told: {missing}{graph_dated}."


def _where(source: Source) -> str:
    place = source.title or source.document
    if source.line is None:
        return place
    last = source.last_line
    return f"{place} line {source.line}" if last is None else f"{place} lines {source.line}–{last}"


def _dated(sources: Sequence[Source]) -> str:
    days = sorted({s.date for s in sources if s.date})
    if days:
        return f"dated {days[-1]}"
    added = sorted({s.added for s in sources if s.added})
    return f"undated, added {added[-1]}" if added else "undated"


def standing(owner: Owner, claims: Sequence[Claim], judgement: Judgement) -> Owner:
    """`owner` placed in time: current or earlier, since when and (earlier) until when, from its claims."""
    if owner.entity in judgement.current:
        held = [c for c in claims if c.holds]
        return owner.model_copy(update={"standing": "current", "since": min(
            (c.since for c in held if c.since), default=""), "until": ""})
    return owner.model_copy(update={"standing": "earlier",
                                    "since": min((c.since for c in claims if c.since), default=""),
                                    "until": max((c.until for c in claims if c.until), default="")})


def listing_order(owner: Owner) -> tuple:
    """Current owners first, the one with the newest dated source first (on a tie, an owning relation
    before a CODEOWNERS rule before a leading one, then the owner both sides name); earlier owners after,
    the latest first."""
    owning = min(map(_relation_rank, owner.relations), default=2)
    if owner.standing == "current":
        newest = max((s.date for s in owner.sources if s.date and not s.superseded_by), default="")
        return (0, -_day_number(newest), owning, -len(owner.origins), owner.label.lower())
    return (1, -_day_number(owner.until or owner.since), owning, owner.label.lower())


def _relation_rank(relation: str) -> int:
    """0 for a relation saying it owns ("is owned by"), 1 for a CODEOWNERS rule, 2 for the rest ("is led by").

    >>> [_relation_rank(r) for r in ("is owned by", "CODEOWNERS", "is led by")]
    [0, 1, 2]
    """
    return 1 if relation == "CODEOWNERS" else 0 if "own" in relation.lower() else 2


def _day_number(day: str) -> int:
    """YYYY-MM-DD as a number that sorts like the day; 0 for none.

    >>> _day_number("2025-09-15"), _day_number("")
    (20250915, 0)
    """
    digits = day[:10].replace("-", "")
    return int(digits) if digits.isdigit() else 0
