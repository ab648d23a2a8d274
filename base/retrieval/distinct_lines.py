"""Offline answers quote lines from several places (facts, passages, sub-answers), and the same
statement often comes twice: "X is a regional operator" and "X is defined as X is a regional
operator that …". Quoting it once reads as an answer, not as a dump."""

from __future__ import annotations

import re

_BULLET = re.compile(r"^\s*-\s+")
_TITLE = re.compile(r"\s+\([^()]*\)\s*$")  # a quoted passage's "(document title)"


def distinct(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """(part, line) in order, without a line that repeats an earlier one, or whose words (three or more)
    appear whole in a longer line. Runs of blank lines become one.

    >>> distinct([(0, "- A b c."), (0, "- Q A b c d."), (0, ""), (0, ""), (1, '- "A b c." (doc)'), (1, "- Z.")])
    [(0, '- Q A b c d.'), (0, ''), (1, '- Z.')]
    """
    keys = [_key(line) for _, line in lines]
    kept: list[tuple[int, str]] = []
    for i, (part, line) in enumerate(lines):
        key = keys[i]
        if not line.strip():
            if kept and kept[-1][1].strip():
                kept.append((part, ""))
            continue
        if key and key in keys[:i]:
            continue
        if len(key.split()) >= 3 and any(other != key and f" {key} " in f" {other} " for other in keys):
            continue
        kept.append((part, line))
    while kept and not kept[-1][1].strip():
        kept.pop()
    return kept


def distinct_texts(texts: list[str]) -> list[str]:
    """`distinct` of plain texts, each on one line (a newline inside a quoted literal is a space).

    >>> distinct_texts(["Helios Grid is an operator", "Helios Grid is defined as Helios Grid is an operator\\nof grids"])
    ['Helios Grid is defined as Helios Grid is an operator of grids']
    """
    return [line for _, line in distinct([(0, " ".join(t.split())) for t in texts])]


def _key(line: str) -> str:
    text = _TITLE.sub("", _BULLET.sub("", line)).strip().strip("\"“”").rstrip(".!?;:").strip()
    return " ".join(re.findall(r"[\w'-]+", text.lower()))
