"""Instants as the history stores them: UTC xsd:dateTime text, which sorts and compares as text.

A user gives dates in many forms (`2025-06-01`, `2025-06-01T09:30:00+02:00`, `2025-06`); they become
one canonical form here, and a bad one is a ValueError that names the field it came from."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime


def canonical(moment: datetime) -> str:
    """One instant, one text: UTC, seconds, a trailing Z.

    >>> canonical(datetime(2025, 6, 1, 9, 30, tzinfo=UTC))
    '2025-06-01T09:30:00Z'
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now() -> str:
    return canonical(datetime.now(UTC))


def parse_instant(text: str, field: str = "date") -> str:
    """A user's date or date-time as canonical UTC text; a date alone is its midnight (UTC), a month
    its first day. ValueError names `field` and shows the forms accepted.

    >>> parse_instant("2025-06-01")
    '2025-06-01T00:00:00Z'
    >>> parse_instant("2025-06-01T09:30:00+02:00")
    '2025-06-01T07:30:00Z'
    >>> parse_instant("2025-06")
    '2025-06-01T00:00:00Z'
    >>> parse_instant("yesterday", "at")
    Traceback (most recent call last):
    ...
    ValueError: at: 'yesterday' is not a date; use YYYY-MM-DD, YYYY-MM or an ISO 8601 date-time
    """
    raw = text.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}", raw):
            return canonical(datetime.strptime(raw, "%Y-%m"))
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw):
            return canonical(datetime.combine(date.fromisoformat(raw), datetime.min.time()))
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}[T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?", raw):
            return canonical(datetime.fromisoformat(raw.replace("Z", "+00:00")))
    except ValueError:
        pass
    shown = raw if len(raw) <= 40 else raw[:40] + "…"
    raise ValueError(f"{field}: {shown!r} is not a date; use YYYY-MM-DD, YYYY-MM or an ISO 8601 date-time")


