"""The offline extraction of one chunk: the blocks the chunker found starting in it, read by the parser-based
extractor (base/extraction) in their document's context. A chunk from a sender that gives no structure is
read from its own text."""

from __future__ import annotations

from tracegraph.base.documents import MARKDOWN_KINDS
from tracegraph.base.extraction import reader
from tracegraph.base.extraction.blocks import read_blocks
from tracegraph.base.extraction.facts import Extraction
from tracegraph.schemas.ingest import TextChunk


def extract_chunk(chunk: TextChunk, model: str | None = None) -> Extraction:
    """Facts of a chunk, each placed on its document's lines; `model` names the spaCy pipeline."""
    if chunk.context is not None:
        return reader.extract(chunk.blocks, chunk.context, model)
    markdown = chunk.kind in MARKDOWN_KINDS
    blocks = read_blocks(chunk.text, markdown, first_line=chunk.line)
    return reader.extract(blocks, reader.document_context(blocks, chunk.title, plain=not markdown), model)
