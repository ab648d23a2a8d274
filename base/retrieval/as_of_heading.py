"""The first line of an answer given as of a date, naming where the date came from (the request's
--as-of, or a phrase of the question). Kept apart from timeline.py so the CLIs print it without
loading retrieval."""

from __future__ import annotations

EXPLICIT = "--as-of"  # what the line names when the request gave the date


def heading(as_of: str, source: str = "") -> str:
    """A date alone stands for its start, or (from the question's words) for its last second: both
    print as the day.

    >>> heading("2024-12-01T00:00:00Z", EXPLICIT), heading("2024-12-01T09:30:00Z")
    ('As of 2024-12-01 (--as-of):\\n', 'As of 2024-12-01 09:30 UTC:\\n')
    >>> heading("2023-12-31T23:59:59Z", "from 'in 2023' in the question")
    "As of 2023-12-31 (from 'in 2023' in the question):\\n"
    """
    day, time = as_of[:10], as_of[11:19]
    when = day if time in ("", "00:00:00", "23:59:59") else f"{day} {time[:5]} UTC"
    return f"As of {when}" + (f" ({source})" if source else "") + ":\n"
