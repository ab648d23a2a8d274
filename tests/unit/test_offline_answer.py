"""Offline answers that answer: the asked relation stated from the selected facts (per relation, the exact
sentence), the best passage sentence otherwise, and the check the offline agent makes of an answer."""

from __future__ import annotations

import doctest

import pytest

from tracegraph.base.retrieval import asked_relation as asked_module
from tracegraph.base.retrieval import offline_answer
from tracegraph.base.retrieval.asked_relation import asked_relation
from tracegraph.base.retrieval.names import question_names
from tracegraph.base.retrieval.offline_answer import (
    Fact, Sentence, answers_relation, best_span, relation_answer, relation_text, span_text,
)
from tracegraph.flow.graph_rag import offline_synthesis

BILLING = [Fact("Billing", "depends on", "Ledger"), Fact("Billing", "is a", "service"),
           Fact("Billing", "depends on", "Tax"), Fact("Billing", "depends on", "Redis"),
           Fact("Billing", "depends on", "NATS"), Fact("Ledger", "depends on", "Postgres"),
           Fact("Billing", "is owned by", "Payments Team"), Fact("Payments", "calls", "Ledger"),
           Fact("Billing", "calls", "Ledger"), Fact("Ledger", "calls", "Audit"),
           Fact("Ada Kern", "born in", "Port Sable"), Fact("Port Sable", "is a", "city"),
           Fact("Mara Lindqvist", "is the chief executive of", "Helios Grid"),
           Fact("Billing", "is defined as", "Billing is the service that bills every customer.")]


def stated(question: str, facts=BILLING, ids: dict[str, list[str]] | None = None,
           mentions: list[str] | None = None) -> str | None:
    asked = asked_relation(question, mentions or question_names(question))
    if asked is None:
        return None
    found = relation_answer(asked, facts, (ids or {}).get(asked.mention, ()))
    return found.statement if found else None


def test_a_lower_case_question_is_answered_as_written_with_capitals():
    # Grounding finds "billing" as the entity Billing; the answer names it as the facts do.
    assert stated("what does billing depend on?", mentions=["billing"]) == \
        "Billing depends on Ledger, Tax, Redis and NATS."


@pytest.mark.parametrize("question, statement", [
    ("What does Billing depend on?", "Billing depends on Ledger, Tax, Redis and NATS."),  # subject → objects
    ("Which services call Ledger?", "Payments and Billing call Ledger."),  # inverse: the callers, verb agreeing
    ("Who owns Billing?", "Billing is owned by Payments Team."),  # a passive label answers an active question
    ("Where was Ada Kern born?", "Ada Kern born in Port Sable."),  # a passive question, a place
    ("Who is the chief executive of Helios Grid?", "Mara Lindqvist is the chief executive of Helios Grid."),
    ("What depends on Ledger?", "Billing depends on Ledger."),  # not what Ledger depends on
    ("What does Ledger depend on?", "Ledger depends on Postgres."),  # not what depends on Ledger
    ("What does Tax depend on?", None),  # no fact states it
    ("Who founded the company that owns Billing?", None),  # the relation naming Billing is not the asked one
])
def test_the_answer_states_the_asked_relation_for_the_asked_entity(question, statement):
    assert stated(question) == statement


def test_an_entity_is_recognised_by_its_grounded_iri_whatever_its_label():
    facts = [Fact("Billing service", "depends on", "Ledger", subject_id="https://trustgraph.ai/e/billing")]
    assert stated("What does Billing depend on?", facts) is None
    assert stated("What does Billing depend on?", facts, {"Billing": ["https://trustgraph.ai/e/billing"]}) == \
        "Billing service depends on Ledger."


def test_many_objects_are_counted_not_listed():
    facts = [Fact("Billing", "depends on", f"Service {i}") for i in range(10)]
    assert stated("What does Billing depend on?", facts) == \
        "Billing depends on Service 0, Service 1, Service 2, Service 3, Service 4, Service 5, Service 6, Service 7 and 2 more."


def test_the_relation_answer_lists_its_facts_with_their_sources_and_nothing_else():
    asked = asked_relation("What does Billing depend on?", ["Billing"])
    found = relation_answer(asked, BILLING)
    text = relation_text(found, {BILLING[0]: "billing/README.md, lines 12–14"})
    assert text == ("Offline answer (no LLM configured): Billing depends on Ledger, Tax, Redis and NATS.\n"
                    "Supporting facts:\n"
                    "- Billing depends on Ledger (billing/README.md, lines 12–14)\n"
                    "- Billing depends on Tax\n- Billing depends on Redis\n- Billing depends on NATS")
    assert "is defined as" not in text and "is a service" not in text


def test_the_asked_relation_says_where_the_entity_stands():
    assert asked_relation("Which services call Ledger?", ["Ledger"]).describe() == "asks 'call' about Ledger (as its object)"
    assert asked_relation("Who directed Alien?", ["Alien"]).answer_role == "agent"
    assert asked_relation("What stars Ada, Ben and the producer of Alien?", ["Ada"]) is None  # asked together
    assert asked_relation("Tell me about Billing.", ["Billing"]) is None


def vectors_for(sentences: list[Sentence], near: dict[str, float]) -> list[list[float]]:
    """Hand-made embeddings: a sentence's similarity to the question vector [1, 0] is `near` (else 0.1)."""
    out = []
    for s in sentences:
        c = near.get(s.text, 0.1)
        out.append([c, (1 - c * c) ** 0.5])
    return out


def test_the_best_sentence_names_what_the_question_asks_for_and_other_passages_add_the_bridge():
    question = "When was the club that plays in the Titanium Arena formed?"
    sentences = [
        Sentence("The Titanium Arena is home to the Adelaide Lightning club.", "urn:chunk:arena", 0, "Titanium Arena"),
        Sentence("It seats eight thousand people.", "urn:chunk:arena", 0, "Titanium Arena"),
        Sentence("The Adelaide Lightning club was formed in 1993.", "urn:chunk:club", 1, "Adelaide Lightning, line 2"),
        Sentence("Droughts affect the region.", "urn:chunk:weather", 2, "Weather"),
    ]
    # The arena's sentence is the most like the question, but it names no date; the club's does.
    near = {sentences[0].text: 0.8, sentences[1].text: 0.3, sentences[2].text: 0.5, sentences[3].text: 0.2}
    span = best_span(question, [1.0, 0.0], sentences, vectors_for(sentences, near))
    assert span.best == sentences[2] and span.candidate == "1993"
    assert span.more == (sentences[0],)  # the bridge; the weather shares no word with question or answer
    assert span_text(span) == (
        "Offline answer (no LLM configured), the sentence of the best passages that best answers the question:\n"
        '"The Adelaide Lightning club was formed in 1993." (Adelaide Lightning, line 2)\n'
        "Also from the best passages:\n"
        '- "The Titanium Arena is home to the Adelaide Lightning club." (Titanium Arena)')


def test_a_question_that_asks_for_no_kind_of_thing_gets_the_most_similar_sentence():
    sentences = [Sentence("Helios Grid is a regional operator.", "urn:chunk:a", 0, "Helios"),
                 Sentence("Helios Grid runs forty substations in Northern Vale.", "urn:chunk:a", 0, "Helios")]
    near = {sentences[0].text: 0.4, sentences[1].text: 0.7}
    span = best_span("Tell me about the substations of Helios Grid.", [1.0, 0.0], sentences,
                     vectors_for(sentences, near))
    assert span.best == sentences[1] and span.candidate is None and span.more == ()
    assert best_span("Anything?", [1.0, 0.0], [], []) is None


def test_the_agent_asks_whether_the_answer_states_the_asked_relation():
    asked = asked_relation("Which services call Ledger?", ["Ledger"])
    assert answers_relation(asked, "Offline answer (no LLM configured): Payments and Billing call Ledger.\n"
                                    "Supporting facts:\n- Payments calls Ledger")
    span = ("Offline answer (no LLM configured), the sentence of the best passages that best answers the question:\n"
            '"Billing calls Ledger to post every invoice." (billing/README.md, line 4)')
    assert answers_relation(asked, span)  # a quoted sentence that states it counts too
    assert not answers_relation(asked, span.replace("calls Ledger", "writes to Postgres"))
    assert not answers_relation(asked, "Offline answer (no LLM configured): Ledger is a service.")


@pytest.mark.parametrize("module", [asked_module, offline_answer, offline_synthesis])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
