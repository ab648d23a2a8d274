"""Dates in a question's words ("in 2024", "in March 2025", "last Friday", "three days before the Skyline
outage"), so an answer can stand as of the date the question means. Patterns find the phrases (so a
name like May, or 2024 inside v2024.1, is left alone); dateparser reads the dates they hold against a
given today; an incident or decision the question names is read from the records the architecture
memory keeps, matched by its words whatever their case (dated_records.py)."""

from __future__ import annotations

import calendar
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from tracegraph.base.retrieval.dated_records import KIND_NAMES, DatedRecord, kinds_named, match_record, record_how
from tracegraph.schemas.dates import canonical

# ---------------------------------------------------------------- what a phrase resolves to


@dataclass(frozen=True, slots=True)
class DatePhrase:
    """A date phrase of a question and what it means: a window of days (`start` to `end`, both
    included; None at either side for an open window, `end` None meaning "until now"), or nothing
    when it named a record that could not be found (`how` says so)."""

    text: str
    start: date | None
    end: date | None
    how: str  # "year", "month", "relative to today 2026-11-27", "the date of incident 'X' (document Y)"
    record: str | None = None  # the incident or decision whose date it was
    resolved: bool = True

    @property
    def as_of(self) -> str | None:
        """The instant an answer stands at: the end of the window's last day; None for a window that
        reaches today (the answer is as of now) or a phrase that was not resolved."""
        if not self.resolved or self.end is None:
            return None
        return end_of_day(self.end)


def end_of_day(day: date) -> str:
    """The last second of `day`, as the history stores instants.

    >>> end_of_day(date(2024, 12, 31))
    '2024-12-31T23:59:59Z'
    """
    return canonical(datetime(day.year, day.month, day.day, 23, 59, 59))


# ---------------------------------------------------------------- patterns

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_FULL_MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
_NOT_A_QUANTITY = r"(?!\s*(?:ms|s|kb|mb|gb|bytes?|rows?|requests?|items?|users?|lines?|tokens?)\b|\s*%)"
_YEAR = r"(?<![\w.\-/])(?:19|20)\d{2}(?![\w\-/]|\.\d)" + _NOT_A_QUANTITY
_ISO = r"(?<![\w.\-/])\d{4}-\d{2}(?:-\d{2})?(?![\w\-/]|\.\d)"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_DAY_DATE = rf"(?:{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}|{_MONTH}\s+{_DAY},?\s+{_YEAR})"
_MONTH_YEAR = rf"{_MONTH},?\s+(?:of\s+)?{_YEAR}"
_QUARTER = rf"q[1-4]\s+{_YEAR}"
_NUMBER = r"(?:\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(?:day|week|month|year)s?"
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_RELATIVE = (rf"(?:(?:last|past|previous)\s+(?:year|month|week|quarter|{_WEEKDAY})|this\s+(?:year|month|week|quarter)"
             rf"|yesterday|{_NUMBER}\s+{_UNIT}\s+ago)")
# A month named alone after a preposition ("in March"), unless a capitalised word follows (May Chen).
_LONE_MONTH = rf"{_FULL_MONTH}\b(?!\s*\d)(?-i:(?!\s+[A-Z]))"
_STANDALONE = rf"(?:{_ISO}|{_DAY_DATE}|{_MONTH_YEAR}|{_QUARTER}|{_RELATIVE})"  # a date even without a preposition
_AFTER_PREPOSITION = rf"(?:{_STANDALONE}|{_YEAR}|{_LONE_MONTH})"

_BEFORE, _AFTER, _SINCE, _UNTIL, _DURING = "before", "after", "since", "until", "during"
PREPOSITIONS = {  # words before a date → how the phrase's window relates to the date's
    "between": "between", "before": _BEFORE, "prior to": _BEFORE, "after": _AFTER, "since": _SINCE,
    "until": _UNTIL, "till": _UNTIL, "up to": _UNTIL, "by the end of": _UNTIL, "at the end of": _UNTIL,
    "end of": _UNTIL, "as of": _UNTIL, "by": _UNTIL,
    "in": _DURING, "during": _DURING, "throughout": _DURING, "for": _DURING, "of": _DURING, "on": _DURING,
    "at": _DURING, "around": _DURING,
}
WEAK_PREPOSITIONS = ("for", "of", "on", "at", "around")  # words that often precede a number that is not a year
_BARE_YEAR = re.compile(r"(?:19|20)\d{2}")
_CLAUSE_ENDS = re.compile(r"\s*(?:[,.;:?!)]|$|\s(?:and|or|but)\b)", re.IGNORECASE)
_ANCHORS = ("before", "prior to", "after", "since", "until", "till")  # words that may name a record instead
_OFFSET = rf"(?:(?P<n>{_NUMBER})\s+(?P<unit>{_UNIT})|the\s+(?:(?P<wn>{_NUMBER})\s+)?(?P<wunit>{_UNIT}))"
_PREPOSITION = "|".join(sorted((p.replace(" ", r"\s+") for p in PREPOSITIONS), key=len, reverse=True))
_HEAD = re.compile(rf"\b(?:{_OFFSET}\s+(?P<direction>before|after|prior\s+to)|(?P<preposition>{_PREPOSITION}))\s+",
                   re.IGNORECASE)
_DATE_AFTER_HEAD = re.compile(_AFTER_PREPOSITION, re.IGNORECASE)
_STANDALONE_DATE = re.compile(rf"\b{_STANDALONE}", re.IGNORECASE)
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,.;:?!()]|\s(?:and|or|but|when|while|because|so|then|who|which|that)\s", re.IGNORECASE)

# ---------------------------------------------------------------- reading one date expression

_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_RELATIVE_WORDS = re.compile(r"\b(?:last|past|previous|this|yesterday|ago)\b", re.IGNORECASE)


def _number(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBERS[text.lower()]


def _month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def shifted(day: date, count: int, unit: str) -> date:
    """`day` moved by `count` units (negative: back); a month's day past its end is its last day.

    >>> shifted(date(2024, 3, 31), -1, "month"), shifted(date(2024, 2, 29), 1, "year")
    (datetime.date(2024, 2, 29), datetime.date(2025, 2, 28))
    """
    unit = unit.lower().rstrip("s")
    if unit in ("day", "week"):
        return day + timedelta(days=count * (7 if unit == "week" else 1))
    year, month = divmod(day.year * 12 + day.month - 1 + count * (12 if unit == "year" else 1), 12)
    return date(year, month + 1, min(day.day, _month_end(year, month + 1).day))


def _quarter(day: date) -> tuple[date, date]:
    first = 3 * ((day.month - 1) // 3) + 1
    return date(day.year, first, 1), _month_end(day.year, first + 2)


_PARSERS: dict[date, object] = {}
_MAKING = threading.Lock()


def _parser(today: date):
    """dateparser reading English dates against `today`, one per day. It is imported when first needed
    and reads its language data from disk then: call find_phrases off the event loop."""
    with _MAKING:
        parser = _PARSERS.get(today)
        if parser is None:
            from dateparser.date import DateDataParser
            parser = DateDataParser(languages=["en"], settings={
                "RELATIVE_BASE": datetime(today.year, today.month, today.day), "PREFER_DATES_FROM": "past",
                "RETURN_TIME_AS_PERIOD": True, "PREFER_DAY_OF_MONTH": "first"})
            _PARSERS.clear()
            _PARSERS[today] = parser
        return parser


def read_date(text: str, today: date) -> tuple[date, date, str] | None:
    """The days a date expression covers (first, last) and what it was read as, or None.

    >>> read_date("March 2025", date(2026, 11, 27))
    (datetime.date(2025, 3, 1), datetime.date(2025, 3, 31), 'month')
    >>> read_date("last year", date(2026, 11, 27))
    (datetime.date(2025, 1, 1), datetime.date(2025, 12, 31), 'relative to today 2026-11-27')
    """
    words = " ".join(text.lower().replace(".", " ").split())
    relative = bool(_RELATIVE_WORDS.search(words))
    how = f"relative to today {today.isoformat()}" if relative else ""
    words = re.sub(r"^(?:past|previous)\s", "last ", words)
    if words.endswith("quarter"):  # "last quarter", "this quarter": dateparser has no quarters of its own
        first, _ = _quarter(today)
        return (*_quarter(shifted(first, -3, "month") if words.startswith("last") else first), how)
    if words.endswith(" ago"):  # a point in time, whatever the unit ("a year ago" is one day)
        count, unit = words.split()[:2]
        day = shifted(today, -_number(count), unit)
        return day, day, how
    found = _parser(today).get_date_data(words)
    if found.date_obj is None:
        return None
    day, period = found.date_obj.date(), found.period
    if period == "year":
        return date(day.year, 1, 1), date(day.year, 12, 31), how or "year"
    if period == "month":
        lone = not re.search(r"\d", words)
        return date(day.year, day.month, 1), _month_end(day.year, day.month), (
            how or (f"month, the latest by today {today.isoformat()}" if lone else "month"))
    if period == "quarter":
        return (*_quarter(day), how or "quarter")
    if period == "week":
        monday = day - timedelta(days=day.weekday())
        return monday, monday + timedelta(days=6), how or "week"
    return day, day, how or "date"


# ---------------------------------------------------------------- finding the phrases


@dataclass(frozen=True, slots=True)
class _Anchor:
    start: date
    end: date
    how: str
    record: str | None = None


def _window(relation: str, anchor: _Anchor, today: date) -> tuple[date | None, date | None]:
    start, end = {
        _BEFORE: (None, anchor.start - timedelta(days=1)), _AFTER: (anchor.end + timedelta(days=1), None),
        _SINCE: (anchor.start, None), _UNTIL: (None, anchor.end), _DURING: (anchor.start, anchor.end),
    }[relation]
    return start, (None if end is not None and end >= today else end)


def _offset_window(head: re.Match, anchor: _Anchor, today: date) -> tuple[date | None, date | None]:
    """"three days before X" is a day; "the week before X" (or "the two weeks after X") a window."""
    back = head["direction"].lower().startswith(("before", "prior"))
    if head["unit"]:
        count = _number(head["n"])
        day = shifted(anchor.start, -count, head["unit"]) if back else shifted(anchor.end, count, head["unit"])
        return (day, None) if day >= today else (day, day)
    count = _number(head["wn"]) if head["wn"] else 1
    if back:
        start, end = shifted(anchor.start, -count, head["wunit"]), anchor.start - timedelta(days=1)
    else:
        start, end = anchor.end + timedelta(days=1), shifted(anchor.end, count, head["wunit"])
    return start, (None if end >= today else end)


def needs_records(question: str) -> bool:
    """Whether a phrase of `question` may name a record ("before the incident"): only then are they read."""
    for head in _HEAD.finditer(question):
        word = " ".join((head["direction"] or head["preposition"]).lower().split())
        if (head["direction"] or word in _ANCHORS) and not _DATE_AFTER_HEAD.match(question, head.end()):
            return True
    return False


def find_phrases(question: str, today: date, records: Sequence[DatedRecord] = ()) -> list[DatePhrase]:
    """Every date phrase of `question`, in the order written, each resolved against `today` (a day) or
    to a record of `records`. A question without one gives [].

    >>> [(p.text, p.start, p.end, p.how) for p in find_phrases("Who owned Skyline in 2024?", date(2026, 11, 27))]
    [('in 2024', datetime.date(2024, 1, 1), datetime.date(2024, 12, 31), 'year')]
    >>> find_phrases("What changed in v2024.1, and what did May say?", date(2026, 11, 27))
    []
    """
    found: list[tuple[int, DatePhrase]] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in taken)

    for head in _HEAD.finditer(question):
        if not free(head.start(), head.end()):
            continue
        phrase = _phrase_at(question, head, today, records)
        if phrase is not None:
            end, resolved = phrase
            taken.append((head.start(), end))
            found.append((head.start(), resolved))
    for match in _STANDALONE_DATE.finditer(question):
        if free(match.start(), match.end()) and (read := read_date(match.group(0), today)):
            start, end = read[0], (None if read[1] >= today else read[1])
            taken.append(match.span())
            found.append((match.start(), DatePhrase(match.group(0), start, end, read[2])))
    return [phrase for _, phrase in sorted(found, key=lambda f: f[0])]


def _phrase_at(question: str, head: re.Match, today: date,
               records: Sequence[DatedRecord]) -> tuple[int, DatePhrase] | None:
    """The phrase a head ("in ", "three days before ") opens, and where it ends; None when no date follows."""
    word = " ".join((head["preposition"] or "").lower().split())
    anchor, end = _date_anchor(question, head.end(), today, weak=word in WEAK_PREPOSITIONS)
    if anchor is not None and word == "between":
        joined = _AND.match(question, end)
        second, last = _date_anchor(question, joined.end(), today) if joined else (None, end)
        if second is None:
            return None
        start_day, end_day = anchor.start, (None if second.end >= today else second.end)
        return last, DatePhrase(question[head.start():last], start_day, end_day, anchor.how)
    if anchor is None:
        if not (head["direction"] or word in _ANCHORS):
            return None
        anchor, end, missing = _record_anchor(question, head.end(), records)
        if anchor is None:
            return (end, DatePhrase(question[head.start():end], None, None, missing, resolved=False)) \
                if missing else None
    text = question[head.start():end]
    if head["direction"]:
        start_day, end_day = _offset_window(head, anchor, today)
    else:
        start_day, end_day = _window(PREPOSITIONS[word], anchor, today)
    return end, DatePhrase(text, start_day, end_day, anchor.how, anchor.record)


def _date_anchor(question: str, at: int, today: date, weak: bool = False) -> tuple[_Anchor | None, int]:
    """The date a phrase names from `at`. After a weak preposition ("at", "for") a bare year must end its
    clause: "at 2000 rpm" names no year, "the plan for 2024?" does."""
    match = _DATE_AFTER_HEAD.match(question, at)
    if match and weak and _BARE_YEAR.fullmatch(match.group(0)) and not _CLAUSE_ENDS.match(question, match.end()):
        match = None
    read = read_date(match.group(0), today) if match else None
    if read is None:
        return None, at
    return _Anchor(*read), match.end()


def _record_anchor(question: str, at: int, records: Sequence[DatedRecord]) -> tuple[_Anchor | None, int, str]:
    """The record the words from `at` to the end of their clause name, and where they end; when they
    name a kind of record ("the incident") that is not found, why not."""
    stop = _CLAUSE_END.search(question, at)
    end = stop.start() if stop else len(question)
    target = question[at:end].strip()
    record = match_record(target, records, question) if target else None
    if record is not None:
        return _Anchor(record.day, record.day, record_how(record), record.iri), end, ""
    kinds = kinds_named(target)
    if not kinds:
        return None, at, ""
    names = " or ".join(sorted(KIND_NAMES[k] for k in kinds))
    return None, end, f"no {names} named '{target}' is recorded in this collection"
