"""Offline memory extraction (RSN-08): ADRs, post-mortems and review comments become typed records."""

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tracegraph.base.architecture import memory_docs
from tracegraph.base.architecture.memory_docs import (
    ADR,
    GIST_LIMIT,
    POSTMORTEM,
    REVIEW,
    extract,
    recognise,
)

NYGARD_ADR = """\
# ADR 0007: Keep Skyline on Orbis Cloud

Date: 2024-06-20
Status: Accepted
Author(s): Ada Kern, Bo Lind

## Context

The Grid Analytics team runs Skyline next to the Storage Gateway. Moving it to Nimbus would double egress costs.

## Decision

We will keep Skyline on Orbis Cloud and route uploads through the Storage Gateway.

## Consequences

- Billing Service keeps its current latency.
- The Platform Council must review this in 2025.
"""

MADR = """\
---
status: accepted
date: 2024-03-05
deciders: [Ada Kern, Ravi Rao]
---
# Use Kafka for order events

## Context and Problem Statement

Orders Service publishes events that Ledger and Notifier consume. How should we transport them?

## Considered Options

* Kafka
* RabbitMQ

## Decision Outcome

Chosen option: "Kafka", because only Kafka supports replay for Ledger.

### Negative Consequences

* The Platform team must operate Kafka.
"""

EXCEPTION_ADR = """\
# ADR 12: Multi-cloud for Skyline

* Status: proposed
* Date: June 20, 2024
* Deciders: @ada-kern

## Context
Company policy requires one cloud. Orbis Cloud has no GPU region in Asia.

## Decision
Skyline is granted an exception to the single-cloud policy until Orbis Cloud opens its Tokyo region.

## Consequences
Skyline runs partly on Nimbus.

## Exceptions
- Storage Gateway may replicate to Nimbus (exception to the data-residency standard).
"""

POST_MORTEM = """\
# Post-mortem: Skyline upload outage

**Date:** 20 June 2024
**Authors:** @ada-kern

## Summary

Uploads to Skyline failed for 47 minutes because the Storage Gateway exhausted its connection pool.

## Impact

About 12% of Grid Analytics team jobs failed; Billing Service retried uploads.

## Root cause

A config change in Storage Gateway lowered the Postgres connection pool to 10.

## Timeline

- 14:02 UTC: alerts fire.
- 14:49 UTC: config reverted.

## Action items

| Action | Owner | Due |
|---|---|---|
| Add a pool-size alarm to Storage Gateway | @sre-team | 2024-07-01 |
| Review config changes in Flux | @platform | 2024-07-15 |

## Lessons learned

We learned:

- Config changes to the Storage Gateway need a canary.
- Skyline should degrade gracefully when uploads fail.
"""

LISTED_COMMENTS = """\
# Review of ADR 0007

- **@ada-kern** (2025-03-02): Skyline should not depend on the Storage Gateway for reads.
  Consider the Edge Cache instead.
- **@bo-lind** (March 3, 2025): Agreed, but Orbis Cloud pricing changes in April.
"""

QUOTED_COMMENTS = """\
> I worry that Ledger will outgrow Postgres within a year.
> — Ada Kern, 2 March 2025

> Grid Analytics team already shards Postgres.
— Bo Lind, March 3, 2025

## Comment by Ravi Rao on 2025-03-04

Ledger could move to CockroachDB later.
"""

PROSE = """\
Skyline is a service built in 2020 by the Grid team. It runs on Orbis Cloud and uploads through the
Storage Gateway, which the Platform team keeps alive.
"""


def only(records, kind):
    found = [r for r in records if r.kind == kind]
    assert len(found) == 1, found
    return found[0]


def test_an_adr_gives_a_decision_with_its_reasons_relations_author_date_and_status():
    decision = only(extract(NYGARD_ADR), "decision")
    assert decision.title == "ADR 0007: Keep Skyline on Orbis Cloud"
    assert decision.text == "We will keep Skyline on Orbis Cloud and route uploads through the Storage Gateway."
    assert decision.line == 11  # the Decision heading
    assert (decision.author, decision.date, decision.status) == ("Ada Kern, Bo Lind", "2024-06-20", "accepted")
    assert decision.fields["rationale"].startswith("The Grid Analytics team runs Skyline")
    assert decision.fields["consequence"] == ("Billing Service keeps its current latency. "
                                              "The Platform Council must review this in 2025.")
    assert decision.relations["why"] == ("Skyline", "Orbis Cloud", "Storage Gateway")
    assert decision.relations["concerns"] == ("Grid Analytics team", "Nimbus", "Billing Service", "Platform Council")


def test_a_madr_decision_reads_front_matter_and_the_decision_outcome():
    decision = only(extract(MADR), "decision")
    assert decision.title == "Use Kafka for order events"
    assert decision.text.startswith('Chosen option: "Kafka", because')
    assert (decision.author, decision.date, decision.status) == ("Ada Kern, Ravi Rao", "2024-03-05", "accepted")
    assert decision.relations["why"] == ("Kafka", "Ledger")
    assert {"Orders Service", "Notifier", "Platform team"} <= set(decision.relations["concerns"])
    assert decision.fields["consequence"] == "The Platform team must operate Kafka."  # from the sub-section


def test_a_status_section_gives_the_status_and_its_date():
    adr = NYGARD_ADR.replace("Date: 2024-06-20\nStatus: Accepted\n", "").replace(
        "## Context", "## Status\n\nSuperseded by ADR 0009 on June 1st, 2025\n\n## Context")
    decision = only(extract(adr), "decision")
    assert (decision.status, decision.date) == ("superseded", "2025-06-01")


def test_exceptions_to_policy_from_a_sentence_and_from_an_exceptions_section():
    records = extract(EXCEPTION_ADR)
    granted, listed = [r for r in records if r.kind == "exception"]
    assert granted.fields["policy"] == "single-cloud policy"
    assert granted.title == "Exception to the single-cloud policy"
    assert granted.relations["excepts"] == ("Skyline",)
    assert granted.line == 11 and granted.status == "proposed" and granted.author == "@ada-kern"
    assert listed.fields["policy"] == "data-residency standard"
    assert listed.relations["excepts"] == ("Storage Gateway",)
    assert listed.relations["concerns"] == ("Nimbus",)
    assert listed.line == 17
    assert only(records, "decision").date == "2024-06-20"


def test_an_exception_granted_to_names_after_the_policy():
    adr = EXCEPTION_ADR.replace("Skyline is granted an exception to the single-cloud policy until Orbis Cloud opens its "
                                "Tokyo region.", "An exception to the single-cloud policy is granted to Ledger and "
                                                 "the Billing Service.")
    granted = next(r for r in extract(adr) if r.kind == "exception")
    assert granted.relations["excepts"] == ("Ledger", "Billing Service")


def test_a_post_mortem_gives_a_failure_pattern_and_a_memory_per_lesson():
    records = extract(POST_MORTEM)
    failure = only(records, "failure-pattern")
    assert failure.title == "Post-mortem: Skyline upload outage"
    assert failure.text.startswith("Uploads to Skyline failed for 47 minutes")
    assert (failure.line, failure.author, failure.date) == (6, "@ada-kern", "2024-06-20")
    assert failure.relations["affected"] == ("Skyline", "Storage Gateway", "Grid Analytics team", "Billing Service")
    assert failure.relations["caused-by"] == ("Storage Gateway", "Postgres")
    assert failure.fields["root-cause"].startswith("A config change in Storage Gateway")
    assert failure.fields["impact"].startswith("About 12% of Grid Analytics team jobs failed")
    assert failure.fields["action-items"].splitlines() == [
        "Add a pool-size alarm to Storage Gateway, @sre-team, 2024-07-01",
        "Review config changes in Flux, @platform, 2024-07-15"]
    lessons = [r for r in records if r.kind == "memory"]
    assert [(r.text, r.line) for r in lessons] == [("Config changes to the Storage Gateway need a canary.", 34),
                                                  ("Skyline should degrade gracefully when uploads fail.", 35)]
    assert lessons[0].relations["concerns"] == ("Storage Gateway",)
    assert lessons[1].date == "2024-06-20"


def test_review_comments_as_a_list_one_memory_each():
    first, second = extract(LISTED_COMMENTS)
    assert (first.kind, first.author, first.date, first.line) == ("memory", "@ada-kern", "2025-03-02", 3)
    assert first.text == ("Skyline should not depend on the Storage Gateway for reads. "
                          "Consider the Edge Cache instead.")
    assert first.relations["concerns"] == ("Skyline", "Storage Gateway", "Edge Cache")
    assert first.title == "Review of ADR 0007: comment by @ada-kern on 2025-03-02"
    assert (second.author, second.date, second.relations["concerns"]) == ("@bo-lind", "2025-03-03", ("Orbis Cloud",))


def test_review_comments_as_quotes_and_headings():
    records = extract(QUOTED_COMMENTS)
    assert [(r.author, r.date, r.line, r.text) for r in records] == [
        ("Ada Kern", "2025-03-02", 1, "I worry that Ledger will outgrow Postgres within a year."),
        ("Bo Lind", "2025-03-03", 4, "Grid Analytics team already shards Postgres."),
        ("Ravi Rao", "2025-03-04", 7, "Ledger could move to CockroachDB later.")]
    assert records[2].relations["concerns"] == ("Ledger", "CockroachDB")


@pytest.mark.parametrize(("text", "expected"), [
    (NYGARD_ADR, "adr"), (MADR, "adr"), (EXCEPTION_ADR, "adr"), (POST_MORTEM, "postmortem"),
    (LISTED_COMMENTS, "review-comments"), (QUOTED_COMMENTS, "review-comments"), (PROSE, None), ("", None),
    ("# Notes\n\n## Decision\n\nSomething.\n", None)])
def test_recognise_each_kind_by_its_shape(text, expected):
    assert recognise(text) == expected


def test_a_declared_kind_wins_over_the_shape():
    assert recognise(PROSE, ADR) == "adr"
    assert recognise(PROSE, POSTMORTEM) == "postmortem"
    assert recognise(NYGARD_ADR, REVIEW) == "review-comments"
    assert extract(PROSE) == []


@pytest.mark.parametrize("written", ["2024-06-20", "20 June 2024", "June 20, 2024", "20th of June, 2024",
                                     "Jun 20 2024", "2024/06/20", "Thursday, June 20th, 2024"])
def test_dates_in_common_forms(written):
    decision = only(extract(NYGARD_ADR.replace("2024-06-20", written)), "decision")
    assert decision.date == "2024-06-20"


def test_a_document_without_dates_has_empty_dates():
    adr = NYGARD_ADR.replace("Date: 2024-06-20\n", "")
    assert {r.date for r in extract(adr)} == {""}
    assert {r.date for r in extract(POST_MORTEM.replace("**Date:** 20 June 2024\n", "").replace(
        "2024-07-01", "soon").replace("2024-07-15", "later"))} == {""}


def test_known_names_are_found_whatever_their_case():
    adr = NYGARD_ADR.replace("route uploads through the Storage Gateway", "route uploads through skyline-api")
    decision = only(extract(adr, known_names=["Skyline-API", "absent service"]), "decision")
    assert "skyline-api" in decision.relations["why"]  # as the document writes it
    assert not any("absent" in n for names in decision.relations.values() for n in names)


def test_month_names_section_words_and_sentence_openers_are_not_names():
    text = NYGARD_ADR.replace("## Decision\n\nWe will", "## Decision\n\nIn March the Ledger API failed. However, we will")
    names = {n for names in only(extract(text), "decision").relations.values() for n in names}
    assert "Ledger API" in names
    assert not names & {"March", "However", "Decision", "Context", "In March the Ledger API"}


def test_a_title_given_by_the_caller_names_a_document_without_a_heading():
    adr = NYGARD_ADR.replace("# ADR 0007: Keep Skyline on Orbis Cloud\n", "")
    assert only(extract(adr, title="adr-0007.md"), "decision").title == "adr-0007.md"


def test_long_sections_are_cut_to_whole_sentences():
    long = " ".join(f"Sentence {k} about Skyline." for k in range(200))
    decision = only(extract(NYGARD_ADR.replace("We will keep Skyline", long + " We will keep Skyline")), "decision")
    assert len(decision.text) <= GIST_LIMIT and decision.text.endswith(".")


def test_records_are_read_only():
    decision = only(extract(NYGARD_ADR), "decision")
    with pytest.raises(TypeError):
        decision.relations["why"] = ()  # type: ignore[index]


def test_doctests():
    result = doctest.testmod(memory_docs)
    assert result.attempted > 0 and result.failed == 0


_PIECES = st.sampled_from([
    "# ", "## Decision\n", "## Context\n", "## Status\n", "## Summary\n", "## Impact\n", "## Root cause\n",
    "## Action items\n", "## Lessons learned\n", "## Exceptions\n", "- ", "* ", "> ", "— ", "**", "@ada-kern",
    "(2025-03-02)", ": ", "Skyline", "Orbis Cloud", " granted an exception to the single-cloud policy",
    "June 20, 2024", "\n", "\n\n", "---\n", "| a | b |\n|---|---|\n", "```\n", "Date: ", "Status: accepted",
    " and ", " the ", ".", "(", ")", "## Comment by Ada Kern on 2 March 2025\n", "2024-02-30"])
_DOCUMENTS = st.one_of(st.text(), st.lists(st.one_of(_PIECES, st.text(max_size=5)), max_size=40).map("".join))


@settings(max_examples=300, deadline=None)
@given(_DOCUMENTS, st.sampled_from(["text/markdown", ADR, POSTMORTEM, REVIEW]),
       st.lists(st.text(max_size=10), max_size=3))
def test_never_crashes_on_arbitrary_text(text, kind, known):
    recognise(text, kind)
    for record in extract(text, kind, known_names=known):
        assert record.kind in memory_docs.RECORD_KINDS
        assert record.line >= 1 and len(record.text) <= GIST_LIMIT
        assert set(record.relations) <= set(memory_docs.RELATIONS)
        assert set(record.fields) <= set(memory_docs.FIELDS)
