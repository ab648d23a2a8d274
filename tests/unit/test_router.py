"""The rule router on encyclopedic multi-hop questions as well as architecture ones: it routes by
the relation a question asks about, not by any relation word it happens to contain."""

import importlib.util
from pathlib import Path

import pytest

from tracegraph.base.retrieval.names import question_names
from tracegraph.base.retrieval.router import route_by_rules

_PATH = Path(__file__).resolve().parents[2] / "bench" / "router_accuracy.py"
_SPEC = importlib.util.spec_from_file_location("router_accuracy", _PATH)
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def kind(question: str) -> str:
    return route_by_rules(question).query_type


def test_operating_systems_is_not_an_ownership_word():
    assert kind("Which operating systems does X run on?") == "dependency"  # what X runs on: a platform it needs
    assert kind("Which company operates the trains that run through the Channel Tunnel?") == "ownership"


def test_a_parenthetical_stays_with_the_name_it_disambiguates():
    assert question_names("What is the record label of the performer of B Boy (Song)?") == ["B Boy (Song)"]


@pytest.mark.parametrize("question", [
    "Who was the first president of the association which published Journal of Psychotherapy Integration?",
    "What is the record label of the performer of B Boy (song)?",
    "Who founded the company that owns Instagram?",         # founding is an origin fact; "owns" only describes
    "What is the nationality of the owner of Chelsea F.C.?",
    "Who was the manager of the club that won the 1999 Champions League final?",  # past leadership is history
    "What is the highest mountain in the country that uses the rand as its currency?",
    "Where is the headquarters of the company that runs the London Underground?",
    "Which strategy game was developed by the studio that made Age of Empires?",
    "Who painted the landscape that hangs in the museum founded by Henry Clay Frick?",
    "Who is the lead singer of Coldplay?",
    "Which river runs through Paris?",
    "What leads to inflation?",
])
def test_relation_words_in_a_bridge_or_another_sense_leave_a_question_factual(question):
    assert kind(question) == "factual"


@pytest.mark.parametrize("question, expected", [
    ("Who owns the company that founded Instagram?", "ownership"),
    ("Which team owns the service that Helios Grid depends on?", "ownership"),
    ("Who is the current chief executive of the parent company of YouTube?", "ownership"),
    ("Who does the maintainer of Helios Grid report to?", "ownership"),
    ("The Search API is maintained by which team?", "ownership"),
    ("By whom is the Search API maintained?", "ownership"),
    ("Who operates the Eurostar?", "ownership"),
    ("Who operated the Concorde?", "factual"),  # tense: who ran it once is a historical fact
    ("What does the service owned by Team Atlas depend on?", "dependency"),
    ("On which host does the dependency of Helios Grid run?", "dependency"),
    ("Which host runs the service called by Helios Grid?", "dependency"),
    ("Can you tell me what the payment gateway service depends on?", "dependency"),
    ("Helios Grid depends on a service; where does that service store its data?", "dependency"),
    ("What would happen if Kafka went down?", "dependency"),
    ("How is the European Union structured?", "strategic"),
    ("What are the main themes of the corpus?", "strategic"),
    ("Which museum houses the collection of Peggy Guggenheim?", "factual"),
])
def test_the_asked_relation_decides(question, expected):
    assert kind(question) == expected


@pytest.mark.parametrize("question, expected", [
    ("What is Helios Grid?", "factual"),   # a name to look up, however short
    ("What is latency?", "factual"),
    ("grid?", "vague"),                    # a bare keyword
    ("Why is it slow?", "vague"),          # "it" refers to nothing
    ("What about it?", "vague"),
    ("Can you help me with something?", "vague"),
])
def test_vague_means_nothing_to_look_up(question, expected):
    assert kind(question) == expected


def test_the_method_quotes_the_words_that_decided():
    assert route_by_rules("Who maintains the Ledger Store?").method == "rules: 'who maintains' marks an ownership question"


def test_the_shipped_question_list_is_mostly_routed_right():
    accuracy, rows = bench.router_accuracy()
    assert len(rows) >= 80
    counts = {t: sum(r["type"] == t for r in rows) for t in ("factual", "dependency", "ownership", "strategic", "vague")}
    assert counts["factual"] >= 25 and min(counts.values()) >= 12
    assert accuracy >= 0.85, [r for r in rows if r["type"] != r["routed"]]


@pytest.mark.parametrize("question, expected", [
    ("Why was Skyline moved to two regions?", "memory"),
    ("Why does Skyline depend on the Demand Feed?", "memory"),  # a reason, not the dependency itself
    ("What was the rationale for the Storage Gateway?", "memory"),
    ("What decisions were made about the Ledger service?", "memory"),
    ("What went wrong with the checkout service in June?", "memory"),
    ("Who wrote the postmortem for the March checkout outage?", "factual"),  # a fact about a document
    ("Why is it slow?", "vague"),  # nothing named whose history could be looked up
    ("Who owns Skyline?", "ownership"),
])
def test_why_questions_ask_the_institutional_memory(question, expected):
    assert route_by_rules(question).query_type == expected
