"""Dates in a question's words: each kind of phrase resolved against a fixed today (years, months, days,
relative phrases, windows, offsets), "before / since / three days before" a named incident or decision
resolved to its record's date whatever the case, and words that only look like dates left alone; then
the records read from a real store, and the trace's date phrases checked by SHACL."""

from __future__ import annotations

import asyncio
import doctest
from datetime import date

import pytest

import tracegraph.base.retrieval.as_of_heading
import tracegraph.base.retrieval.date_phrases
import tracegraph.base.retrieval.dated_records
from tracegraph.base.architecture.memory_docs import MemoryRecord
from tracegraph.base.architecture.triples import memory_facts
from tracegraph.base.provenance import query
from tracegraph.base.provenance.date_phrases import date_phrase_triples
from tracegraph.base.provenance.shacl import validate_trace
from tracegraph.base.provenance.uris import memory_uri
from tracegraph.base.provenance.vocab import TG, XSD
from tracegraph.base.retrieval import history
from tracegraph.base.retrieval.date_phrases import DatePhrase, find_phrases, needs_records
from tracegraph.base.retrieval.dated_records import DatedRecord, read_dated_records
from tracegraph.base.stores.protocol import RETRIEVAL_GRAPH
from tracegraph.schemas.rdf import Triple, iri, literal

from support.dated_graph import REF, dated_tools

TODAY = date(2026, 11, 27)  # a Friday
OUTAGE = DatedRecord("urn:memory:outage", "failure-pattern", "Post-mortem: Skyline forecast outage, June 2024",
                     date(2024, 6, 20), "urn:doc:pm", "postmortem-2024-06-skyline-outage")
TWO_REGIONS = DatedRecord("urn:memory:adr-12", "decision", "ADR 0012: Run Skyline in two regions",
                          date(2025, 10, 2), "urn:doc:adr-12", "adr-0012-skyline-two-regions")
GATEWAY = DatedRecord("urn:memory:adr-7", "decision", "ADR 0007: Skyline writes forecasts through the Storage Gateway",
                      date(2024, 5, 10), "urn:doc:adr-7", "adr-0007-skyline-storage-gateway")
RECORDS = [OUTAGE, TWO_REGIONS, GATEWAY]


def only(question: str, records=()) -> DatePhrase:
    [phrase] = find_phrases(question, TODAY, records)
    return phrase


@pytest.mark.parametrize("module", [tracegraph.base.retrieval.date_phrases, tracegraph.base.retrieval.dated_records,
                                    tracegraph.base.retrieval.as_of_heading])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("question, text, start, end, how", [
    ("Who owned Skyline in 2024?", "in 2024", date(2024, 1, 1), date(2024, 12, 31), "year"),
    ("who owned skyline in march 2025?", "in march 2025", date(2025, 3, 1), date(2025, 3, 31), "month"),
    ("What did we decide in May?", "in May", date(2026, 5, 1), date(2026, 5, 31),
     "month, the latest by today 2026-11-27"),
    ("Who owned Skyline on 12 June 2024?", "on 12 June 2024", date(2024, 6, 12), date(2024, 6, 12), "date"),
    ("Who owned Skyline on 2024-06-12?", "on 2024-06-12", date(2024, 6, 12), date(2024, 6, 12), "date"),
    ("Who owned Skyline as of Q3 2025?", "as of Q3 2025", None, date(2025, 9, 30), "quarter"),
    ("Who owned Skyline before 2025?", "before 2025", None, date(2024, 12, 31), "year"),
    ("What changed between March 2024 and June 2025?", "between March 2024 and June 2025",
     date(2024, 3, 1), date(2025, 6, 30), "month"),
])
def test_years_months_and_days(question, text, start, end, how):
    assert only(question) == DatePhrase(text, start, end, how)


@pytest.mark.parametrize("question, text, start, end", [
    ("Who led Tax last year?", "last year", date(2025, 1, 1), date(2025, 12, 31)),
    ("What happened last Friday?", "last Friday", date(2026, 11, 20), date(2026, 11, 20)),
    ("What changed three days ago?", "three days ago", date(2026, 11, 24), date(2026, 11, 24)),
    ("Who owned Ledger a year ago?", "a year ago", date(2025, 11, 27), date(2025, 11, 27)),
    ("What shipped last week?", "last week", date(2026, 11, 16), date(2026, 11, 22)),
    ("What did we do last quarter?", "last quarter", date(2026, 7, 1), date(2026, 9, 30)),
])
def test_relative_phrases_are_resolved_against_today(question, text, start, end):
    assert only(question) == DatePhrase(text, start, end, "relative to today 2026-11-27")
    assert only(question).as_of == f"{end.isoformat()}T23:59:59Z"


def test_a_window_that_reaches_today_leaves_the_answer_as_of_now():
    since = only("What changed since 2024?")
    assert (since.start, since.end, since.as_of) == (date(2024, 1, 1), None, None)
    assert only("Who owns Skyline this year?").as_of is None


@pytest.mark.parametrize("question, text, start, end", [
    ("Who owned Skyline before the Skyline outage?", "before the Skyline outage", None, date(2024, 6, 19)),
    ("WHO OWNED SKYLINE BEFORE THE SKYLINE OUTAGE?", "BEFORE THE SKYLINE OUTAGE", None, date(2024, 6, 19)),
    ("What did Skyline depend on three days before the incident?", "three days before the incident",
     date(2024, 6, 17), date(2024, 6, 17)),
    ("What changed in the week before the incident?", "the week before the incident",
     date(2024, 6, 13), date(2024, 6, 19)),
    ("what happened in the 2 weeks after the outage", "the 2 weeks after the outage",
     date(2024, 6, 21), date(2024, 7, 4)),
])
def test_a_named_incident_gives_its_date(question, text, start, end):
    phrase = only(question, RECORDS)
    assert (phrase.text, phrase.start, phrase.end, phrase.record) == (text, start, end, OUTAGE.iri)
    assert phrase.how == ("the date of incident 'Post-mortem: Skyline forecast outage, June 2024' "
                          "(document postmortem-2024-06-skyline-outage)")


def test_a_named_decision_gives_its_date():
    before = only("Who owned Skyline before adr 12?", RECORDS)
    assert (before.end, before.record) == (date(2025, 10, 1), TWO_REGIONS.iri)
    since = only("Since the decision to run Skyline in two regions, who owns it?", RECORDS)
    assert (since.start, since.end, since.record) == (date(2025, 10, 2), None, TWO_REGIONS.iri)
    assert since.how.startswith("the date of decision 'ADR 0012: Run Skyline in two regions'")


def test_an_incident_that_is_not_recorded_is_said_so_and_gives_no_date():
    phrase = only("What changed before the migration incident?", RECORDS)
    assert (phrase.resolved, phrase.as_of, phrase.start, phrase.end) == (False, None, None, None)
    assert phrase.how == "no incident named 'the migration incident' is recorded in this collection"


@pytest.mark.parametrize("question", [
    "Who owns Skyline?",
    "What changed in v2024.1?",
    "What did May say about Skyline?",
    "Ask May Chen about the rollout",
    "Summarise the 2024 review",
    "What must start before the Demand Feed starts?",  # "before" a clause that names no record
    "It took 2000 ms",
    "The pump spins at 2000 rpm",
])
def test_words_that_only_look_like_dates_give_nothing(question):
    assert find_phrases(question, TODAY, RECORDS) == []


def test_records_are_read_only_for_a_phrase_that_may_name_one():
    assert needs_records("What changed before the incident?")
    assert needs_records("three days before ADR 12")
    assert not needs_records("Who owned Skyline before 2025?")
    assert not needs_records("Who owned Skyline in 2024?")


# ---------------------------------------------------------------- the records, from a store

INCIDENT = MemoryRecord(kind="failure-pattern", title="Post-mortem: Payments outage", text="The Payments API was down.",
                        line=1, date="2024-09-01", relations={"affected": ("Payments API",)})
LESSON = MemoryRecord(kind="memory", title="Retries need a budget", text="A lesson.", line=9, date="2024-09-01")
INCIDENT_DOC = "urn:trustgraph:doc:postmortem-payments"


async def test_the_dated_records_are_read_from_the_collection(tmp_path, embedder):
    async with dated_tools(tmp_path, embedder) as tools:
        await tools.triples.add(REF, [t for facts in memory_facts(INCIDENT_DOC, [INCIDENT, LESSON]).values()
                                      for t in facts])
        found = await read_dated_records(lambda q, limit: history.rows(tools, q, limit))
    assert found == [DatedRecord(memory_uri(INCIDENT_DOC, "failure-pattern", 1, INCIDENT.title), "failure-pattern",
                                 INCIDENT.title, date(2024, 9, 1), INCIDENT_DOC, "", INCIDENT.text)]


# ---------------------------------------------------------------- the trace

SID = "3f2c9d1e-0000-4000-8000-00000000d47e"
QUESTION = query.question_uri(SID)


def traced(phrases, applied, as_of, why_not: str = "") -> list[Triple]:
    return [*query.question_triples(QUESTION, "Who owned Skyline three days before the outage, in 2024?", query.now()),
            *query.time_triples(QUESTION, as_of, None),
            *date_phrase_triples(QUESTION, phrases, applied, lambda i: query.item_uri("date-phrase", SID, i), why_not)]


async def test_the_date_phrases_of_a_trace_conform_and_say_how_they_were_resolved():
    offset = only("three days before the outage", RECORDS)
    year = only("in 2024")
    missing = only("before the migration incident", RECORDS)
    triples = traced([offset, year, missing], offset, offset.as_of)
    report = await asyncio.to_thread(validate_trace, triples)
    assert report.conforms, report.messages
    node = query.item_uri("date-phrase", SID, 0)
    about = {(t.p.iri, getattr(t.o, "value", None) or t.o.iri) for t in triples if t.s.iri == node}
    assert {(TG.phraseText.iri, "three days before the outage"), (TG.appliedAsOf.iri, "true"),
            (TG.resolvedAsOf.iri, "2024-06-17T23:59:59Z"), (TG.windowStart.iri, "2024-06-17T00:00:00Z"),
            (TG.anchorRecord.iri, OUTAGE.iri), (TG.resolvedBy.iri, offset.how)} <= about
    dated = [t.o for t in triples if t.s.iri == node and t.p == TG.resolvedAsOf]
    assert [d.datatype for d in dated] == [XSD.dateTime.iri]


async def test_shacl_reports_a_phrase_that_disagrees_with_the_answers_date_or_says_nothing():
    year = only("in 2024")
    wrong_date = traced([year], year, "2025-01-01T00:00:00Z")
    report = await asyncio.to_thread(validate_trace, wrong_date)
    assert not report.conforms and any("equal to its Question's tg:asOf" in m for m in report.messages), report.messages
    node = query.item_uri("date-phrase", SID, 0)
    silent = [t for t in traced([year], year, year.as_of) if not (t.s.iri == node and t.p == TG.resolvedBy)]
    report = await asyncio.to_thread(validate_trace, silent)
    assert not report.conforms and any("tg:resolvedBy" in m for m in report.messages), report.messages
    twice = [*traced([year], year, year.as_of),
             Triple(s=iri(node), p=TG.appliedAsOf, o=literal("false", XSD.boolean.iri), g=RETRIEVAL_GRAPH)]
    report = await asyncio.to_thread(validate_trace, twice)
    assert not report.conforms and any("tg:appliedAsOf" in m for m in report.messages), report.messages
