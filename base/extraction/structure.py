"""A page read once for its structure when it is chunked: its blocks, its document context, and for each
chunk its first line and the blocks that start in it. kg-extract then reads a chunk's blocks knowing the
headings above them and the document they belong to, which the chunk's text alone does not say."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from tracegraph.base.documents import CODEOWNERS, MARKDOWN_KINDS
from tracegraph.base.extraction.blocks import Block, read_blocks
from tracegraph.base.extraction.reader import document_context
from tracegraph.schemas.ingest import DocumentContext

MAX_CONTEXT_WORDS = 400  # capitalised words sent with each chunk: enough for a long README


@dataclass(frozen=True, slots=True)
class Structure:
    context: DocumentContext
    chunks: list[tuple[int, tuple[Block, ...]]]  # per chunk: its first line, the blocks that start in it


def read_structure(text: str, kind: str, *, title: str, path: str, starts: Sequence[int]) -> Structure:
    """`starts` are the chunks' character offsets in `text`, in order. A block belongs to the last chunk that
    starts at or before its first line, so overlapping chunks never read a block twice."""
    lines = _line_starts(text)
    first_lines = [bisect.bisect_right(lines, offset) for offset in starts]
    if kind == CODEOWNERS or not starts:
        return Structure(DocumentContext(), [(line, ()) for line in first_lines])
    markdown = kind in MARKDOWN_KINDS
    blocks = read_blocks(text, markdown)
    context = document_context(blocks, title, path, plain=not markdown)
    context = context.model_copy(update={"capitalised": context.capitalised[:MAX_CONTEXT_WORDS]})
    owned: list[list[Block]] = [[] for _ in starts]
    for block in blocks:
        owned[_owner(first_lines, block.first)].append(block)
    return Structure(context, [(line, tuple(mine)) for line, mine in zip(first_lines, owned, strict=True)])


def _line_starts(text: str) -> list[int]:
    """Offsets where each line starts (line n starts at index n-1)."""
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def _owner(first_lines: list[int], line: int) -> int:
    """The last chunk starting at or before `line` — the chunk whose text its first line falls in."""
    return max(0, bisect.bisect_right(first_lines, line) - 1)
