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
    """`starts` are the chunks' character offsets in `text`, in order. A block belongs to the chunk it starts
    in (chunks own the text from their start to the next one's, so overlapping chunks never read a block
    twice); a paragraph or item that runs into later chunks goes to each, with the part of its text each
    reads (a passage written as one long line is read by every chunk it fills, sentence by sentence)."""
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
        begin = lines[block.first - 1]
        end = lines[block.last] - 1 if block.last < len(lines) else len(text)
        first, last = _owner(starts, begin), _owner(starts, max(begin, end - 1))
        if first == last or block.kind not in ("paragraph", "item"):
            owned[first].append(block)
            continue
        scale = len(block.text) / max(1, end - begin)  # markup and spaces the block's text no longer has
        for index in range(first, last + 1):
            lo = 0 if index == first else round((starts[index] - begin) * scale)
            hi = len(block.text) if index == last else round((starts[index + 1] - begin) * scale)
            owned[index].append(block.model_copy(update={"part": (lo, hi)}))
    return Structure(context, [(line, tuple(mine)) for line, mine in zip(first_lines, owned, strict=True)])


def _line_starts(text: str) -> list[int]:
    """Offsets where each line starts (line n starts at index n-1)."""
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def _owner(starts: Sequence[int], offset: int) -> int:
    """The last chunk starting at or before character `offset`: the chunk that owns it."""
    return max(0, bisect.bisect_right(starts, offset) - 1)
