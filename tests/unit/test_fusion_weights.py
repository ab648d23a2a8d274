"""A request's own fusion weights: validated on the way in, and the CLI's STRATEGY=W form."""

import argparse

import pytest
from pydantic import ValidationError

from tracegraph.cli.search import _weight
from tracegraph.schemas.search import SearchRequest


def test_a_request_sets_weights_for_fused_strategies_only_within_range():
    assert SearchRequest.model_validate({"query": "q", "fusion-weights": {"ppr": 30}}).fusion_weights == {"ppr": 30.0}
    with pytest.raises(ValidationError, match="between 0 and 100"):
        SearchRequest.model_validate({"query": "q", "fusion-weights": {"ppr": 300}})
    with pytest.raises(ValidationError):
        SearchRequest.model_validate({"query": "q", "fusion-weights": {"raptor": 2}})  # answers alone, never fused


def test_the_cli_reads_strategy_equals_weight():
    assert _weight("graph=3") == ("graph", 3.0)
    for bad in ("pp=3", "ppr=x", "ppr"):
        with pytest.raises(argparse.ArgumentTypeError):
            _weight(bad)
