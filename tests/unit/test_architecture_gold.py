"""The architecture benchmark's pure rules (bench/architecture_gold.py): name matching, kinds, key terms
and the automatic judge, on small hand-made cases."""

import doctest
import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "bench" / "architecture_gold.py"
_SPEC = importlib.util.spec_from_file_location("architecture_gold", _PATH)
rules = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("architecture_gold", rules)  # dataclasses look their module up
_SPEC.loader.exec_module(rules)


def test_names_match_leniently_but_not_loosely():
    assert rules.names_match("cartservice", "cart")
    assert rules.names_match("queue (Kafka)", "Kafka")
    assert rules.names_match("Kafka topic", "kafka")
    assert rules.names_match("product-catalog", "productcatalogservice")
    assert rules.names_match("checkoutservice, cartservice, paymentservice", "payment service")
    assert rules.names_match("Cyrille Le Clerc (@cyrille-leclerc, Datadog)", "cyrille-leclerc")
    assert rules.names_match("@alphagov/govuk-data-engineering", "govuk-data-engineering")
    assert rules.names_match("D&#xF3;nal O'Sullivan", "Dónal O'Sullivan")
    assert not rules.names_match("redis-cart", "cart")
    assert not rules.names_match("service", "cart service")
    assert not rules.names_match("GOV.UK Router", "router")


def test_kinds_follow_the_loader():
    assert rules.kind_of("CODEOWNERS") == "text/x-codeowners"
    assert rules.kind_of("2026-03-30-ingress-nginx-rollback.html.md.erb") == "text/markdown"
    assert rules.kind_of("README.markdown") == "text/markdown"
    assert rules.kind_of("component_owners.yml") == "text/plain"


def test_gold_patterns_are_read_from_the_entity():
    entity = ("govuk-infrastructure /terraform/deployments/gcp-gov-graph/ and "
              "/terraform/variables/**/gcp-gov-graph.tfvars")
    assert rules.gold_patterns(entity) == {"terraform/deployments/gcp-gov-graph/",
                                           "terraform/variables/**/gcp-gov-graph.tfvars"}
    assert rules.gold_patterns("every path (pattern `*`)") == {"*"}


def test_overlap_counts_gold_content_words():
    assert rules.overlap("Jenkins was not cloud native", "Jenkins is hard to run, not cloud native") == 1.0
    assert rules.overlap("Sentry is cheaper", "nothing alike") == 0.0
    assert rules.status_word("Superseded (⌛️) by 036") == "superseded"


def test_judge_needs_terms_and_a_gold_source_for_right():
    gold = "Checkout calls cart and payment over gRPC and publishes to Kafka."
    support = ["opentelemetry.io/content/en/docs/demo/architecture.md"]
    assert rules.judge("it calls cart, payment via gRPC", support, gold, support).verdict == "right"
    assert rules.judge("it calls cart, payment via gRPC", ["other.md"], gold, support).verdict == "partly"
    assert rules.judge("no idea", support, gold, support).verdict == "partly"
    assert rules.judge("no idea", [], gold, support).verdict == "wrong"


def test_doctests():
    assert doctest.testmod(rules).failed == 0
