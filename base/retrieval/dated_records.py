"""The incidents, decisions and exceptions a collection's architecture memory keeps, with their dates:
what "before the Skyline outage" or "since ADR 0012" in a question is resolved against (date_phrases.py).
Read in one query, and only for a question with such a phrase; the one a phrase names is found by its
words, whatever their case."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from tracegraph.base.architecture.triples import MEMORY_CLASSES
from tracegraph.base.errors import RemoteError
from tracegraph.base.provenance.vocab import DC, PROV, RDF, RDFS, TG
from tracegraph.base.review.items import term_text
from tracegraph.base.temporal.query import Rows
from tracegraph.schemas.rdf import Term

MAX_RECORDS = 5_000
DATED_KINDS = ("failure-pattern", "decision", "exception")  # what a question names as an event

DATED_RECORDS_QUERY = f"""SELECT ?m ?type ?title ?date ?summary ?doc ?dtitle WHERE {{
    VALUES ?type {{ {" ".join(f"<{MEMORY_CLASSES[k].iri}>" for k in DATED_KINDS)} }}
    ?m <{RDF.type.iri}> ?type ; <{RDFS.label.iri}> ?title ; <{DC.date.iri}> ?date .
    OPTIONAL {{ ?m <{TG.summary.iri}> ?summary }}
    OPTIONAL {{ ?m <{PROV.wasDerivedFrom.iri}> ?doc . OPTIONAL {{ ?doc <{DC.title.iri}> ?dtitle }} }} }}"""

_KIND_OF_CLASS = {MEMORY_CLASSES[k].iri: k for k in DATED_KINDS}


@dataclass(frozen=True, slots=True)
class DatedRecord:
    """An incident, decision or exception of the architecture memory, with the date it carries."""

    iri: str
    kind: str  # "failure-pattern", "decision" or "exception"
    title: str
    day: date
    document: str = ""
    document_title: str = ""
    summary: str = ""


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


def records_from(answered: Sequence[Mapping[str, Term]]) -> list[DatedRecord]:
    """Rows of DATED_RECORDS_QUERY as records, one per node; a record without a readable date is left out."""
    found: dict[str, DatedRecord] = {}
    for row in answered:
        value = {name: term_text(term) for name, term in row.items() if term is not None}
        day = _day(value.get("date", ""))
        kind = _KIND_OF_CLASS.get(value.get("type", ""))
        if day is None or kind is None or value.get("m", "") in found:
            continue
        found[value["m"]] = DatedRecord(value["m"], kind, value.get("title", ""), day, value.get("doc", ""),
                                        value.get("dtitle", ""), value.get("summary", ""))
    return list(found.values())


async def read_dated_records(rows: Rows) -> list[DatedRecord]:
    """Every dated incident, decision and exception of the collection; [] for a store that answers no SPARQL."""
    try:
        return records_from(await rows(DATED_RECORDS_QUERY, MAX_RECORDS))
    except RemoteError:
        return []


# ---------------------------------------------------------------- the record a phrase names

_STOP = frozenset("""the a an of to in on at we our us it its they their was were is are be been did do does
    that this these those made make when which who what for with by and or from about had has have i you
    there then""".split())
KIND_WORDS = {  # words that name a kind of record
    "incident": "failure-pattern", "outage": "failure-pattern", "failure": "failure-pattern",
    "postmortem": "failure-pattern", "post-mortem": "failure-pattern", "downtime": "failure-pattern",
    "decision": "decision", "adr": "decision", "decided": "decision", "choice": "decision",
    "exception": "exception", "waiver": "exception",
}
KIND_NAMES = {"failure-pattern": "incident", "decision": "decision", "exception": "exception"}


def _stem(word: str) -> str:
    """A word without its commonest endings, so "regions" meets "region" and "moved" "move"."""
    if word.isdigit():
        return word.lstrip("0") or word
    for ending in ("ing", "ed", "es", "s", "e"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def _words(text: str) -> list[str]:
    return [_stem(w) for w in re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", text.lower()) if w not in _STOP]


def _record_words(record: DatedRecord, with_summary: bool) -> set[str]:
    texts = [record.title, record.document_title] + ([record.summary] if with_summary else [])
    return {w for t in texts for w in _words(t)} | {p for t in texts for w in _words(t) for p in w.split("-")}


def match_record(target: str, records: Sequence[DatedRecord], question: str = "") -> DatedRecord | None:
    """The record `target` names ("the Skyline outage", "ADR 0012", "the incident"): the one whose words
    hold most of the target's (a kind word such as "incident" counts for every record of that kind, but
    any other word must be met at least once). Without a kind word every word must be in its title;
    ties go to the record sharing most words with the rest of the question, then the latest.

    >>> outage = DatedRecord("urn:pm", "failure-pattern", "Post-mortem: Skyline forecast outage", date(2024, 6, 20))
    >>> adr = DatedRecord("urn:adr", "decision", "ADR 0012: Run Skyline in two regions", date(2025, 10, 2))
    >>> [match_record(t, [outage, adr]).iri for t in ("the skyline outage", "ADR 12", "the incident")]
    ['urn:pm', 'urn:adr', 'urn:pm']
    >>> match_record("the deploy of Billing", [outage, adr]), match_record("the migration incident", [outage, adr])
    (None, None)
    """
    kinds = kinds_named(target)
    wanted = _words(target)
    if not wanted:
        return None
    context = set(_words(question)) - set(wanted)
    kind_stems = {_stem(w) for w in KIND_WORDS}
    best: tuple[float, int, date] | None = None
    chosen = None
    for record in records:
        if kinds and record.kind not in kinds:
            continue
        words = _record_words(record, with_summary=bool(kinds))
        kind_words = {_stem(w) for w, k in KIND_WORDS.items() if k == record.kind}
        named = [w for w in wanted if w in words]  # the record's own words, not just its kind
        share = len({*named, *(w for w in wanted if w in kind_words)}) / len(set(wanted))
        if share < (0.5 if kinds else 1.0) or (not kinds and len(wanted) < 2) or \
                (not named and any(w not in kind_stems for w in wanted)):
            continue
        rank = (share, len(context & words), record.day)
        if best is None or rank > best:
            best, chosen = rank, record
    return chosen


def kinds_named(text: str) -> set[str]:
    """The kinds of record the words of `text` name ("incidents" → failure-pattern)."""
    words = re.findall(r"[a-z]+(?:-[a-z]+)*", text.lower())
    return {KIND_WORDS.get(w) or KIND_WORDS[w[:-1]] for w in words if w in KIND_WORDS or w[:-1] in KIND_WORDS}


def record_how(record: DatedRecord) -> str:
    """How a phrase naming `record` was resolved, for the trace."""
    where = record.document_title or record.document
    return (f"the date of {KIND_NAMES.get(record.kind, 'record')} '{record.title}'"
            + (f" (document {where})" if where else ""))
