"""Memory extraction by an LLM (RSN-08): the prompt, and a parser that trusts nothing the document lacks."""

import doctest
import json

import pytest
from tracegraph.base.architecture import memory_llm
from tracegraph.base.architecture.memory_docs import ADR
from tracegraph.base.architecture.memory_llm import (
    SYSTEM,
    MemoryExtractionFailed,
    extract_with_llm,
    parse,
    prompt,
)

DOCUMENT = """\
# Post-mortem: Skyline upload outage

Date: 20 June 2024

## Summary

Uploads to Skyline failed for 47 minutes because the Storage Gateway exhausted its connection pool.

## Lessons learned

- Config changes to the Storage Gateway need a canary.
"""

REPLY = {"records": [
    {"kind": "failure-pattern", "title": "Skyline upload outage",
     "text": "Uploads to Skyline failed for 47 minutes because the Storage Gateway exhausted its connection pool.",
     "author": "", "date": "2024-06-20", "root_cause": "The Storage Gateway exhausted its connection pool.",
     "impact": "Uploads failed for 47 minutes.", "action_items": ["Add a pool alarm", "Canary config changes"],
     "relations": {"affected": ["Skyline"], "caused_by": ["storage gateway"]}},
    {"kind": "memory", "text": "Config changes to the Storage Gateway need a canary.",
     "relations": {"concerns": ["Storage Gateway"]}},
]}


def fenced(data) -> str:
    return "Here are the records:\n```json\n" + json.dumps(data) + "\n```\n"


def test_the_prompt_names_the_kind_and_fences_the_document():
    asked = prompt(DOCUMENT, "text/markdown")
    assert "a post-mortem" in asked  # recognised, since none was declared
    assert "<<<DOCUMENT\n" + DOCUMENT in asked and asked.endswith("DOCUMENT>>>")
    assert "an architecture decision record" in prompt("anything", ADR)
    for key in ("records", "kind", "rationale", "root_cause", "action_items", "policy", "relations", "why",
                "affected", "caused_by", "excepts", "concerns"):
        assert f'"{key}"' in SYSTEM


def test_a_fenced_reply_becomes_records_checked_against_the_document():
    failure, lesson = parse(fenced(REPLY), DOCUMENT)
    assert (failure.kind, failure.title, failure.line, failure.date) == (
        "failure-pattern", "Skyline upload outage", 7, "2024-06-20")
    assert failure.relations == {"affected": ("Skyline",), "caused-by": ("Storage Gateway",)}  # as written
    assert failure.fields["root-cause"] == "The Storage Gateway exhausted its connection pool."
    assert failure.fields["action-items"] == "Add a pool alarm\nCanary config changes"
    assert (lesson.kind, lesson.line, lesson.title) == ("memory", 11, lesson.text)
    assert lesson.author == lesson.date == lesson.status == ""


def test_names_authors_and_dates_the_document_lacks_are_dropped():
    reply = {"records": [{"kind": "decision", "title": "Keep Skyline", "text": "Uploads to Skyline failed.",
                          "author": "Grace Hopper", "date": "2023-01-01", "status": "Accepted",
                          "relations": {"why": ["Skyline", "Orbis Cloud"], "concerns": ["Atlantis"],
                                        "invented": ["Skyline"]}}]}
    record, = parse(json.dumps(reply), DOCUMENT)
    assert record.relations == {"why": ("Skyline",)}
    assert (record.author, record.date, record.status) == ("", "", "accepted")


def test_unknown_kinds_and_empty_records_are_dropped_and_missing_fields_tolerated():
    reply = {"records": [{"kind": "rumour", "text": "Skyline is haunted."}, {"kind": "memory"}, "not a record",
                         {"kind": "Failure_Pattern", "text": "Something nobody wrote down."}]}
    record, = parse(json.dumps(reply), DOCUMENT)
    assert (record.kind, record.line, dict(record.fields), dict(record.relations)) == (
        "failure-pattern", 1, {}, {})


def test_a_json_reply_of_another_shape_gives_no_records():
    assert parse('{"answer": 42}', DOCUMENT) == []
    assert parse("[]", DOCUMENT) == []
    assert [r.kind for r in parse('[{"kind": "memory", "text": "Skyline failed."}]', DOCUMENT)] == ["memory"]


@pytest.mark.parametrize("reply", ["", "I could not find any records.", "```json\n{records: [}\n```"])
def test_a_reply_that_is_not_json_fails(reply):
    with pytest.raises(MemoryExtractionFailed) as failed:
        parse(reply, DOCUMENT)
    assert isinstance(failed.value, ValueError)


async def test_extract_with_llm_asks_once_with_the_system_prompt():
    asked = []

    async def ask(system: str, user: str) -> str:
        asked.append((system, user))
        return fenced(REPLY)

    records = await extract_with_llm(DOCUMENT, "postmortem", ask)
    assert [r.kind for r in records] == ["failure-pattern", "memory"]
    assert asked == [(SYSTEM, prompt(DOCUMENT, "postmortem"))]


def test_doctests():
    result = doctest.testmod(memory_llm)
    assert result.attempted > 0 and result.failed == 0
