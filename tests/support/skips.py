"""What a test run skipped and why, one line per reason: among hundreds of dots, an `s` is easy to miss."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import pytest


def skip_reason(report: pytest.TestReport) -> str:
    """The reason a test gave for skipping (pytest keeps it as (file, line, "Skipped: reason"))."""
    longrepr: Any = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ").strip()


def skip_counts(reports: Iterable[pytest.TestReport]) -> list[tuple[str, int]]:
    """(reason, how many tests) for every skip, the commonest reason first."""
    counts = Counter(skip_reason(report) for report in reports if report.skipped)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def write_skip_summary(terminal: Any) -> None:
    """A section at the end of the run: one line per reason, with its count."""
    counts = skip_counts(terminal.stats.get("skipped", []))
    if not counts:
        return
    total = sum(count for _, count in counts)
    terminal.write_sep("=", f"{total} skipped, by reason (README, 'Tests and benchmarks': how to run them)")
    for reason, count in counts:
        terminal.write_line(f"{count:5d}  {reason}")
