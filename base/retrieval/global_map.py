"""Global search's map and reduce, without I/O: how a community report is scored for a question (by
the LLM's rating with its reason, or offline by similarity × the report's rating), and how the kept
reports become an answer when no LLM is configured.

Offline, the score is cosine(question, report) × (0.5 + rating / 20): a report about the question
counts most, and of two equally similar reports the more important community (a higher rating) wins,
though never by more than a factor of two, so importance cannot outvote relevance."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MAP_SYSTEM = ("You judge how useful community reports from a knowledge graph are for answering a question. "
              "Reply with a JSON array and nothing else: one object per report, "
              '{"id": <the report number>, "score": <0 to 10>, "reason": "<one sentence>"}. '
              "10 means the report answers the question directly, 0 that it is unrelated.")
REDUCE_SYSTEM = ("Answer the question from the community reports given, which summarise parts of a knowledge "
                 "graph. Name the reports (by title) that support each point. If they do not contain the answer, "
                 "say so.")
SUMMARY_SENTENCES = 2


@dataclass(frozen=True, slots=True)
class StoredReport:
    """A community report as the map step reads it from urn:graph:community."""

    uri: str
    community: str
    level: int
    title: str
    summary: str
    rating: float
    method: str
    vector: Sequence[float] | None


@dataclass(frozen=True, slots=True)
class MapScore:
    score: float  # 0 to 1
    reason: str


def offline_score(similarity: float, rating: float) -> MapScore:
    """
    >>> offline_score(0.6, 8.0)
    MapScore(score=0.54, reason='offline: similarity 0.600 to the question × rating weight 0.90 (rating 8.0/10)')
    """
    weight = 0.5 + max(0.0, min(rating, 10.0)) / 20
    score = round(max(similarity, 0.0) * weight, 4)
    return MapScore(score, f"offline: similarity {similarity:.3f} to the question × rating weight {weight:.2f} "
                           f"(rating {rating:.1f}/10)")


def map_prompt(question: str, batch: Sequence[StoredReport]) -> str:
    lines = [f"Question: {question}", "", "Reports:"]
    for number, report in enumerate(batch, start=1):
        lines += [f"[{number}] {report.title}", report.summary, ""]
    return "\n".join(lines)


def parse_ratings(text: str, count: int, model: str) -> dict[int, MapScore]:
    """The LLM's ratings by report number (1-based, as the prompt numbered them). Items that are not
    objects, name no report of the batch or give no number from 0 to 10 are left out: the caller
    scores those offline and says why.

    >>> parse_ratings('```json\\n[{"id": 1, "score": 7, "reason": "names the risks"}, {"id": 9, "score": 3}]\\n```', 2, "m")
    {1: MapScore(score=0.7, reason='LLM (m) rated 7/10: names the risks')}
    >>> parse_ratings("no idea", 2, "m")
    {}
    """
    found = re.search(r"\[.*\]", text, re.DOTALL)
    try:
        items = json.loads(found.group(0)) if found else []
    except ValueError:
        return {}
    ratings: dict[int, MapScore] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        number, score = item.get("id"), item.get("score")
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= count:
            continue
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 10:
            continue
        reason = str(item.get("reason") or "no reason given").strip()
        ratings[number] = MapScore(round(score / 10, 4), f"LLM ({model}) rated {score:g}/10: {reason}")
    return ratings


def reduce_prompt(question: str, kept: Sequence[StoredReport]) -> str:
    return "\n".join([f"Question: {question}", "", "Community reports:",
                      *[f"- {r.title}: {r.summary}" for r in kept]])


def offline_answer(kept: Sequence[StoredReport]) -> str:
    """The kept reports' titles and opening sentences, best first, labelled as what they are."""
    if not kept:
        return ("Offline answer (no LLM configured): no community report relates to the question. "
                "If the collection is new, its communities may not be built yet (tg-rebuild-communities).")
    lines = ["Offline answer (no LLM configured), from the community reports most related to the question:"]
    for report in kept:
        lines.append(f"- {report.title}: {'; '.join(points(report.summary))}")
    return "\n".join(lines)


def points(summary: str, limit: int = 3) -> list[str]:
    """What to quote of a report: its first listed facts (an offline report lists them as "- …"
    lines), else its opening sentences.

    >>> points("Offline summary.\\nMost central facts:\\n- A runs B.\\n- B uses C.")
    ['A runs B', 'B uses C']
    >>> points("Helios Grid runs the network. It buys forecasts. More.")
    ['Helios Grid runs the network. It buys forecasts.']
    """
    listed = [line[2:].strip().rstrip(".") for line in summary.splitlines() if line.startswith("- ")]
    return listed[:limit] or [lead(summary)]


def lead(text: str, sentences: int = SUMMARY_SENTENCES) -> str:
    """The first sentences of a summary.

    >>> lead("One. Two! Three? Four.")
    'One. Two!'
    """
    parts = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    return " ".join(parts[:sentences])
