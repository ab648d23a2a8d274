"""A document as the blocks its author wrote: headings, paragraphs, list items, table rows, `Key: value`
fields, front matter and fenced code, each with its line span and the headings above it.

Markdown is read with markdown-it-py (CommonMark plus GFM tables, and front matter), whose block tokens carry
their source lines; plain text is read as paragraphs between blank lines. Extraction works on these blocks,
so a fact knows the lines it came from, a bullet knows the heading it sits under, and a table cell knows
its column's header."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from tracegraph.schemas.ingest import TextBlock

# "Owner: Billing squad", "**Status:** Accepted", "- Repo path: services/billing": a short key, then its value.
_FIELD = re.compile(r"^(?P<key>[A-Za-z][\w /&'-]{0,40}?(?:\s*\([^()]{1,20}\))?)\s*:\s+(?P<value>\S.*)$")
_FIELD_WORDS = 4  # a key longer than this is a sentence with a colon in it, not a field
Block = TextBlock  # the wire model is the block itself: the chunker sends blocks to kg-extract as they are


def _block(kind: str, text: str, first: int, last: int, headings: tuple[str, ...] = (), **fields: object) -> Block:
    return TextBlock(kind=kind, text=text, first=first, last=last, headings=headings, **fields)


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable("table").use(front_matter_plugin)


def read_blocks(text: str, markdown: bool, first_line: int = 1) -> list[Block]:
    """The blocks of `text` in document order; `first_line` is the line number of its first line."""
    blocks = list(_markdown_blocks(text) if markdown else _plain_blocks(text))
    if first_line != 1:
        blocks = [b.model_copy(update={"first": b.first + first_line - 1, "last": b.last + first_line - 1})
                  for b in blocks]
    return blocks


def _plain_blocks(text: str) -> Iterator[Block]:
    """Paragraphs of plain text: runs of non-blank lines; a `Key: value` line is a field."""
    start, lines = None, text.split("\n")
    for number, line in enumerate([*lines, ""], 1):
        if line.strip() and start is None:
            start = number
        elif not line.strip() and start is not None:
            chunk = lines[start - 1:number - 1]
            fields = [_FIELD.match(raw.strip()) for raw in chunk]
            if all(fields) and all(_is_key(f["key"]) for f in fields if f):
                for offset, found in enumerate(fields):
                    yield _block("field", found["value"].strip(), start + offset, start + offset, key=found["key"])
            else:
                text, breaks = _joined(chunk)
                yield _block("paragraph", text, start, number - 1, breaks=breaks)
            start = None


def _joined(lines: Sequence[str]) -> tuple[str, tuple[int, ...]]:
    """Lines as one text (whitespace runs collapsed) and where each line after the first starts in it."""
    parts = [" ".join(line.split()) for line in lines]
    text, breaks = "", []
    for part in parts:
        if not part:
            continue
        if text:
            text += " "
            breaks.append(len(text))
        text += part
    return text, tuple(breaks)


def _is_key(key: str) -> bool:
    """"Owner", "Repo path", "Owner(s)"; not "The Countess of Parma (Italian" or "see https"."""
    words = key.split()
    return len(words) <= _FIELD_WORDS and not key.strip().endswith(("http", "https")) and \
        words[0].lower() not in ("the", "a", "an", "this", "it", "we", "i")


class _Reader:
    """Walks markdown-it's token stream, keeping the heading trail, list nesting and table header."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.tokens = _markdown().parse(text)
        self.headings: list[tuple[int, str]] = []
        self.items: list[list] = []  # open list items: [depth, ordered, text or None]
        self.ordered: list[bool] = []
        self.header: tuple[str, ...] = ()
        self.in_head = False
        self.row: list[str] | None = None
        self.row_lines = (0, 0)

    def blocks(self) -> Iterator[Block]:
        tokens = self.tokens
        for k, token in enumerate(tokens):
            kind = token.type
            if kind == "front_matter":
                yield from self._front_matter(token)
            elif kind == "heading_open":
                level = int(token.tag[1])
                text = _inline(tokens[k + 1])[0]
                self.headings = [h for h in self.headings if h[0] < level] + [(level, text)]
                first, last = _lines(token)
                yield _block("heading", text, first, last, self._trail()[:-1], level=level)
            elif kind in ("bullet_list_open", "ordered_list_open"):
                self.ordered.append(kind == "ordered_list_open")
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.ordered.pop()
            elif kind == "list_item_open":
                self.items.append([len(self.ordered), self.ordered[-1] if self.ordered else False, None])
            elif kind == "list_item_close":
                self.items.pop()
            elif kind == "paragraph_open":
                yield from self._paragraph(token, tokens[k + 1])
            elif kind == "thead_open":
                self.in_head, self.header = True, ()
            elif kind == "thead_close":
                self.in_head = False
            elif kind == "tr_open":
                self.row, self.row_lines = [], _lines(token)
            elif kind == "inline" and self.row is not None and tokens[k - 1].type in ("th_open", "td_open"):
                self.row.append(_inline(token)[0])
            elif kind == "tr_close" and self.row is not None:
                if self.in_head:
                    self.header = tuple(self.row)
                else:
                    yield _block("row", " | ".join(self.row), *self.row_lines, self._trail(),
                                cells=tuple(self.row), header=self.header)
                self.row = None
            elif kind == "fence" or kind == "code_block":
                first, last = _lines(token)
                yield _block("code", token.content, first, last, self._trail(), info=token.info.strip().split(" ")[0])

    def _trail(self) -> tuple[str, ...]:
        return tuple(text for _, text in self.headings)

    def _paragraph(self, opening: Token, inline: Token) -> Iterator[Block]:
        first, last = _lines(opening)
        text, codes, links, breaks = _inline(inline)
        outline = tuple(t for _, _, t in self.items[:-1] if t)
        if self.items and self.items[-1][2] is None:  # the item's own first paragraph
            depth, ordered, _ = self.items[-1]
            self.items[-1][2] = text
            fields = _fields(inline, first)
            if fields and len(fields) == 1 and fields[0].first == first:
                yield fields[0].model_copy(update={"headings": self._trail(), "level": depth, "outline": outline})
                return
            yield _block("item", text, first, last, self._trail(), level=depth, outline=outline, ordered=ordered,
                        codes=codes, links=links, breaks=breaks)
            return
        fields = _fields(inline, first)
        if fields:
            yield from (f.model_copy(update={"headings": self._trail(), "outline": outline}) for f in fields)
            return
        yield _block("paragraph", text, first, last, self._trail(), outline=outline, codes=codes, links=links,
                    breaks=breaks)

    def _front_matter(self, token: Token) -> Iterator[Block]:
        """YAML front matter: its top-level keys as fields."""
        try:
            data = yaml.safe_load(token.content)
        except yaml.YAMLError:
            return
        yield from _data_fields(data, token.content, _lines(token)[0] + 1)


def _data_fields(data: object, source: str, first: int) -> Iterator[Block]:
    """Top-level keys of front matter (YAML or TOML), each a field on the line it is written on (lists
    joined by commas; tables left out). `first` is the line of `source`'s first line."""
    if not isinstance(data, dict):
        return
    raw = source.split("\n")
    for key, value in data.items():
        line = next((n for n, text in enumerate(raw) if re.match(rf"\s*{re.escape(str(key))}\s*[:=]", text)), 0)
        shown = ", ".join(map(str, value)) if isinstance(value, list) else "" if value is None else str(value)
        if shown and not isinstance(value, dict):
            yield _block("field", shown, first + line, first + line, key=str(key))


_TOML_FRONT = re.compile(r"\A\+\+\+[ \t]*\n(?P<body>.*?\n)\+\+\+[ \t]*(?:\n|\Z)", re.DOTALL)


def _toml_front_matter(text: str) -> tuple[list[Block], str]:
    """TOML front matter between `+++` lines (Hugo, Zola) as fields, and the text with it blanked out (same
    line count, so every later line keeps its number)."""
    found = _TOML_FRONT.match(text)
    if not found:
        return [], text
    try:
        data = tomllib.loads(found["body"])
    except tomllib.TOMLDecodeError:
        return [], text
    blank = "\n" * found.group(0).count("\n")
    return list(_data_fields(data, found["body"], 2)), blank + text[found.end():]


def _fields(inline: Token, first: int) -> list[Block]:
    """A paragraph whose every line is `Key: value` (emphasis around the key allowed) as fields; else none."""
    lines = _inline_lines(inline)
    found = [_FIELD.match(line) for line in lines]
    if not lines or not all(found) or not all(_is_key(m["key"]) for m in found if m):
        return []
    return [_block("field", m["value"].strip(), first + k, first + k, key=m["key"].strip())
            for k, m in enumerate(found) if m]


def _lines(token: Token) -> tuple[int, int]:
    start, end = token.map or (0, 1)
    return start + 1, max(start + 1, end)


def _inline(token: Token) -> tuple[str, tuple[str, ...], tuple[tuple[str, str], ...], tuple[int, ...]]:
    """(plain text, code spans, links, line breaks) of an inline token: emphasis and tags dropped, links as
    their text, images as nothing, line breaks as spaces (their offsets kept)."""
    text, codes, links = _render(token.children or [])
    joined, breaks = _joined(text.split("\n"))
    return joined, tuple(codes), tuple(links), breaks


def _inline_lines(token: Token) -> list[str]:
    """The inline token's text line by line (soft breaks kept), emphasis dropped."""
    parts: list[str] = [""]
    for child in token.children or []:
        if child.type in ("softbreak", "hardbreak"):
            parts.append("")
        elif child.type in ("text", "code_inline"):
            parts[-1] += child.content
    return [" ".join(p.split()) for p in parts if p.strip()]


def _render(children: Sequence[Token]) -> tuple[str, list[str], list[tuple[str, str]]]:
    out: list[str] = []
    codes: list[str] = []
    links: list[tuple[str, str]] = []
    in_link: list[str] | None = None
    target = ""
    for child in children:
        kind = child.type
        if kind == "image":
            continue
        if kind == "link_open":
            in_link, target = [], str(child.attrs.get("href", ""))
            continue
        if kind == "link_close":
            if in_link is not None and "".join(in_link).strip():
                links.append((" ".join("".join(in_link).split()), target))
            in_link = None
            continue
        if kind == "html_inline":
            if re.match(r"<br\s*/?>", child.content, re.I):
                out.append(" ")
            continue
        piece = {"text": child.content, "code_inline": child.content, "softbreak": "\n", "hardbreak": "\n"}.get(kind)
        if piece is None:
            continue
        if kind == "code_inline":
            codes.append(child.content)
        out.append(piece)
        if in_link is not None:
            in_link.append(piece)
    return "".join(out), codes, links


def _markdown_blocks(text: str) -> Iterator[Block]:
    fields, rest = _toml_front_matter(text)
    yield from fields
    yield from _Reader(rest).blocks()


@dataclass(frozen=True, slots=True)
class Outline:
    """What a document says about itself before any prose: its title (front matter or first heading)."""

    title: str = ""
    fields: dict[str, str] = field(default_factory=dict)


def outline(blocks: Sequence[Block]) -> Outline:
    """The document's title and its top fields (front matter and the fields before its first paragraph)."""
    title = ""
    fields: dict[str, str] = {}
    for block in blocks:
        if block.kind == "field" and not block.headings[1:]:
            fields.setdefault(block.key.lower(), block.text)
        elif block.kind == "heading" and block.level == 1 and not title:
            title = block.text
    return Outline(fields.get("title", "") or title, fields)
