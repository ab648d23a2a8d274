"""The offline extractor on engineering prose, one sentence shape per test: each of these failed on the
regex-shaped extractor it replaced (the extraction issue's root causes)."""

import pytest

from tracegraph.base.extraction import vocabulary as vocab
from tracegraph.base.extraction.facts import Relation
from tracegraph.base.extraction.reader import extract_text


def facts(text: str, title: str = "") -> set[tuple[str, str, str]]:
    return {(r.subject, r.predicate, r.object) for r in extract_text(text, title, markdown=True).relations}


# -- names whatever their case --------------------------------------------------------------------------

def test_a_name_is_kept_when_its_lower_case_form_occurs_elsewhere():
    found = facts("Billing calls Ledger and Tax. The billing export runs nightly.")
    assert {("Billing", "calls", "Ledger"), ("Billing", "calls", "Tax")} <= found


def test_the_x_service_and_x_are_one_service():
    assert ("Orders", "depends on", "Ledger") in facts("The Orders service depends on the Ledger service.")


def test_a_team_named_after_a_service_is_the_team():
    assert ("Ledger", "is owned by", "Billing squad") in facts("Ledger is owned by the Billing squad.")


# -- voices and clause shapes ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["Ana Ruiz leads Ledger.", "Ledger is led by Ana Ruiz.",
                                  "Ana Ruiz is the lead of Ledger."])
def test_a_single_valued_slot_is_one_predicate_in_every_voice(text):
    assert ("Ledger", vocab.LED_BY, "Ana Ruiz") in facts(text)


def test_active_and_passive_dependencies_point_the_same_way():
    assert ("Checkout", "uses", "Postgres") in facts("Checkout uses Postgres.")
    assert ("Checkout", "uses", "Postgres") in facts("Postgres is used by Checkout.")


def test_coordination_on_both_sides():
    assert {("Billing", "calls", "Ledger"), ("Orders", "calls", "Ledger")} <= facts("Billing and Orders call Ledger.")
    both = facts("Ledger is owned by the Billing squad and maintained by Ana Ruiz.")
    assert {("Ledger", "is owned by", "Billing squad"), ("Ledger", "is maintained by", "Ana Ruiz")} <= both


@pytest.mark.parametrize("text, relation", [
    ("The cart service stores user shopping carts in Valkey.", ("cart", "writes to", "Valkey")),
    ("Accounting reads invoices from the Ledger database.", ("Accounting", "reads from", "Ledger")),
    ("Checkout publishes orders to Kafka.", ("Checkout", "publishes to", "Kafka")),
    ("Fraud Detection consumes new orders from a Kafka topic.", ("Fraud Detection", "consumes from", "Kafka")),
    ("Concourse is hosted in the management EKS cluster.", ("Concourse", "runs on", "EKS cluster")),
    ("Billing runs on Kubernetes.", ("Billing", "runs on", "Kubernetes")),
])
def test_prepositional_objects_name_the_dependency(text, relation):
    assert relation in facts(text)


def test_a_relative_clause_is_about_the_noun_it_follows():
    found = facts("Billing uses Postgres, which is run by the Data team.")
    assert {("Billing", "uses", "Postgres"), ("Postgres", "is operated by", "Data team")} <= found


def test_a_negated_clause_states_nothing():
    found = facts("Checkout does not depend on Tax, but it calls Orders.")
    assert ("Checkout", "depends on", "Tax") not in found
    assert ("Checkout", "calls", "Orders") in found  # "it" is this sentence's subject
    assert facts("Skyline no longer polls the Storage Gateway.") == set()


def test_a_pronoun_is_the_passage_subject_never_the_document():
    found = facts("# Ledger\n\nLedger keeps the books. It stores its data in PostgreSQL.", "docs/ledger.md")
    assert ("Ledger", "writes to", "PostgreSQL") in found
    assert not any(s == "docs/ledger.md" or s == "ledger.md" for s, _, _ in found)
    orphan = facts("It stores its data in PostgreSQL.", "README")
    assert orphan == set()  # nothing to refer to: no fact rather than a fact about the document


def test_this_service_is_the_section_subject():
    assert ("Cart", "writes to", "Valkey") in facts("# Cart Service\n\nThis service stores user shopping carts in "
                                                     "Valkey.", "src/cart/README.md")


def test_copular_role_and_responsibility():
    assert ("Ledger", "is owned by", "Ana Ruiz") in facts("Ana Ruiz is the owner of Ledger.")
    found = facts("The Billing squad is responsible for Ledger and Tax.")
    assert {("Ledger", "is owned by", "Billing squad"), ("Tax", "is owned by", "Billing squad")} <= found


def test_an_alternative_set_aside_is_no_dependency():
    found = facts("Skyline writes its forecasts through the Storage Gateway instead of directly to the Orbis Cloud.")
    assert not any(o == "Orbis Cloud" for _, _, o in found)


def test_versions_and_their_dates_are_facts():
    found = extract_text("Ledger is on version 4.2. Ledger 4.3 ships on 2025-05-12.", markdown=True)
    assert Relation("Ledger", vocab.VERSION, "4.2", value=True) in found.relations
    [shipped] = [r for r in found.relations if r.object == "4.3"]
    assert shipped.value and shipped.since == "2025-05-12"


def test_a_status_is_a_value():
    found = extract_text("Ledger is deprecated.", markdown=True)
    assert Relation("Ledger", vocab.STATUS, "deprecated", value=True) in found.relations


def test_the_text_keeps_its_own_words_beside_the_canonical_predicate():
    [found] = extract_text("The cart service stores user shopping carts in Valkey.", markdown=True).relations
    assert found.predicate == "writes to" and found.phrase == "stores user shopping carts in"


def test_a_question_or_a_hypothesis_is_not_a_statement():
    assert facts("Should Billing call Ledger?") == set()
    [hedged] = extract_text("If Ledger fails, Billing could call Tax.", markdown=True).relations
    assert hedged.confidence.value < 0.85
