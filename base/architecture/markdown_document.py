"""A Markdown document read as structure, for the memory rules in memory_docs.py to work on: its sections by
heading (each given a key such as "decision" or "root-cause"), its metadata (front matter, "Key: value" lines,
table rows), its paragraphs, list items and rows as prose blocks, its signed comments, and the dates it writes.
Kept apart so that the rules read what a document says, not how Markdown spells it."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date as _date
from types import MappingProxyType

from tracegraph.base.temporal.dates import path_date

# ---------------------------------------------------------------- dates

_MONTHS = {name: number for number, names in enumerate(
    ("jan january", "feb february", "mar march", "apr april", "may", "jun june", "jul july", "aug august",
     "sep sept september", "oct october", "nov november", "dec december"), start=1) for name in names.split()}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE = re.compile(
    r"(?<!\d)(?P<iy>\d{4})([-/.])(?P<im>\d{1,2})\2(?P<id>\d{1,2})(?!\d)"
    r"|(?<![\d.])(?P<nd>\d{1,2})([/.])(?P<nm>\d{1,2})\6(?P<ny>\d{4})(?!\d)"  # day first: 28/03/2018, 25.05.2020
    rf"|\b(?P<dd>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dm>{_MONTH})\.?,?\s+(?P<dy>\d{{4}})\b"
    rf"|\b(?P<mm>{_MONTH})\.?\s+(?P<md>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<my>\d{{4}})\b", re.IGNORECASE)
MONTH_NAMES = frozenset(_MONTHS)  # lower case, abbreviations too


def dates_in(text: str) -> list[str]:
    """Every valid date of `text` as YYYY-MM-DD, in order.

    >>> dates_in("2024-06-20, 20th June 2024, Jun 20, 2024, 20/06/2024 and 2024-02-30 (no such day)")
    ['2024-06-20', '2024-06-20', '2024-06-20', '2024-06-20']
    """
    found = []
    for m in _DATE.finditer(text):
        year, month, day = ((m["iy"], m["im"], m["id"]) if m["iy"] else (m["ny"], m["nm"], m["nd"]) if m["ny"]
                            else (m["dy"], m["dm"], m["dd"]) if m["dy"] else (m["my"], m["mm"], m["md"]))
        try:
            found.append(_date(int(year), int(_MONTHS.get(month.lower(), month)), int(day)).isoformat())
        except ValueError:
            continue  # "2024-02-30" looks like a date and is none
    return found


def parse_date(text: str) -> str:
    """The first date of `text` as YYYY-MM-DD, else "".

    >>> parse_date("Decided on June 20, 2024"), parse_date("last spring")
    ('2024-06-20', '')
    """
    return next(iter(dates_in(text)), "")


# ---------------------------------------------------------------- the document: sections and metadata

_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
# "- **Impact**:" alone on its line, its items nested under it: a section as some incident logs write them.
_LABEL_ITEM = re.compile(r"^ {0,3}([-*+])\s+(?:\*\*|__)([^*_:]{2,40}?):?(?:\*\*|__):?\s*$")
_LABEL_LEVEL = 7  # below every heading
_FENCE = re.compile(r"^\s*(```|~~~)")
_SECTION_KEYS = tuple((key, re.compile(pattern)) for key, pattern in (
    ("metadata", r"^(?:metadata|meta|details|document (?:info|details)|properties)$"),
    ("status", r"^status\b"),
    ("options", r"considered options|options considered|alternatives|pros and cons|decision drivers|^options\b"),
    ("decision", r"^(?:the |our )?decision\b|decision outcome|^outcome\b"),
    ("consequences", r"consequences|implications|trade-?offs"),
    ("context", r"context|problem statement|background|motivation"),
    ("exceptions", r"\bexceptions?\b|\bexemptions?\b|\bwaivers?\b"),
    ("lessons", r"lessons?|learn(?:ed|t|ings)|takeaways"),
    ("root-cause", r"root[ -]?causes?|^causes?\b|contributing factors|^trigger|what went wrong"),
    ("action-items", r"action items?|follow[- ]?ups?|remediations?|corrective actions?|next steps|^actions\b"),
    ("impact", r"impact"),
    ("timeline", r"timeline|key events|chronology"),
    ("resolution", r"^resolution|^resolved|^recovery|^mitigation"),
    ("summary", r"summary|overview|what happened|tl;?dr"),
    ("incident", r"incident|outage"),
))
_META_LINE = re.compile(r"^\s*(?:[-*+]\s+)?(?P<key>[A-Za-z][A-Za-z ()/_-]{0,30}?)\s*:\s*(?P<value>\S.*)$")
_META_ROW = re.compile(r"^\s*\|\s*(?P<key>[A-Za-z][A-Za-z ()/_-]{0,30}?)\s*:?\s*\|\s*(?P<value>[^|]*\S)\s*\|")
_META_KEYS = {"date": "date", "created": "date", "decided": "date", "decision date": "date", "incident date": "date",
              "status": "status", "title": "title", "author": "author", "authors": "author", "written by": "author",
              "reported by": "author", "deciders": "deciders", "decision makers": "deciders", "owner": "owner",
              "owners": "owner", "incident owner": "owner"}
_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _plain(line: str) -> str:
    """A Markdown line as prose: no list marker, quote, heading mark, emphasis, code ticks, link target or tag."""
    line = re.sub(r"^\s*(?:>\s*)+", "", line)
    line = re.sub(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?", "", line)
    return _inline(re.sub(r"^\s*#{1,6}\s+", "", line))


def _inline(text: str) -> str:
    """Text without emphasis, code ticks, link targets or tags, on one line."""
    text = re.sub(r"!?\[([^\]\n]*)\]\([^)\n]*\)", r"\1", text)
    text = re.sub(r"\*\*|__|~~|`|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)|<!--.*?-->|</?[A-Za-z][^<>\n]{0,80}>", "", text)
    return " ".join(text.split())


def _section_key(heading: str) -> str | None:
    words = re.sub(r"^[\d.)\s]+|[:\s]+$", "", _inline(heading).lower())
    return next((key for key, pattern in _SECTION_KEYS if pattern.search(words)), None)


@dataclass(frozen=True, slots=True)
class Section:
    """The lines under one heading, up to the next heading of any level."""

    key: str  # from _SECTION_KEYS; "preamble" before the first section, "other" for the rest
    heading: str
    line: int
    body: tuple[tuple[int, str], ...]  # (line number, raw line), fenced code left out


@dataclass(frozen=True, slots=True)
class Document:
    """A document's sections in order, its title and its metadata ("date", "status", "author", …), with the
    lines that held the metadata, which are left out of its prose."""

    title: str
    title_line: int
    sections: tuple[Section, ...]
    meta: Mapping[str, str]
    meta_lines: frozenset[int]

    def of(self, *keys: str) -> list[Section]:
        return [s for s in self.sections if s.key in keys]

    def blocks(self, *keys: str) -> list[tuple[int, str]]:
        """The paragraphs, list items and table rows of the sections with these keys, as (line, prose)."""
        return [b for s in self.of(*keys) for b in body_blocks(s.body, self.meta_lines)]

    def prose(self, *keys: str) -> str:
        return _joined(self.blocks(*keys))

    def spans(self, *keys: str) -> list[tuple[int, int, str]]:
        """The blocks of the sections with these keys as (first line, last line, prose)."""
        return [b for s in self.of(*keys) for b in block_spans(s.body, self.meta_lines)]

    def first_line(self, *keys: str) -> int:
        return next((s.line for s in self.of(*keys)), self.title_line)


def read_document(text: str, title: str = "") -> Document:
    """The structure of a Markdown `text`; `title` names a document without a first-level heading or a title
    in its metadata."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    front, start = _front_matter(lines)
    sections: list[Section] = []
    key, heading, line, body = "preamble", "", start + 1, []
    h1, h1_line, stack, fenced = "", 1, [], False
    for index in range(start, len(lines)):
        raw = lines[index]
        if _FENCE.match(raw):
            fenced = not fenced
            continue
        found = None if fenced else _HEADING.match(raw) or _LABEL_ITEM.match(raw)
        if found is None:
            if not fenced:
                body.append((index + 1, raw))
            continue
        level = len(found.group(1)) if found.re is _HEADING else _LABEL_LEVEL
        text_of_heading = _inline(found.group(2))
        own = _section_key(text_of_heading)
        if level == 1 and not h1 and not sections and (own is None or ":" in text_of_heading
                                                        or len(text_of_heading.split()) > 3):  # not "# Context"
            h1, h1_line = text_of_heading, index + 1
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        sections.append(Section(key, heading, line, tuple(body)))
        key = own or (stack[-1][1] if stack else "other")  # "### Option A" under "## Considered Options"
        stack.append((level, key))
        heading, line, body = text_of_heading, index + 1, []
    sections.append(Section(key, heading, line, tuple(body)))
    meta, meta_lines = dict(front), set()
    for section in sections:
        if section.key in ("preamble", "metadata", "status"):
            for number, raw in section.body:
                found = _META_LINE.match(raw.replace("**", "").replace("__", "")) or _META_ROW.match(raw)
                name = _META_KEYS.get(found["key"].lower().replace("(s)", "s").strip()) if found else None
                if name:
                    meta.setdefault(name, _plain(found["value"]))
                    meta_lines.add(number)
    title = h1 or meta.get("title", "") or title.strip()
    return Document(title, h1_line if h1 else 1, tuple(sections), MappingProxyType(meta), frozenset(meta_lines))


def _front_matter(lines: list[str]) -> tuple[dict[str, str], int]:
    """YAML-ish front matter between "---" lines at the top (or TOML between "+++" lines): (normalised key →
    value, first line after it)."""
    if lines and lines[0].strip() == "+++":
        return _toml_front_matter(lines)
    if not lines or lines[0].strip() != "---":
        return {}, 0
    end = next((k for k in range(1, min(len(lines), 60)) if lines[k].strip() in ("---", "...")), None)
    if end is None:
        return {}, 0
    meta: dict[str, str] = {}
    last = ""
    for raw in lines[1:end]:
        item = re.match(r"^\s+-\s+(.+)$", raw)
        if item and last:  # "authors:" followed by "  - Ada Kern"
            meta[last] = ", ".join(filter(None, (meta.get(last, ""), item.group(1).strip(" '\""))))
            continue
        found = re.match(r"^([A-Za-z][\w ()-]{0,30}?)\s*:\s*(.*)$", raw)
        last = _META_KEYS.get(found.group(1).lower().replace("(s)", "s").strip(), "") if found else ""
        if last and last not in meta:
            meta[last] = found.group(2).strip().strip("[]").replace("'", "").replace('"', "")
        elif last:
            last = ""
    return meta, end + 1


def _toml_front_matter(lines: list[str]) -> tuple[dict[str, str], int]:
    """Hugo/Zola front matter: its title, date and authors (a dated `path` gives the date)."""
    end = next((k for k in range(1, min(len(lines), 80)) if lines[k].strip() == "+++"), None)
    if end is None:
        return {}, 0
    try:
        data = tomllib.loads("\n".join(lines[1:end]))
    except tomllib.TOMLDecodeError:
        return {}, end + 1
    meta: dict[str, str] = {}
    for key, value in data.items():
        name = _META_KEYS.get(str(key).lower())
        if name and not isinstance(value, dict):
            meta.setdefault(name, ", ".join(map(str, value)) if isinstance(value, list) else str(value))
    if "date" not in meta and (dated := path_date(str(data.get("path", "")))):
        meta["date"] = dated[:10]
    return meta, end + 1


def body_blocks(body: Iterable[tuple[int, str]], skip: frozenset[int] = frozenset()) -> list[tuple[int, str]]:
    """Paragraphs (joined lines), list items (with their continuation and sub-items) and table rows."""
    lines = [(n, raw) for n, raw in body if n not in skip]
    blocks: list[list] = []
    current, indent = None, -1
    for k, (number, raw) in enumerate(lines):
        if not raw.strip() or _TABLE_RULE.match(raw):
            current = None if not raw.strip() and (indent < 0 or not _continues(lines, k, indent)) else current
            continue
        if raw.lstrip().startswith("|"):
            if not (k + 1 < len(lines) and _TABLE_RULE.match(lines[k + 1][1])):  # a header row names columns
                cells = [_plain(c) for c in raw.strip().strip("|").split("|")]
                blocks.append([number, [", ".join(c for c in cells if c)]])
            current = None
            continue
        item = _LIST_ITEM.match(raw)
        if current is None or (item and (indent < 0 or len(item.group(1)) <= indent)):
            current, indent = [number, []], len(item.group(1)) if item else -1
            blocks.append(current)
        current[1].append(_plain(raw))
    return [(number, " ".join(t for t in texts if t)) for number, texts in blocks if any(texts)]


def block_spans(body: Sequence[tuple[int, str]], skip: frozenset[int] = frozenset()) -> list[tuple[int, int, str]]:
    """body_blocks with the last line of each: (first line, last line, prose). A block ends at the last
    written line before the next block begins.

    >>> block_spans([(3, "- One,"), (4, "  more."), (5, ""), (6, "- Two")])
    [(3, 4, 'One, more.'), (6, 6, 'Two')]
    """
    blocks = body_blocks(body, skip)
    written = [n for n, raw in body if raw.strip() and n not in skip]
    spans = []
    for k, (first, prose) in enumerate(blocks):
        following = blocks[k + 1][0] if k + 1 < len(blocks) else None
        spans.append((first, max(n for n in written if first <= n and (following is None or n < following)), prose))
    return spans


def _continues(lines: list[tuple[int, str]], k: int, indent: int) -> bool:
    """Whether the list item open at a blank line goes on after it (its next line is indented deeper)."""
    after = next((raw for _, raw in lines[k + 1:] if raw.strip()), "")
    return len(after) - len(after.lstrip()) > indent


def _joined(blocks: Iterable[tuple[int, str]]) -> str:
    """Blocks as running prose: a list item without a full stop still ends its sentence."""
    return " ".join(t if t[-1] in ".!?:;…" else t + "." for _, t in blocks if t)


# ---------------------------------------------------------------- signed comments

_AUTHOR = r"(?P<author>@\w[\w.-]*(?:/[\w.-]+)?|[A-Z][\w.'’-]*(?:[ \t]+[A-Z][\w.'’-]*){0,3})"
_LISTED = re.compile(r"^\s*[-*+]\s+" + _AUTHOR + r"\s*(?:\((?P<when>[^()\n]{4,40})\)|,\s*(?P<when2>[^:\n]{4,40}?)"
                     r"|\s+on\s+(?P<when3>[^:\n]{4,40}?))?\s*(?:wrote|said|commented)?\s*[:—–]\s*(?P<text>\S.*)$")
_ATTRIBUTION = re.compile(r"(?:^|\s)(?:—|–|--|~)\s*" + _AUTHOR + r"\s*(?:(?:,|\bon\b|\()\s*(?P<when>[^()\n]{0,40}?)"
                          r"\)?)?\s*$")
_HEADED = re.compile(r"^(?i:review\s+)?(?i:comments?)\s+(?i:by|from)\s+" + _AUTHOR +
                     r"(?:\s*(?:,|\bon\b|\()\s*(?P<when>[^()]{4,40}?)\)?)?\s*$")


@dataclass(frozen=True, slots=True)
class Comment:
    """One comment with its author as signed and its date as YYYY-MM-DD (or "")."""

    line: int
    author: str
    date: str
    text: str


def signed_comments(document: Document) -> list[Comment]:
    """Comments written as "- **@ada** (DATE): …", as a quote ending "— Ada Kern, DATE", or under a
    "## Comment by X on DATE" heading."""
    found: list[Comment] = []
    for section in document.sections:
        headed = _HEADED.match(section.heading)
        if headed:
            found.append(Comment(section.line, headed["author"], parse_date(headed["when"] or ""),
                                 _joined(body_blocks(section.body))))
        else:
            found += _inline_comments(list(section.body))
    return [c for c in found if c.text]


def _inline_comments(body: list[tuple[int, str]]) -> list[Comment]:
    found: list[Comment] = []
    k = 0
    while k < len(body):
        number, raw = body[k]
        listed = _LISTED.match(raw.replace("**", "").replace("__", ""))
        when = listed and (listed["when"] or listed["when2"] or listed["when3"] or "")
        if listed and (listed["author"].startswith("@") or parse_date(when)):
            texts, k = [_plain(listed["text"])], k + 1
            while k < len(body) and body[k][1].strip() and not _LIST_ITEM.match(body[k][1]) and \
                    not _HEADING.match(body[k][1]):
                texts.append(_plain(body[k][1]))
                k += 1
            found.append(Comment(number, listed["author"], parse_date(when), " ".join(texts)))
            continue
        if raw.lstrip().startswith(">"):
            start = k
            while k < len(body) and body[k][1].lstrip().startswith(">"):
                k += 1
            quote = " ".join(_plain(raw) for _, raw in body[start:k])
            signed = _ATTRIBUTION.search(quote)
            after = _plain(re.sub(r"^\s*-\s", "— ", body[k][1])) if k < len(body) and not signed else ""
            if not signed and (signed := _ATTRIBUTION.match(after)):
                k += 1
                quote += " " + after
            if signed:
                found.append(Comment(number, signed["author"], parse_date(signed["when"] or ""),
                                     quote[:quote.rfind(signed.group(0))].strip()))
            continue
        k += 1
    return found

