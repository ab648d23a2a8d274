"""The date a document gives itself, found in its text: the valid-from of its facts when its
metadata has none. Only dating lines count ("Date: …", "Effective …"), not every date in the prose."""

from __future__ import annotations

import re
from datetime import datetime

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
    """The first date written at the start of `text`, in any of the prose forms, or None."""
    for pattern in _PROSE_DATES:
        m = pattern.match(text)
        if not m:
            continue
        month = int(m["m"]) if "m" in pattern.groupindex else _MONTHS.get(m["month"].lower())
        try:
            return canonical(datetime(int(m["year"]), month or 0, int(m["day"])))
        except (TypeError, ValueError):
            return None
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
