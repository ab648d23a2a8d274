"""Counts as a person writes them: "1 entity", "3 entities", never "entit(ies)"."""

from __future__ import annotations


def counted(count: int | str, noun: str, plural: str | None = None) -> str:
    """`count` and the noun in the number it needs; `plural` for a noun not made plural by adding "s".

    >>> counted(1, "entity", "entities"), counted(3, "entity", "entities"), counted("0", "edge")
    ('1 entity', '3 entities', '0 edges')
    """
    one = str(count).strip() in ("1", "1.0")
    return f"{count} {noun if one else plural or noun + 's'}"
