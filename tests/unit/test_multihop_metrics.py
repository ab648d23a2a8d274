"""The multi-hop benchmark's scoring functions (bench/multihop_metrics.py) on tiny hand-made cases."""

import doctest
import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "multihop_metrics.py"
_SPEC = importlib.util.spec_from_file_location("multihop_metrics_under_test", _PATH)
metrics = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(metrics)


def test_recall_counts_supporting_passages_in_the_first_k():
    ranked = [7, 3, 9, 1]
    assert metrics.recall_at_k(ranked, [3, 1], 1) == 0.0
    assert metrics.recall_at_k(ranked, [3, 1], 2) == 0.5
    assert metrics.recall_at_k(ranked, [3, 1], 4) == 1.0
    assert metrics.recall_at_k(ranked, [3, 1, 5], 8) == pytest.approx(2 / 3)
    assert metrics.recall_at_k([], [3], 8) == 0.0


def test_recall_needs_a_supporting_passage():
    with pytest.raises(ValueError):
        metrics.recall_at_k([1], [], 2)


def test_perfect_needs_every_supporting_passage():
    assert metrics.perfect_at_k([7, 3, 9, 1], [3, 1], 4) is True
    assert metrics.perfect_at_k([7, 3, 9, 1], [3, 1], 3) is False
    assert metrics.perfect_at_k([], [3], 8) is False


def test_normalisation_drops_case_punctuation_and_articles():
    assert metrics.normalise_answer("The Beatles' \"Abbey Road\"") == "beatles abbey road"
    assert metrics.normalise_answer("  A   Theatre ") == "theatre"  # "the" inside a word stays


def test_gold_is_found_as_whole_words_with_aliases():
    golds = ["G. Stanley Hall", "Stanley Hall"]
    assert metrics.contains_gold("The first president was G. Stanley Hall.", golds)
    assert metrics.contains_gold("stanley hall, then others", golds)
    assert not metrics.contains_gold("Stanley Halliday", golds)
    assert not metrics.contains_gold("No answer.", ["the"])  # empty after normalising: never a match
    assert metrics.contains_gold("in 1987", ["1987"])
    assert not metrics.contains_gold("in 19876", ["1987"])


def test_auroc_from_ranks():
    assert metrics.auroc([0.9, 0.1], [True, False]) == 1.0
    assert metrics.auroc([0.1, 0.9], [True, False]) == 0.0
    # positives 0.8, 0.4; negatives 0.6, 0.4: pairs (0.8>0.6) 1, (0.8>0.4) 1, (0.4<0.6) 0, (0.4=0.4) 0.5
    assert metrics.auroc([0.8, 0.4, 0.6, 0.4], [True, True, False, False]) == pytest.approx(2.5 / 4)
    assert metrics.auroc([0.3, 0.3, 0.3], [True, False, True]) == 0.5
    assert metrics.auroc([0.3], [False]) is None


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert metrics.percentile(values, 50) == 50
    assert metrics.percentile(values, 95) == 95
    assert metrics.percentile([5.0], 95) == 5.0
    assert metrics.percentile([], 50) is None


def test_doctests():
    result = doctest.testmod(metrics)
    assert result.attempted > 0 and result.failed == 0
