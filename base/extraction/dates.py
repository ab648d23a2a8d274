"""Dates as documents write them ("2020-09-21", "28/03/2018", "25.05.2020", "September 8, 2023", "March
2024"), read with dateparser into ISO dates. Only phrases that name a year are taken: "Monday" or "last
week" say nothing without knowing when they were written."""

from __future__ import annotations

import re
from functools import lru_cache

import dateparser

_SETTINGS = {"REQUIRE_PARTS": ["year"], "DATE_ORDER": "DMY", "PREFER_DAY_OF_MONTH": "first",
             "PREFER_MONTH_OF_YEAR": "first", "RETURN_AS_TIMEZONE_AWARE": False}
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|2[01]\d\d)(?!\d)")
_TIME_OF_DAY = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:UTC|GMT|[A-Z]{2,4})?\b")


@lru_cache(maxsize=4096)
def iso_date(text: str) -> str:
    """The date a phrase names, as YYYY-MM-DD, or "" when it names none with a year.

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
