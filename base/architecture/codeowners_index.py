"""Which CODEOWNERS rules could match a path, so that finding a path's owners in a file of thousands of rules
tests a handful of patterns instead of all of them. It knows a pattern only by its anatomy (anchoring,
segments, literal names, extensions); what a pattern matches is codeowners.py's business."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import NamedTuple


class PatternShape(NamedTuple):
    """A pattern taken apart: whether it is anchored at the root, whether it names directories only, and its
    segments without leading or trailing `/`."""

    anchored: bool
    directory_only: bool
    segments: tuple[str, ...]


@functools.lru_cache(maxsize=16384)
def pattern_shape(pattern: str) -> PatternShape:
    """The anatomy of a CODEOWNERS pattern.

    >>> pattern_shape("/docs/*.md")
    PatternShape(anchored=True, directory_only=False, segments=('docs', '*.md'))
    >>> pattern_shape("logs/")
    PatternShape(anchored=False, directory_only=True, segments=('logs',))
    """
    body = pattern.rstrip("/")
    return PatternShape("/" in body, pattern.endswith("/"),
                        tuple(body.lstrip("/").split("/")) if body.strip("/") else ())


def is_literal(segment: str) -> bool:
    """Whether a segment matches one name only (no wildcard, no escape)."""
    return bool(segment) and not any(char in segment for char in "*?\\")


def _extension_key(segment: str) -> str | None:
    """`.sql` for `*.sql`, `.go` for `*_test.go`: the extension every name the segment matches ends with."""
    tail = segment[max(segment.rfind("*"), segment.rfind("?")) + 1:]
    if "\\" in tail or "." not in tail:
        return None
    return tail[tail.rfind("."):]


class _TrieNode:
    __slots__ = ("children", "rules")

    def __init__(self) -> None:
        self.children: dict[str, _TrieNode] = {}
        self.rules: list[int] = []


class RuleIndex:
    """The positions (in file order) of the patterns that could match a path. Anchored patterns sit in a trie
    under their leading literal segments, one-segment patterns under their literal name or their extension;
    the rest are always candidates.

    >>> index = RuleIndex(["*", "/docs/", "*.sql", "/apps/web/"])
    >>> list(index.candidates("docs/schema.sql")), list(index.candidates("apps/web/app.js"))
    ([2, 1, 0], [3, 0])
    """

    def __init__(self, patterns: Sequence[str]) -> None:
        self._trie: dict[str, _TrieNode] = {}
        self._names: dict[str, list[int]] = {}
        self._extensions: dict[str, list[int]] = {}
        self._always: list[int] = []
        for position, pattern in enumerate(patterns):
            self._add(position, pattern)

    def _add(self, position: int, pattern: str) -> None:
        anchored, _, segments = pattern_shape(pattern)
        if not segments:
            return  # matches nothing
        if anchored and segments[0] == "**" and len(segments) > 1 and is_literal(segments[1]):
            self._names.setdefault(segments[1], []).append(position)  # `**/logs`: a `logs` at any depth
        elif anchored:
            node, children = None, self._trie
            for segment in segments:
                if not is_literal(segment):
                    break
                node = children.setdefault(segment, _TrieNode())
                children = node.children
            (self._always if node is None else node.rules).append(position)
        elif is_literal(segments[0]):
            self._names.setdefault(segments[0], []).append(position)
        elif (extension := _extension_key(segments[0])) is not None:
            self._extensions.setdefault(extension, []).append(position)
        else:
            self._always.append(position)

    def _indexed(self, components: list[str]) -> list[int]:
        found: set[int] = set()
        children = self._trie
        for component in components:
            node = children.get(component)
            if node is None:
                break
            found.update(node.rules)
            children = node.children
        for component in components:
            found.update(self._names.get(component, ()))
            dot = component.rfind(".")
            if dot >= 0:
                found.update(self._extensions.get(component[dot:], ()))
        return sorted(found, reverse=True)

    def candidates(self, path: str) -> Iterator[int]:
        """The positions of the patterns that could match the path, last first: the indexed candidates and
        the always-tried patterns, merged from the end of the file (lazily, as the first match ends a search)."""
        always, next_always = self._always, len(self._always) - 1
        for position in self._indexed(path.split("/")):
            while next_always >= 0 and always[next_always] > position:
                yield always[next_always]
                next_always -= 1
            yield position
        yield from reversed(always[:next_always + 1])
