"""Institutional memory from Markdown, by rules (no model on this machine): an ADR gives a decision, a
post-mortem a failure pattern and its lessons, review comments one memory each, and a sentence granting
an exception to a policy an exception; each names the entities it touches, with its author and date."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date as _date
from types import MappingProxyType
from typing import Literal

from tracegraph.base.retrieval.names import question_names

ADR, POSTMORTEM, REVIEW = "text/x-adr", "text/x-postmortem", "text/x-review-comments"
DocumentKind = Literal["adr", "postmortem", "review-comments"]
RecordKind = Literal["decision", "failure-pattern", "exception", "memory"]
RECORD_KINDS: tuple[RecordKind, ...] = ("decision", "failure-pattern", "exception", "memory")
FIELDS = ("rationale", "consequence", "root-cause", "impact", "action-items", "policy")
RELATIONS = ("why", "affected", "caused-by", "excepts", "concerns")
GIST_LIMIT = 800  # characters of a record's text: enough for a decision, short enough to show in an answer
_DECLARED: dict[str, DocumentKind] = {ADR: "adr", "adr": "adr", POSTMORTEM: "postmortem", "postmortem": "postmortem",
                                      "post-mortem": "postmortem", REVIEW: "review-comments",
                                      "review-comments": "review-comments"}


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One remembered thing. `fields` keys are FIELDS ("action-items" holds one item per line);
    `relations` maps RELATIONS to entity names as the document writes them."""

    kind: RecordKind
    title: str
    text: str
    line: int
    author: str = ""
    date: str = ""
    status: str = ""
    fields: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    relations: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        # Read-only all the way down: a record handed on cannot change under its reader; empty entries dropped.
        object.__setattr__(self, "fields", MappingProxyType({k: v for k, v in self.fields.items() if v}))
        object.__setattr__(self, "relations", MappingProxyType({k: tuple(v) for k, v in self.relations.items() if v}))


# ---------------------------------------------------------------- dates, statuses, names, gists

_MONTHS = {name: number for number, names in enumerate(
    ("jan january", "feb february", "mar march", "apr april", "may", "jun june", "jul july", "aug august",
     "sep sept september", "oct october", "nov november", "dec december"), start=1) for name in names.split()}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE = re.compile(
    r"(?<!\d)(?P<iy>\d{4})([-/.])(?P<im>\d{1,2})\2(?P<id>\d{1,2})(?!\d)"
    rf"|\b(?P<dd>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dm>{_MONTH})\.?,?\s+(?P<dy>\d{{4}})\b"
    rf"|\b(?P<mm>{_MONTH})\.?\s+(?P<md>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<my>\d{{4}})\b", re.IGNORECASE)
_STATUSES = {"accepted": "accepted", "approved": "accepted", "adopted": "accepted", "proposed": "proposed",
             "draft": "proposed", "superseded": "superseded", "deprecated": "deprecated", "rejected": "rejected",
             "declined": "rejected"}
_STATUS = re.compile(r"\b(" + "|".join(_STATUSES) + r")\b", re.IGNORECASE)


def dates_in(text: str) -> list[str]:
    """Every valid date of `text` as YYYY-MM-DD, in order.

    >>> dates_in("2024-06-20, 20th June 2024, Jun 20, 2024 and 2024-02-30 (no such day)")
    ['2024-06-20', '2024-06-20', '2024-06-20']
    """
    found = []
    for m in _DATE.finditer(text):
        year, month, day = ((m["iy"], m["im"], m["id"]) if m["iy"] else (m["dy"], m["dm"], m["dd"]) if m["dy"]
                            else (m["my"], m["mm"], m["md"]))
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


def normalise_status(text: str) -> str:
    """An ADR status in lower case (accepted, proposed, superseded, deprecated, rejected), else "".

    >>> normalise_status("**Superseded** by ADR 0009"), normalise_status("Approved"), normalise_status("n/a")
    ('superseded', 'accepted', '')
    """
    found = _STATUS.search(text)
    return _STATUSES[found.group(1).lower()] if found else ""


def _name_pattern(name: str) -> str | None:
    """A name's words in order, separated by any spacing, hyphens or underscores, as whole words."""
    words = re.findall(r"[^\W_]+", name)
    return r"(?<![^\W_])" + r"[\s_-]+".join(map(re.escape, words)) + r"(?![^\W_])" if words else None


def find_name(name: str, text: str) -> str:
    """`name` as `text` writes it (case, spacing and hyphens aside), else "".

    >>> find_name("storage gateway", "Uploads go through the Storage-Gateway."), find_name("Orbis", "Orbital")
    ('Storage-Gateway', '')
    """
    pattern = _name_pattern(name)
    found = re.search(pattern, text, re.IGNORECASE) if pattern else None
    return found.group(0) if found else ""


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def gist(text: str, limit: int = GIST_LIMIT) -> str:
    """`text` on one line, cut after its last whole sentence within `limit` characters (a sentence
    longer than that is cut at a word, with "…").

    >>> gist("One. Two three. Four", 12), gist("abc def ghi", 8)
    ('One.', 'abc def…')
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, limit)]
    if ends:
        return text[:ends[-1]]
    cut = text.rfind(" ", 0, limit)
    return text[:cut if cut > 0 else limit - 1].rstrip() + "…"


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[^\s a-z])", text) if s.strip()]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Lower-case forms of words that start a sentence or name a section, never an entity on their own.
_OPENERS = _words("""a an the this that these those it its we our us they their he she you your i my all any
each every some most many no not yes and or but so yet if then when while once since after before because
however although though therefore thus hence also instead additionally moreover finally first second third
next last currently previously today now later there here as at by for from in into of on to via with within
without per during until use using keep adopt migrate move add remove deprecate replace introduce switch choose
run deploy store route build create enable disable allow require ensure make set stop start split merge retire
prefer avoid do don't never always see note please good bad neutral positive negative pros cons chosen
customers users engineers team teams""")
_SECTION_WORDS = _words("""context decision decisions outcome status consequence consequences summary impact
root cause causes action actions item items timeline lesson lessons learned learnt incident postmortem post-mortem
considered option options drivers background problem statement exception exceptions overview detection
resolution recovery trigger follow-up follow-ups notes references links comment comments review adr rfc pr
accepted proposed superseded deprecated rejected draft approved date author authors deciders owner owners title
tbd todo fixme n/a utc gmt pst pdt est edt cet cest bst sev sev0 sev1 sev2 sev3 p0 p1 p2 p3 ok etc""")
_CALENDAR = frozenset(_MONTHS) | _words("monday tuesday wednesday thursday friday saturday sunday")
_CONNECTORS = _words("of the a an de la von van der for")
_GROUP = re.compile(r"\s+(?:team|squad|guild|org)\b")  # "Grid Analytics team" names the team, not a product
_AT_SENTENCE_START = re.compile(r"(?:^|[.!?:;—–])[\W_]*$")
# A document's lists and asides, unlike a question's titles: "Kafka for the Ledger" is two names and
# "Nimbus (exception to …)" one.
_BETWEEN_NAMES = re.compile(r"\s+(?:and|or|for|with|the|an?)\s+")
_SUBJECT_VERBS = _words("""is was are were has had have will would should can could must may might shall does did
needs owns runs uses depends calls reads writes serves handles stores sends keeps stays fails failed""")
_ASIDE = re.compile(r"\s*\([^()]*\)$")


class _Names:
    """Entity names of a document's passages: capitalised runs (as questions are read, then trimmed of
    what opens a sentence in a document) and the caller's known names, each as the document writes it."""

    def __init__(self, document: str, known: Iterable[str]) -> None:
        prose = re.sub(r"`[^`\n]*`", " ", document)  # "`skyline`" in code does not make "Skyline" a common word
        self._common = frozenset(re.findall(r"(?<![\w/.@-])[a-z][a-z']+(?![\w/.@-])", prose))
        self._capitalised = frozenset(re.findall(r"(?<=[\w,;)] )[A-Z][\w'’-]*", prose))  # inside a sentence
        patterns = sorted({p for name in known if (p := _name_pattern(str(name)))}, key=len, reverse=True)
        self._known = re.compile("|".join(patterns), re.IGNORECASE) if patterns else None

    def __call__(self, *texts: str) -> list[str]:
        names: dict[str, str] = {}
        for text in texts:
            for sentence in _sentences(text):
                for name in self._runs(sentence):
                    names.setdefault(name.casefold(), name)
            for m in self._known.finditer(text) if self._known else ():
                names.setdefault(m.group(0).casefold(), m.group(0))
        return list(names.values())

    def _runs(self, sentence: str) -> Iterator[str]:
        for found in question_names(sentence):
            at = sentence.find(found)
            parts = _BETWEEN_NAMES.split(_ASIDE.sub("", found))
            for k, part in enumerate(parts):
                words = part.split()
                opening = k == 0 and (at < 0 or bool(_AT_SENTENCE_START.search(sentence[:at])))
                lone = opening and len(words) == 1  # "Agreed, …", "Moving it …": capitalised as a sentence start
                while words and (words[0].lower() in _CONNECTORS | _CALENDAR or (opening and self._opener(words[0]))):
                    words = words[1:]
                while words and words[-1].lower() in _CONNECTORS:
                    words = words[:-1]
                if not self._named(words) or (lone and self._common_word(words[0], sentence[at + len(found):])):
                    continue
                group = _GROUP.match(sentence, at + len(found)) if at >= 0 and k == len(parts) - 1 else None
                yield " ".join(words) + (group.group(0) if group else "")

    def _common_word(self, word: str, after: str) -> bool:
        """A lone capitalised word opening a sentence is an ordinary word ("Agreed, …") unless the document
        capitalises it inside a sentence too, it is spelt like a name ("CockroachDB"), or a verb follows it."""
        following = after.split()[:1]
        return word not in self._capitalised and word[1:].islower() and \
            not (following and following[0] in _SUBJECT_VERBS)

    def _opener(self, word: str) -> bool:
        low = word.lower()
        return low in _OPENERS or (low in self._common and not word.isupper())

    @staticmethod
    def _named(words: list[str]) -> bool:
        bare = [w.lower().strip(".,'’") for w in words]
        if not bare or all(w in _SECTION_WORDS | _CALENDAR | _CONNECTORS or w.isdigit() for w in bare):
            return False
        return len(" ".join(words)) >= 2 and not parse_date(" ".join(words))


# ---------------------------------------------------------------- the document: sections and metadata

_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
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
    ("root-cause", r"root[ -]?causes?|^causes?\b|contributing factors"),
    ("action-items", r"action items?|follow[- ]?ups?|remediations?|corrective actions?|next steps|^actions\b"),
    ("impact", r"impact"),
    ("timeline", r"timeline"),
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
class _Section:
    key: str  # from _SECTION_KEYS; "preamble" before the first section, "other" for the rest
    heading: str
    line: int
    body: tuple[tuple[int, str], ...]  # (line number, raw line), fenced code left out


@dataclass(frozen=True, slots=True)
class _Document:
    title: str
    title_line: int
    sections: tuple[_Section, ...]
    meta: Mapping[str, str]
    meta_lines: frozenset[int]

    def of(self, *keys: str) -> list[_Section]:
        return [s for s in self.sections if s.key in keys]

    def blocks(self, *keys: str) -> list[tuple[int, str]]:
        """The paragraphs, list items and table rows of the sections with these keys, as (line, prose)."""
        return [b for s in self.of(*keys) for b in _blocks(s.body, self.meta_lines)]

    def prose(self, *keys: str) -> str:
        return _joined(self.blocks(*keys))

    def first_line(self, *keys: str) -> int:
        return next((s.line for s in self.of(*keys)), self.title_line)


def _read(text: str, title: str = "") -> _Document:
    lines = [line.rstrip("\r") for line in text.split("\n")]
    front, start = _front_matter(lines)
    sections: list[_Section] = []
    key, heading, line, body = "preamble", "", start + 1, []
    h1, h1_line, stack, fenced = "", 1, [], False
    for index in range(start, len(lines)):
        raw = lines[index]
        if _FENCE.match(raw):
            fenced = not fenced
            continue
        found = None if fenced else _HEADING.match(raw)
        if found is None:
            if not fenced:
                body.append((index + 1, raw))
            continue
        level, text_of_heading = len(found.group(1)), _inline(found.group(2))
        own = _section_key(text_of_heading)
        if level == 1 and not h1 and not sections and (own is None or ":" in text_of_heading
                                                        or len(text_of_heading.split()) > 3):  # not "# Context"
            h1, h1_line = text_of_heading, index + 1
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        sections.append(_Section(key, heading, line, tuple(body)))
        key = own or (stack[-1][1] if stack else "other")  # "### Option A" under "## Considered Options"
        stack.append((level, key))
        heading, line, body = text_of_heading, index + 1, []
    sections.append(_Section(key, heading, line, tuple(body)))
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
    return _Document(title, h1_line if h1 else 1, tuple(sections), MappingProxyType(meta), frozenset(meta_lines))


def _front_matter(lines: list[str]) -> tuple[dict[str, str], int]:
    """YAML-ish front matter between "---" lines at the top: (normalised key → value, first line after it)."""
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


def _blocks(body: Iterable[tuple[int, str]], skip: frozenset[int] = frozenset()) -> list[tuple[int, str]]:
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


def _continues(lines: list[tuple[int, str]], k: int, indent: int) -> bool:
    """Whether the list item open at a blank line goes on after it (its next line is indented deeper)."""
    after = next((raw for _, raw in lines[k + 1:] if raw.strip()), "")
    return len(after) - len(after.lstrip()) > indent


def _joined(blocks: Iterable[tuple[int, str]]) -> str:
    """Blocks as running prose: a list item without a full stop still ends its sentence."""
    return " ".join(t if t[-1] in ".!?:;…" else t + "." for _, t in blocks if t)


# ---------------------------------------------------------------- review comments

_AUTHOR = r"(?P<author>@\w[\w.-]*(?:/[\w.-]+)?|[A-Z][\w.'’-]*(?:[ \t]+[A-Z][\w.'’-]*){0,3})"
_LISTED = re.compile(r"^\s*[-*+]\s+" + _AUTHOR + r"\s*(?:\((?P<when>[^()\n]{4,40})\)|,\s*(?P<when2>[^:\n]{4,40}?)"
                     r"|\s+on\s+(?P<when3>[^:\n]{4,40}?))?\s*(?:wrote|said|commented)?\s*[:—–]\s*(?P<text>\S.*)$")
_ATTRIBUTION = re.compile(r"(?:^|\s)(?:—|–|--|~)\s*" + _AUTHOR + r"\s*(?:(?:,|\bon\b|\()\s*(?P<when>[^()\n]{0,40}?)"
                          r"\)?)?\s*$")
_HEADED = re.compile(r"^(?i:review\s+)?(?i:comments?)\s+(?i:by|from)\s+" + _AUTHOR +
                     r"(?:\s*(?:,|\bon\b|\()\s*(?P<when>[^()]{4,40}?)\)?)?\s*$")


@dataclass(frozen=True, slots=True)
class _Comment:
    line: int
    author: str
    date: str
    text: str


def _comments(document: _Document) -> list[_Comment]:
    """Comments written as "- **@ada** (DATE): …", as a quote ending "— Ada Kern, DATE", or under a
    "## Comment by X on DATE" heading."""
    found: list[_Comment] = []
    for section in document.sections:
        headed = _HEADED.match(section.heading)
        if headed:
            found.append(_Comment(section.line, headed["author"], parse_date(headed["when"] or ""),
                                  _joined(_blocks(section.body))))
        else:
            found += _inline_comments(list(section.body))
    return [c for c in found if c.text]


def _inline_comments(body: list[tuple[int, str]]) -> list[_Comment]:
    found: list[_Comment] = []
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
            found.append(_Comment(number, listed["author"], parse_date(when), " ".join(texts)))
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
                found.append(_Comment(number, signed["author"], parse_date(signed["when"] or ""),
                                      quote[:quote.rfind(signed.group(0))].strip()))
            continue
        k += 1
    return found


# ---------------------------------------------------------------- recognising a document

_ADR_MARKS = frozenset({"status", "context", "decision", "consequences", "options"})
_POSTMORTEM_MARKS = frozenset({"summary", "impact", "root-cause", "action-items", "timeline", "lessons", "incident"})
_ADR_TITLE = re.compile(r"\bADR\b|architecture decision|decision record", re.IGNORECASE)
_POSTMORTEM_TITLE = re.compile(r"post[- ]?mortem|incident|outage|retrospective|\bRCA\b", re.IGNORECASE)


def recognise(text: str, kind: str = "text/markdown") -> DocumentKind | None:
    """What kind of memory document `text` is: by the declared `kind`, else by its sections (ADR,
    post-mortem) or its signed comments; None for anything else.

    >>> recognise("# X\\n## Status\\nAccepted\\n## Context\\nWhy.\\n## Decision\\nDo it.")
    'adr'
    >>> recognise("Just a paragraph of prose."), recognise("anything", "text/x-postmortem")
    (None, 'postmortem')
    """
    return _recognised(_read(text), kind)


def _recognised(document: _Document, kind: str) -> DocumentKind | None:
    if kind.strip().lower() in _DECLARED:
        return _DECLARED[kind.strip().lower()]
    keys = {s.key for s in document.sections}
    adr = len(keys & _ADR_MARKS) + ("status" in document.meta and "status" not in keys) \
        + bool(_ADR_TITLE.search(document.title))
    titled = bool(_POSTMORTEM_TITLE.search(document.title))
    postmortem = len(keys & _POSTMORTEM_MARKS) + titled
    if "decision" in keys and adr >= 3 and adr >= postmortem:
        return "adr"
    if postmortem >= 3 and (titled or keys & {"impact", "root-cause", "timeline", "incident"}):
        return "postmortem"
    comments = _comments(document)
    if len(comments) >= 2 or any(c.date for c in comments):
        return "review-comments"
    return None


# ---------------------------------------------------------------- records

def extract(text: str, kind: str = "text/markdown", *, title: str = "",
            known_names: Iterable[str] = ()) -> list[MemoryRecord]:
    """The memory records of a document (none when `recognise` finds it is not one). `title` names a
    document without a heading; `known_names` are entity names to find whatever their case."""
    document = _read(text, title)
    names = _Names(text, known_names)
    read = {"adr": _decision, "postmortem": _failure, "review-comments": _review}.get(_recognised(document, kind))
    return [r for r in read(document, names) if r.text or r.title] if read else []


def _author(document: _Document) -> str:
    return next((document.meta[k] for k in ("author", "deciders", "owner") if document.meta.get(k)), "")


def _decision(document: _Document, names: _Names) -> list[MemoryRecord]:
    decision = document.prose("decision") or document.prose("preamble", "other")
    context, consequences = document.prose("context"), document.prose("consequences")
    stated = " ".join([*(s.heading for s in document.of("status")), document.prose("status")])
    status = normalise_status(document.meta.get("status", "") or stated)
    when = parse_date(document.meta.get("date", "")) or parse_date(stated) or parse_date(document.prose("preamble"))
    why = names(document.title, decision)
    record = MemoryRecord(
        "decision", document.title or _headline(decision), gist(decision), document.first_line("decision"),
        _author(document), when, status, {"rationale": gist(context), "consequence": gist(consequences)},
        {"why": why, "concerns": _others(names(context, consequences), why)})
    return [record, *_exceptions(document, names, record)]


def _failure(document: _Document, names: _Names) -> list[MemoryRecord]:
    summary = document.prose("summary", "incident") or document.prose("preamble") or document.prose("impact")
    impact, cause = document.prose("impact"), document.prose("root-cause")
    actions = "\n".join(t for _, t in document.blocks("action-items"))
    when = parse_date(document.meta.get("date", "")) or parse_date(document.prose("preamble")) or parse_date(summary)
    record = MemoryRecord(
        "failure-pattern", document.title or _headline(summary), gist(summary),
        document.first_line("summary", "incident"), _author(document), when,
        fields={"impact": gist(impact), "root-cause": gist(cause), "action-items": actions},
        relations={"affected": names(summary, impact), "caused-by": names(cause)})
    lessons = [MemoryRecord("memory", _headline(lesson), gist(lesson), line, record.author, when,
                            relations={"concerns": names(lesson)}) for line, lesson in document.blocks("lessons")
               if not lesson.endswith(":")]  # "We learned:" introduces the lessons
    return [record, *lessons, *_exceptions(document, names, record)]


def _review(document: _Document, names: _Names) -> list[MemoryRecord]:
    records = []
    for comment in _comments(document):
        about = f"{document.title}: comment" if document.title else "Comment"
        on = f" on {comment.date}" if comment.date else ""
        memory = MemoryRecord("memory", f"{about} by {comment.author}{on}",
                              gist(comment.text), comment.line, comment.author, comment.date,
                              relations={"concerns": _others(names(comment.text), [comment.author])})
        records += [memory, *_granted(comment.line, comment.text, names, memory)]
    return records


def _headline(text: str, limit: int = 100) -> str:
    return gist(next(iter(_sentences(text)), ""), limit)


def _others(found: list[str], taken: Iterable[str]) -> list[str]:
    seen = {t.casefold() for t in taken}
    return [n for n in found if n.casefold() not in seen]


# ---------------------------------------------------------------- exceptions to policy

_POLICY_PHRASE = (r"(?:(?!(?:to|from|of|for|the|an?|is|are|was|be|until|because|and|or)\b)[\w/-]+\s+){0,4}?"
                  r"(?:polic(?:y|ies)|standards?|guidelines?|mandates?|rules?|requirements?|principles?)\b")
_GRANT = re.compile(
    r"\b(?:granted|given|grants?|giving|approved|receives?|received|allowed)\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+)?"
    r"(?:exception|exemption|waiver)s?\b|\bexempt(?:ed)?\s+from\b"
    rf"|\b(?:exception|exemption|waiver)s?\s+(?:to|from)\s+(?=(?:the\s+|our\s+)?{_POLICY_PHRASE})", re.IGNORECASE)
_POLICY = re.compile(rf"\s*(?:(?:to|from|of|for|under)\s+)?(?:(?:the|our|this|its)\s+)?(?P<policy>{_POLICY_PHRASE})",
                     re.IGNORECASE)
# Where an item's subject ends: "Storage Gateway may replicate to Nimbus" exempts the Storage Gateway only.
_PREDICATE = re.compile(r"\s(?:may|can|could|is|are|was|were|will|shall|must|gets?|has|have|uses?|runs?|keeps?|"
                        r"stays?|continues?)\b|[:(—–]")


def _exceptions(document: _Document, names: _Names, source: MemoryRecord) -> list[MemoryRecord]:
    """Exceptions from an "Exceptions" section (each item one) and from sentences elsewhere granting one."""
    found = []
    for section in document.of("exceptions"):
        for line, text in _blocks(section.body, document.meta_lines):
            if _GRANT.search(text):
                found += _granted(line, text, names, source)
                continue
            policy = _policy(text) or _policy(section.heading)
            exempted = _others(_subject(text, names) or names(text), names(policy))
            found.append(_exception(line, text, policy, exempted, _others(names(text), exempted + names(policy)),
                                    source))
    elsewhere = [s for s in document.sections if s.key != "exceptions"]
    for line, text in [b for s in elsewhere for b in _blocks(s.body, document.meta_lines)]:
        found += _granted(line, text, names, source)
    return sorted(found, key=lambda r: r.line)


def _granted(line: int, text: str, names: _Names, source: MemoryRecord) -> list[MemoryRecord]:
    """One exception for the sentences of a paragraph (or comment) granting one: it exempts what a sentence
    names before the grant ("Skyline is granted …"), else what it names after the policy ("… is granted to
    Skyline"). One per paragraph, so that no two records of a kind share a line."""
    granting, policies, exempted = [], [], []
    for sentence in _sentences(text):
        grant = _GRANT.search(sentence)
        if grant:
            stated = _POLICY.match(sentence, grant.end())
            policy = stated["policy"].strip() if stated else ""
            rest = sentence[stated.end() if stated else grant.end():]
            granting.append(sentence)
            policies += [policy] if policy else []
            exempted += _others(_subject(sentence[:grant.start()], names) or names(rest), names(policy) + exempted)
    if not granting:
        return []
    said = " ".join(granting)
    policy = policies[0] if policies else ""
    return [_exception(line, said, policy, exempted, _others(names(said), exempted + names(" ".join(policies))),
                       source)]


def _subject(text: str, names: _Names) -> list[str]:
    """The names before the predicate of `text` ("Storage Gateway may replicate to Nimbus": the Storage
    Gateway), or all its names when that part names none."""
    predicate = _PREDICATE.search(text)
    return (names(text[:predicate.start()]) if predicate else []) or names(text)


def _policy(text: str) -> str:
    stated = _POLICY.search(text)
    return stated["policy"].strip() if stated else ""


def _exception(line: int, text: str, policy: str, exempted: list[str], others: list[str],
               source: MemoryRecord) -> MemoryRecord:
    title = f"Exception to the {policy}" if policy else f"Exception: {_headline(text, 80)}"
    return MemoryRecord("exception", title, gist(text), line, source.author, source.date, source.status,
                        {"policy": policy}, {"excepts": exempted, "concerns": others})
