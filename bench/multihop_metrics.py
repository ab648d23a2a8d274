"""Pure scoring functions for bench/multihop_public.py: passage recall@k, perfect@k, SQuAD-style
answer normalisation, a rank-based AUROC and a nearest-rank percentile. No I/O, no project imports."""

from __future__ import annotations

import math
import re
import string
from collections.abc import Iterable, Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def recall_at_k(ranked: Sequence[int], supporting: Iterable[int], k: int) -> float:
    """Share of the supporting passages found among the first k of `ranked`.

    >>> recall_at_k([4, 9, 2], [9, 7], 2)
    0.5
    >>> recall_at_k([4, 9, 2], [9, 2], 2)
    0.5
    >>> recall_at_k([4, 9, 2], [9, 2], 5)
    1.0
    """
    gold = set(supporting)
    if not gold:
        raise ValueError("a question needs at least one supporting passage")
    return len(gold & set(ranked[:k])) / len(gold)


def perfect_at_k(ranked: Sequence[int], supporting: Iterable[int], k: int) -> bool:
    """Whether every supporting passage is among the first k of `ranked`.

    >>> perfect_at_k([4, 9, 2], [9, 2], 3), perfect_at_k([4, 9, 2], [9, 2], 2)
    (True, False)
    """
    return set(supporting) <= set(ranked[:k])


def normalise_answer(text: str) -> str:
    """Lower case, punctuation and the articles a/an/the removed, whitespace collapsed (SQuAD's rule).

    >>> normalise_answer("The  Eiffel-Tower, in Paris!")
    'eiffeltower in paris'
    >>> normalise_answer("An apple a day")
    'apple day'
    """
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def contains_gold(answer: str, golds: Iterable[str]) -> bool:
    """Whether the normalised answer contains a normalised gold answer (or alias) as whole words.

    >>> contains_gold("It was G. Stanley Hall.", ["G. Stanley Hall", "Stanley Hall"])
    True
    >>> contains_gold("1987", ["198"])
    False
    >>> contains_gold("anything", ["The"])
    False
    """
    padded = f" {normalise_answer(answer)} "
    for gold in golds:
        norm = normalise_answer(gold)
        # an answer that normalises to nothing ("The") would match every text
        if norm and f" {norm} " in padded:
            return True
    return False


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Area under the ROC curve of `scores` predicting `labels`, from ranks (Mann-Whitney U, ties
    counted half). None when either class is empty.

    >>> auroc([0.9, 0.8, 0.3, 0.1], [True, True, False, False])
    1.0
    >>> auroc([0.5, 0.5], [True, False])
    0.5
    >>> auroc([0.2, 0.7, 0.4], [True, False, False])
    0.0
    >>> auroc([0.2, 0.7], [True, True]) is None
    True
    """
    if len(scores) != len(labels):
        raise ValueError("scores and labels differ in length")
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    start = 0
    while start < len(order):  # tied scores share the mean of the ranks they span (1-based)
        end = start
        while end + 1 < len(order) and scores[order[end + 1]] == scores[order[start]]:
            end += 1
        for j in range(start, end + 1):
            ranks[order[j]] = (start + end) / 2 + 1
        start = end + 1
    positives = sum(1 for label in labels if label)
    negatives = len(labels) - positives
    if not positives or not negatives:
        return None
    rank_sum = sum(rank for rank, label in zip(ranks, labels) if label)
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values.

    >>> percentile([30, 10, 20, 40], 50), percentile([30, 10, 20, 40], 95), percentile([], 50)
    (20, 40, None)
    """
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean; None for no values (a table shows it as a dash, JSON as null).

    >>> mean([1, 2]), mean([])
    (1.5, None)
    """
    return sum(values) / len(values) if values else None
