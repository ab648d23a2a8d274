"""GitHub CODEOWNERS files read into rules, and the path matching GitHub applies to them (pure, no I/O).

Ownership facts come from this module, so it follows GitHub's documented semantics rather than gitignore's
where the two differ; the choices below are the ones the documentation leaves open.

- One rule per line: a pattern, then owners (`@user`, `@org/team`, an e-mail address). No owners means the
  matching paths are explicitly unowned. The last matching line wins.
- `#` starts a comment at the start of a line, and (since GitHub's 2022 change, shown in its example file)
  after the pattern too: a word starting with `#` ends the owners, e.g. `*.js @js-owner #an inline comment`.
- `\\#` at the start of a pattern stands for a literal `#`. GitHub's docs say this gitignore escape "does not
  work" there; it is accepted because a file name starting with `#` cannot be written otherwise.
- Lines GitHub rejects are skipped and reported as a `Problem`: `!` negation, `[ ]` ranges, invalid owners,
  and a line holding only an owner handle. The rest of the file still counts.
- Patterns: a leading or inner `/` anchors at the root, otherwise the pattern matches a name at any depth; a
  match on a directory covers everything under it; a trailing `/` matches directories only; `*` and `?` stay
  within one path segment, `**` crosses them. One documented exception to gitignore: an anchored pattern whose
  last segment is `*` (`docs/*`) matches the files directly inside, never deeper ones.

Narrowing a lookup to the few rules that could match a path is codeowners_index.py's job.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field
from typing import Literal

from tracegraph.base.architecture.codeowners_index import (
    RuleIndex,
    is_literal,
    pattern_shape,
)

__all__ = ["CodeOwners", "Owner", "Problem", "Rule", "matches", "owner", "parse"]

_PROBLEM_TEXT_LIMIT = 200
_WORDS = re.compile(r"[^ \t]+")
_PERSON = re.compile(r"@([A-Za-z0-9][A-Za-z0-9_-]*)")
_TEAM = re.compile(r"@[A-Za-z0-9][A-Za-z0-9_-]*/([A-Za-z0-9][A-Za-z0-9_.-]*)")
_TEAM_WORDS = frozenset({"team", "squad", "group", "guild", "tribe", "crew", "chapter", "org", "approvers",
                         "maintainers", "reviewers", "owners", "admins", "engineering"})
_EMAIL = re.compile(r"[A-Za-z0-9.!#$%&'*+=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# A file name no written pattern can spell: `?` never matches NUL and parse() rejects control characters, so
# only a last segment made of `*` alone matches it. It stands for "a new ordinary file" in directory_rule().
_ORDINARY_FILE = "\x00"


@dataclass(frozen=True, slots=True)
class Owner:
    """An owner handle; `name` is what names the owner as an entity: a team without its organisation, called a
    team ("@corvid/billing" is the Billing team, never the Billing service)."""

    handle: str
    kind: Literal["team", "person"]
    name: str


def owner(handle: str) -> Owner | None:
    """The owner a handle names, or None when GitHub would reject it.

    >>> owner("@corvid/grid-analytics")
    Owner(handle='@corvid/grid-analytics', kind='team', name='grid-analytics team')
    >>> owner("@corvid/platform-team").name, owner("ada@corvid.example").kind, owner("@ada-kern").name
    ('platform-team', 'person', 'ada-kern')
    >>> owner("corvid-team") is None
    True
    """
    if team := _TEAM.fullmatch(handle):
        name = team.group(1)
        words = re.split(r"[-_.]", name.lower())
        return Owner(handle, "team", name if words[-1] in _TEAM_WORDS else f"{name} team")
    if person := _PERSON.fullmatch(handle):
        return Owner(handle, "person", person.group(1))
    if _EMAIL.fullmatch(handle):
        return Owner(handle, "person", handle)
    return None


@functools.lru_cache(maxsize=16384)
def _segment_source(segment: str) -> str:
    """Regex source for one path segment; a run of `*` is one `*` (so matching never backtracks badly)."""
    if segment and segment.strip("*") == "":
        return "[^/]+"  # a whole-segment `*` names an entry, which is never empty
    out: list[str] = []
    position = 0
    while position < len(segment):
        char = segment[position]
        if char == "\\" and position + 1 < len(segment):
            position += 1
            out.append(re.escape(segment[position]))
        elif char == "*":
            if not out or out[-1] != "[^/]*":
                out.append("[^/]*")
        elif char == "?":
            out.append("[^/\x00]")
        else:
            out.append(re.escape(char))
        position += 1
    return "".join(out)


@functools.lru_cache(maxsize=16384)
def _pattern_source(pattern: str) -> str:
    """Regex source (no capturing groups) matching the file paths a pattern owns, and `dir/` for a directory
    the pattern covers whole."""
    anchored, directory_only, segments = pattern_shape(pattern)
    if not segments:
        return "(?!)"
    parts = [r"\A" if anchored else r"\A(?:.*/)?"]
    for index, segment in enumerate(segments):
        after_start = index == 0 or segments[index - 1] == "**"
        if segment == "**":
            last = index == len(segments) - 1
            parts.append((".*" if last else "(?:.*/)?") if after_start else ("/.*" if last else "/(?:.*/)?"))
            continue
        parts.append(_segment_source(segment) if after_start else "/" + _segment_source(segment))
    if directory_only:
        parts.append("/.*")
    elif segments[-1] != "**" and not (anchored and segments[-1] == "*"):
        parts.append("(?:/.*)?")  # a matched directory brings everything under it
    parts.append(r"\Z")
    return "".join(parts)


@functools.lru_cache(maxsize=16384)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(_pattern_source(pattern), re.DOTALL)


def matches(pattern: str, path: str) -> bool:
    """Whether a CODEOWNERS pattern owns a file path (repo-relative); a path ending in `/` asks whether the
    pattern covers that directory and everything under it.

    >>> matches("docs/*", "docs/getting-started.md"), matches("docs/*", "docs/build-app/troubleshooting.md")
    (True, False)
    >>> matches("**/logs", "deeply/nested/logs/app.log"), matches("apps/", "apps/"), matches("*.sql", "db/")
    (True, True, False)
    """
    return _regex(pattern).fullmatch(path) is not None


@functools.lru_cache(maxsize=16384)
def _segment_regex(segment: str) -> re.Pattern[str]:
    return re.compile(_segment_source(segment), re.DOTALL)


def _reaches_under(pattern: str, directory: tuple[str, ...]) -> bool:
    """Whether the pattern can match some path strictly under the directory (walking its segments, `**`
    standing for any number of them)."""
    anchored, _, segments = pattern_shape(pattern)
    if not anchored:
        return bool(segments)  # a name at any depth can sit under any directory

    def with_empty_globstars(states: set[int]) -> set[int]:
        pending, seen = list(states), set(states)
        while pending:
            state = pending.pop()
            if state < len(segments) and segments[state] == "**" and state + 1 not in seen:
                seen.add(state + 1)
                pending.append(state + 1)
        return seen

    states = {0}
    for name in directory:
        states = {state if segments[state] == "**" else state + 1
                  for state in with_empty_globstars(states)
                  if state < len(segments)
                  and (segments[state] == "**" or _segment_regex(segments[state]).fullmatch(name))}
    return any(state < len(segments) for state in with_empty_globstars(states))


def _directory_segments(directory: str) -> tuple[str, ...]:
    stripped = directory.strip("/")
    return tuple(stripped.split("/")) if stripped else ()


@dataclass(frozen=True, slots=True)
class Rule:
    """One CODEOWNERS line: `owners` empty means the matching paths are explicitly unowned."""

    line: int
    pattern: str
    owners: tuple[Owner, ...]


@dataclass(frozen=True, slots=True)
class Problem:
    """A line GitHub would reject, skipped here as there, with why."""

    line: int
    text: str
    reason: str


class _RuleLookup:
    """What finding a path's rule takes: the index of candidate rules, each rule's regex compiled when it is
    first a candidate, and the last line of each pattern (for rules replaced later)."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self._rules = rules
        self._index = RuleIndex([rule.pattern for rule in rules])
        # Kept here rather than only in _regex's cache: a large file has more patterns than that cache holds.
        self._compiled: list[re.Pattern[str] | None] = [None] * len(rules)
        self.last_line_of_pattern = {rule.pattern: rule.line for rule in rules}

    def last_match(self, path: str) -> Rule | None:
        """The last rule matching the path."""
        for position in self._index.candidates(path):
            compiled = self._compiled[position]
            if compiled is None:
                compiled = self._compiled[position] = _regex(self._rules[position].pattern)
            if compiled.fullmatch(path) is not None:
                return self._rules[position]
        return None


@dataclass(frozen=True, slots=True)
class CodeOwners:
    """The rules of one CODEOWNERS file in file order, and the lines that were skipped."""

    rules: tuple[Rule, ...]
    problems: tuple[Problem, ...] = ()
    _lookup: _RuleLookup | None = field(default=None, init=False, repr=False, compare=False)

    def _rule_lookup(self) -> _RuleLookup:
        if self._lookup is None:
            object.__setattr__(self, "_lookup", _RuleLookup(self.rules))  # built on first use, parse() stays cheap
        assert self._lookup is not None
        return self._lookup

    def rule_for(self, path: str) -> Rule | None:
        """The rule that decides a file's owners: the last one matching it."""
        return self._rule_lookup().last_match(path.lstrip("/"))

    def directory_rule(self, directory: str) -> Rule | None:
        """The rule a new ordinary file directly inside the directory would get; rules naming particular
        files or extensions (`*.sql`) do not decide it."""
        segments = _directory_segments(directory)
        return self.rule_for("/".join((*segments, _ORDINARY_FILE)))

    def _covers(self, rule: Rule, directory: tuple[str, ...]) -> bool:
        if directory:
            return matches(rule.pattern, "/".join(directory) + "/")
        return matches(rule.pattern, _ORDINARY_FILE) and matches(rule.pattern, _ORDINARY_FILE + "/")

    def _replaced_later(self, rule: Rule) -> bool:
        """Whether later rules take every path this one matches: the same pattern again, or rules covering
        the directory its literal leading segments name (`/a/b/*.sql` lies wholly under `a/b`)."""
        if self._rule_lookup().last_line_of_pattern[rule.pattern] > rule.line:
            return True
        anchored, directory_only, segments = pattern_shape(rule.pattern)
        literal = list(itertools.takewhile(is_literal, segments)) if anchored else []
        if not literal:
            return False
        enclosure = "/".join(literal)
        covering = self.rule_for(enclosure + "/")
        if covering is None or covering.line <= rule.line:
            return False
        if directory_only or len(literal) < len(segments):
            return True  # nothing it matches is the enclosure itself
        itself = self.rule_for(enclosure)
        return itself is not None and itself.line > rule.line

    def partial_rules(self, directory: str) -> list[Rule]:
        """Rules that take over only some paths under the directory (a subdirectory, an extension, a file), in
        file order. Left out: the directory rule, and rules replaced later by a rule covering the whole
        directory, by the same pattern, or by a rule covering the directory they lie in."""
        segments = _directory_segments(directory)
        deciding = self.directory_rule(directory)
        partial: list[Rule] = []
        for rule in reversed(self.rules):
            if self._covers(rule, segments):
                break
            if rule is not deciding and _reaches_under(rule.pattern, segments) and not self._replaced_later(rule):
                partial.append(rule)
        partial.reverse()
        return partial


def _line_rule(number: int, line: str) -> Rule | Problem | None:
    """The rule one line holds, the problem that makes GitHub skip it, or None for a blank or comment line."""
    words = _WORDS.findall(line)
    if not words or words[0].startswith("#"):
        return None
    pattern = words[0][1:] if words[0].startswith("\\#") else words[0]
    handles: list[str] = []
    for word in words[1:]:
        if word.startswith("#"):
            break  # a trailing comment
        handles.append(word)

    def problem(reason: str) -> Problem:
        return Problem(number, line[:_PROBLEM_TEXT_LIMIT], reason)

    if pattern.startswith("!"):
        return problem("negation ('!') is not supported in CODEOWNERS")
    if "[" in pattern:
        return problem("character ranges ('[ ]') are not supported in CODEOWNERS")
    if _CONTROL.search(pattern):
        return problem("the pattern contains a control character")
    if not handles and owner(pattern) is not None:
        return problem(f"the line holds only the owner {pattern!r}, no path pattern")
    owners: list[Owner] = []
    for handle in handles:
        named = owner(handle)
        if named is None:
            return problem(f"owner {handle!r} is not @user, @org/team or an e-mail address")
        owners.append(named)
    return Rule(number, pattern, tuple(owners))


def parse(text: str) -> CodeOwners:
    """Read a CODEOWNERS document (LF or CRLF, optional BOM); never raises, and keeps going past bad lines.

    >>> codeowners = parse("* @corvid/platform\\n*.sql dba@corvid.example\\n!vendor/ @ada\\n")
    >>> codeowners.rule_for("services/skyline/schema.sql").owners[0].name
    'dba@corvid.example'
    >>> codeowners.problems[0].line, codeowners.problems[0].reason
    (3, "negation ('!') is not supported in CODEOWNERS")
    """
    rules: list[Rule] = []
    problems: list[Problem] = []
    for number, raw in enumerate(text.removeprefix("\ufeff").split("\n"), start=1):
        read = _line_rule(number, raw.removesuffix("\r"))
        if isinstance(read, Rule):
            rules.append(read)
        elif isinstance(read, Problem):
            problems.append(read)
    return CodeOwners(tuple(rules), tuple(problems))
