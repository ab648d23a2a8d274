"""When an answer stands: as of a valid time (None: now), with a half-life for the age of its
evidence. A Timeline reads what it needs of the collection's history (history.py) at most once per
answer, then keeps the facts that held at that time and weighs evidence by age and supersession
(staleness.py). A collection without history is neither filtered nor weighed, and costs nothing.
Without an as-of in the request, the question's own words may give one ("Who owned Skyline in 2024?")."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from tracegraph.base.retrieval import history
from tracegraph.base.retrieval.as_of_heading import EXPLICIT, heading
from tracegraph.base.retrieval.date_phrases import DatePhrase, find_phrases, needs_records
from tracegraph.base.retrieval.dated_records import read_dated_records
from tracegraph.base.retrieval.history import FactHistory
from tracegraph.base.retrieval.staleness import HALF_LIFE_DAYS, staleness_weight
from tracegraph.base.temporal.records import Record
from tracegraph.schemas.dates import now
from tracegraph.schemas.rdf import Triple, fact_key

UNDATED = ("no document of this collection carries a date of its own (or it keeps no history): the question's "
           "dates are words to look for, not the time the answer stands at")
NO_HISTORY = ("this collection keeps no history (TG_HISTORY off, or a store without SPARQL): answered from "
              "the current graph, not as of the date asked")


@dataclass(frozen=True, slots=True)
class EdgeWeight:
    """A fact's staleness weight, and the older records (of other values) its current record superseded."""

    weight: float
    superseded: tuple[str, ...] = ()


def _ended(record: Record, at: str) -> bool:
    return not record.active or (record.valid_until is not None and record.valid_until <= at)


class Timeline:
    """One answer's view of time over `tools` (the retrieval Protocol). Call `prepare()` first: it
    learns whether the collection keeps history (`kept`)."""

    def __init__(self, tools, as_of: str | None = None, half_life_days: float = HALF_LIFE_DAYS,
                 today: str | None = None) -> None:
        self.tools, self.as_of, self.half_life_days = tools, as_of, half_life_days
        self.today = today or now()
        self.explicit = as_of is not None  # the request's as-of, which wins over the question's words
        self.phrases: list[DatePhrase] = []  # the date phrases of the question (read_question)
        self.applied: DatePhrase | None = None  # the one whose date the answer stands at
        self.not_applied = ""  # why none is, when the question had a date but the answer cannot use it
        self.kept = False
        self._facts: dict[str, FactHistory] = {}
        self._dates: dict[str, str] | None = None
        self._reading = asyncio.Lock()

    @property
    def at(self) -> str:
        """The valid time the answer stands at."""
        return self.as_of or self.today

    @property
    def heading(self) -> str:
        """What an as-of answer starts with; "" for an answer as of now."""
        return heading(self.as_of, self.as_of_source) if self.as_of else ""

    @property
    def as_of_source(self) -> str:
        """Where the as-of date came from: the request, or a phrase of the question.

        >>> Timeline(None, "2024-06-01T00:00:00Z").heading
        'As of 2024-06-01 (--as-of):\\n'
        """
        return f"from '{self.applied.text}' in the question" if self.applied else EXPLICIT

    async def read_question(self, question: str, *, cannot_apply: str = "") -> None:
        """The question's date phrases, resolved against today (an incident or decision it names, against
        the collection's records, read only then). The first that gives a date sets the as-of, unless
        the request gave one (it wins) or the answer cannot stand at a date (`cannot_apply` says why)."""
        today = date.fromisoformat(self.today[:10])
        records = []
        if needs_records(question) and hasattr(self.tools, "sparql"):
            records = await read_dated_records(lambda query, limit: history.rows(self.tools, query, limit))
        self.phrases = await asyncio.to_thread(find_phrases, question, today, records)  # dateparser reads files
        if self.explicit:
            self.not_applied = f"the request's as-of ({self.as_of[:10]}) wins over the question's words"
        elif cannot_apply:
            self.not_applied = cannot_apply
        elif any(p.as_of for p in self.phrases) and not (hasattr(self.tools, "sparql")
                                                          and await history.has_dated_documents(self.tools)):
            self.not_applied = UNDATED  # "Which film of 1998 …" over encyclopedia passages: a year to look for
        else:
            self.applied = next((p for p in self.phrases if p.as_of), None)
            self.as_of = self.applied.as_of if self.applied else None

    @property
    def half_life_used(self) -> float | None:
        """The half-life evidence is weighed with; None when it is not weighed (no history)."""
        return self.half_life_days if self.kept else None

    @property
    def notes(self) -> list[str]:
        """What the trace should say about time that it cannot show by itself."""
        return [NO_HISTORY] if self.as_of and not self.kept else []

    @property
    def weighing_note(self) -> str:
        """How scores were weighed, for a step that weighed them."""
        return (f"scores × staleness weight 0.5 + 0.5·2^(−age/{self.half_life_days:g} days), the age counted from "
                f"the evidence's valid-from to {self.at[:10]}; × 0.5 for a value since superseded")

    async def prepare(self) -> None:
        """Learn whether there is history: from the tools' per-collection answer when they keep one
        (no query at all once known), afresh for an answer as of a date."""
        if self.as_of or not hasattr(self.tools, "has_history"):
            self.kept = await history.has_history(self.tools)
        else:
            self.kept = await self.tools.has_history()

    async def _histories(self, facts: Sequence[Triple]) -> dict[str, FactHistory]:
        async with self._reading:  # strategies run concurrently: each fact is read once
            missing = [f for f in facts if fact_key(f) not in self._facts]
            if missing:
                found = await history.fact_histories(self.tools, missing)
                self._facts.update({fact_key(f): found.get(fact_key(f), FactHistory()) for f in missing})
        return self._facts

    async def holding(self, facts: Sequence[Triple]) -> list[Triple]:
        """Those of `facts` that held at the answer's time, as known now. As of a date: those a record
        says held then. As of now: all but those whose every record has ended (a value superseded,
        or stated only by removed documents), which left the current graph although a passage still
        states them; a fact without records is current. Unfiltered without history."""
        if not self.kept or not facts:
            return list(facts)
        known = await self._histories(facts)
        if self.as_of:
            return [f for f in facts if any(r.holds(self.as_of) for r in known[fact_key(f)].records)]
        return [f for f in facts if not known[fact_key(f)].records
                or not all(_ended(r, self.today) for r in known[fact_key(f)].records)]

    async def edge_weights(self, facts: Sequence[Triple]) -> dict[str, EdgeWeight]:
        """By fact_key: each fact's weight from its latest record holding at `at` (halved when none
        holds any more: its value was superseded); {} when there is nothing to weigh."""
        if not self.kept or not facts:
            return {}
        known = await self._histories(facts)
        return {fact_key(f): self._edge_weight(known[fact_key(f)]) for f in facts}

    def _edge_weight(self, fact: FactHistory) -> EdgeWeight:
        if not fact.records:
            return EdgeWeight(1.0)
        holding = [r for r in fact.records if r.holds(self.at)]
        current = max(holding or fact.records, key=lambda r: (r.valid_from, r.recorded_at))
        weight = staleness_weight(current.valid_from or None, self.at, self.half_life_days,
                                  superseded=not holding and _ended(current, self.at))
        return EdgeWeight(round(weight, 4), tuple(fact.superseded.get(current.uri, ())))

    async def passage_weights(self, passages: Sequence[tuple[str, str | None]]) -> dict[str, float]:
        """By chunk, for (chunk, document) pairs: its document's age, halved when the chunk stated a
        fact whose value was superseded by `at`; {} when there is nothing to weigh."""
        if not self.kept or not passages:
            return {}
        found = await history.passage_history(self.tools, passages)
        weights = {}
        for chunk, document in passages:
            superseded = any(d == document and until <= self.at for d, until in found.ended.get(chunk, ()))
            weights[chunk] = round(staleness_weight(found.dates.get(document or ""), self.at, self.half_life_days,
                                                    superseded), 4)
        return weights

    async def existed(self, document: str | None) -> bool:
        """Whether a document was valid by the as-of date (an undated or unknown one counts as valid)."""
        if not self.as_of or not self.kept or not document:
            return True
        async with self._reading:
            if self._dates is None:
                self._dates = await history.document_dates(self.tools)
        return self._dates.get(document, "") <= self.as_of
