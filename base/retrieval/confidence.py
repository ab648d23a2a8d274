"""RSN-11's confidence block, computed from the evidence an answer rests on, and calibrated.

Six signals, each in [0, 1]:
- relevance: the mean reranker score of the (at most) three best facts;
- agreement: the share of the used facts that at least two strategies found;
- support: source documents / 3, at most 1 (three independent documents count as well supported);
- grounding: the share of the names in the question that are entities of the collection (a question
  about things the collection never mentions is rarely answered from it);
- focus: the best cosine similarity of a passage to the question (did any passage match it well);
- coverage: the share of the question's content words (stemmed) that the evidence sentences say.

confidence = σ(BIAS + Σ WEIGHTS[s] × signal s), halved after a strategy fell back. The weights come
from a logistic regression of "the offline answer contains the gold answer" on these signals over
the public MuSiQue sample (bench/calibrate_confidence.py fits and prints them; HotpotQA is the
check), so confidence reads as an estimated chance that the answer holds the answer; the weights
are kept as fitted, small and negative ones included (support and grounding add nothing there once
coverage and focus are known).

The warning and the confidence never say different things: the warning is raised below WARN_BELOW,
and whatever raises it — no evidence, one source document or none (as RSN-11 asks), a fallback, a
name the collection does not know — also holds the confidence below WARN_BELOW. The block lists why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from tracegraph.base.retrieval.relations import content_stems

WELL_SUPPORTED = 3
SIGNALS = ("relevance", "agreement", "support", "grounding", "focus", "coverage")
# Fitted by bench/calibrate_confidence.py on the MuSiQue sample (offline answers, bundled model).
WEIGHTS = {"relevance": 0.422, "agreement": 0.112, "support": -0.001, "grounding": -0.27, "focus": 0.681,
           "coverage": 1.252}
BIAS = -1.715
WARN_BELOW = 0.3
HELD = round(WARN_BELOW - 0.01, 2)  # a confidence with a reason to warn is shown no higher than this
FELL_BACK = "a retrieval strategy failed and another stood in for it"


@dataclass(frozen=True, slots=True)
class Support:
    """One used fact: its reranker score, how many strategies found it, its source documents."""

    score: float
    strategies: int
    documents: frozenset[str]
    nodes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ConfidenceBlock:
    confidence: float
    evidence_nodes: list[str]
    source_density: int
    retrieval_strategies_used: list[str]
    low_confidence_warning: bool
    signals: Mapping[str, float] = field(default_factory=dict)
    warning_reasons: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Settle the warning with the confidence (whoever built the block): a reason to warn holds the
        confidence below WARN_BELOW, a confidence below it warns, and the reasons say why.

        >>> block = ConfidenceBlock(0.75, [], 1, ["ownership"], False)
        >>> block.confidence, block.low_confidence_warning, block.warning_reasons[0]
        (0.29, True, 'it rests on one source document')
        >>> ConfidenceBlock(0.8, [], 3, ["graph"], False).warning_reasons
        ()
        """
        reasons = [*self.warning_reasons, *support_reasons(self.source_density)]
        if self.low_confidence_warning and not reasons:
            reasons.append("the answering step flagged it as weak")
        confidence = self.confidence
        if reasons and confidence >= WARN_BELOW:
            reasons.append(f"confidence held below {WARN_BELOW:.2f} ({confidence:.2f} from the evidence alone)")
            confidence = HELD
        elif confidence < WARN_BELOW and not reasons:
            reasons.append(f"the evidence supports it weakly (confidence below {WARN_BELOW:.2f})")
        object.__setattr__(self, "confidence", confidence)
        object.__setattr__(self, "low_confidence_warning", bool(reasons))
        object.__setattr__(self, "warning_reasons", tuple(dict.fromkeys(reasons)))


def support_reasons(source_density: int) -> list[str]:
    """RSN-11: an answer from one source document or none carries a warning."""
    if source_density <= 0:
        return ["no source document supports it"]
    return ["it rests on one source document"] if source_density == 1 else []


def coverage(question: str, sentences: Iterable[str]) -> float:
    """
    >>> coverage("Who founded the label that released B Boy?", ["B Boy was released by Ruffhouse Records"])
    0.5
    """
    asked = content_stems(question)
    said = set().union(*(content_stems(s) for s in sentences)) if asked else set()
    return round(len(asked & said) / len(asked), 4) if asked else 0.0


def signals_of(facts: Sequence[Support], grounding: float, focus: float, question: str = "",
               sentences: Sequence[str] = ()) -> dict[str, float]:
    """
    >>> signals_of([Support(0.8, 2, frozenset({"d1", "d2", "d3"}), ("e:a",))], 0.5, 0.7, "Who leads Acme?",
    ...            ["Ada leads Acme"])
    {'relevance': 0.8, 'agreement': 1.0, 'support': 1.0, 'grounding': 0.5, 'focus': 0.7, 'coverage': 1.0}
    """
    if not facts:
        return {"relevance": 0.0, "agreement": 0.0, "support": 0.0, "grounding": _unit(grounding),
                "focus": _unit(focus), "coverage": 0.0}
    best = sorted((_unit(f.score) for f in facts), reverse=True)[:3]
    documents = frozenset().union(*(f.documents for f in facts))
    return {"relevance": round(sum(best) / len(best), 4),
            "agreement": round(sum(1 for f in facts if f.strategies >= 2) / len(facts), 4),
            "support": round(min(1.0, len(documents) / WELL_SUPPORTED), 4),
            "grounding": _unit(grounding), "focus": _unit(focus), "coverage": coverage(question, sentences)}


def calibrated(signals: Mapping[str, float], weights: Mapping[str, float] = WEIGHTS, bias: float = BIAS) -> float:
    """σ(bias + Σ weight × signal).

    >>> round(calibrated({"relevance": 0.0, "focus": 0.0}, {"relevance": 1.0, "focus": 1.0}, 0.0), 2)
    0.5
    """
    z = bias + sum(weights.get(name, 0.0) * value for name, value in signals.items())
    return 1.0 / (1.0 + math.exp(-z))


def assess(facts: Sequence[Support], strategies_used: Iterable[str], fell_back: bool = False,
           grounding: float = 1.0, focus: float = 0.0, question: str = "", sentences: Sequence[str] = ()
           ) -> ConfidenceBlock:
    """
    >>> block = assess([Support(0.8, 2, frozenset({"d1", "d2", "d3"}), ("e:a", "e:b"))], ["graph", "bm25"], focus=0.9,
    ...                question="Who leads Acme?", sentences=["Ada leads Acme"])
    >>> block.source_density, block.low_confidence_warning, 0 < block.confidence < 1
    (3, False, True)
    >>> assess([], ["vector"]).low_confidence_warning
    True
    """
    used = list(dict.fromkeys(strategies_used))
    signals = signals_of(facts, grounding, focus, question, sentences)
    if not facts:
        return ConfidenceBlock(0.0, [], 0, used, True, signals, ("no fact was found to answer from",))
    documents = frozenset().union(*(f.documents for f in facts))
    confidence = calibrated(signals) * (0.5 if fell_back else 1.0)
    nodes = list(dict.fromkeys(n for f in facts for n in f.nodes))
    return ConfidenceBlock(round(confidence, 2), nodes, len(documents), used, fell_back, signals,
                           (FELL_BACK,) if fell_back else ())


def _unit(value: float) -> float:
    return round(min(max(value, 0.0), 1.0), 4)
