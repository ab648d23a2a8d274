"""The date a document gives itself, found in its text: the valid-from of its facts when its
metadata has none. Only dating lines count ("Date: …", "Effective …"), not every date in the prose."""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache

import dateparser

from tracegraph.schemas.dates import canonical

_MONTHS = {name: number for number, names in enumerate(
    [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
     ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
     ("dec", "december")], 1) for name in names}
_MONTH = r"(?P<month>[A-Za-z]{3,9})\.?"
_PROSE_DATES = [
    re.compile(r"(?P<year>\d{4})-(?P<m>\d{2})-(?P<day>\d{2})(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?"),
    re.compile(rf"(?P<day>\d{{1,2}})(?:st|nd|rd|th)? {_MONTH},? (?P<year>\d{{4}})"),
    re.compile(rf"{_MONTH} (?P<day>\d{{1,2}})(?:st|nd|rd|th)?,? (?P<year>\d{{4}})"),
]
# Where a document says when it was written or took effect: a date after one of these is the
# document's own date. Other dates in the text (a birth year, a deadline) are not.
_DATING = re.compile(r"^\W*(?:date[d]?|effective(?: from| date| on)?|as of|last updated|updated|"
                     r"published|decided(?: on)?|written(?: on)?)\b\W*", re.IGNORECASE | re.MULTILINE)


def _prose_date(text: str) -> str | None:
    """The first date written at the start of `text`, in any of the prose forms (dateparser reads the
    numeric ones, day first: "28/03/2018", "25.05.2020"), or None."""
    for pattern in _PROSE_DATES:
        m = pattern.match(text)
        if not m:
            continue
        month = int(m["m"]) if "m" in pattern.groupindex else _MONTHS.get(m["month"].lower())
        try:
            return canonical(datetime(int(m["year"]), month or 0, int(m["day"])))
        except (TypeError, ValueError):
            return None
    words = text.split("\n", 1)[0].split()[:4]
    for end in range(len(words), 0, -1):  # the longest opening that is a date: "1 March 2025, the …"
        found = iso_date(" ".join(words[:end]))
        if found:
            return canonical(datetime.fromisoformat(found))
    return None


_SETTINGS = {"REQUIRE_PARTS": ["year"], "DATE_ORDER": "DMY", "PREFER_DAY_OF_MONTH": "first",
             "PREFER_MONTH_OF_YEAR": "first", "RETURN_AS_TIMEZONE_AWARE": False}
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|2[01]\d\d)(?!\d)")
_TIME_OF_DAY = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:UTC|GMT|[A-Z]{2,4})?\b")


@lru_cache(maxsize=4096)
def iso_date(text: str) -> str:
    """The date a phrase names, as YYYY-MM-DD, or "" when it names none with a year (read with dateparser,
    day before month: documents write "28/03/2018" and "25.05.2020"; "Monday" or "last week" say nothing
    without knowing when they were written).

    >>> iso_date("28/03/2018"), iso_date("September 8, 2023"), iso_date("25.05.2020"), iso_date("Monday")
    ('2018-03-28', '2023-09-08', '2020-05-25', '')
    """
    phrase = _TIME_OF_DAY.sub(" ", " ".join(text.split())).strip(" ,.;:()[]")
    if not phrase or not _YEAR.search(phrase) or len(phrase) > 40:
        return ""
    try:
        found = dateparser.parse(phrase, languages=["en"], settings=_SETTINGS)
    except (ValueError, OverflowError):
        return ""
    return found.date().isoformat() if found else ""


_DATED_PATH = re.compile(r"(?<!\d)((?:19|20)\d\d)([-/])(\d\d)\2(\d\d)(?!\d)")
_PATH_FIELD = re.compile(r"^\s*(?:path|permalink|url|slug)\s*[:=]\s*[\"']?(?P<value>\S+)", re.IGNORECASE | re.MULTILINE)


def path_date(path: str, text: str = "") -> str | None:
    """The date a dated path gives a post when it gives itself none: "2020-09-21-outage.md",
    "inside-rust/2023/09/08/infra-team" (the document's own path, or a path field of its front matter).

    >>> path_date("incidents/2020-09-21-components-destroyed.html.md.erb")
    '2020-09-21T00:00:00Z'
    >>> path_date("post.md", 'path = "inside-rust/2023/09/08/infra-team"'), path_date("src/cart/README.md")
    ('2023-09-08T00:00:00Z', None)
    """
    for candidate in (path, *(m["value"] for m in _PATH_FIELD.finditer(text[:2000]))):
        found = _DATED_PATH.search(candidate)
        if found:
            try:
                return canonical(datetime(int(found[1]), int(found[3]), int(found[4])))
            except ValueError:
                continue
    return None


def document_date(text: str, within: int = 4000) -> str | None:
    """The date a document gives itself ("Date: 2025-06-01", "Effective 1 March 2025", "As of June 3,
    2025", front matter `date: …`) in its first `within` characters, or None.

    >>> document_date("# ADR 7\\n\\nStatus: accepted\\nDate: 12 March 2025\\n\\nContext …")
    '2025-03-12T00:00:00Z'
    >>> document_date("Ada Lovelace was born on 10 December 1815.") is None
    True
    """
    head = text[:within]
    for m in _DATING.finditer(head):
        found = _prose_date(head[m.end():m.end() + 60])
        if found:
            return found
    return None
