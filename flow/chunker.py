"""Chunker: a library document → pages (PDF) → overlapping chunks, each with its provenance, and with the
blocks of the document that start in it (base/extraction/structure.py) for the extractor.

Chunk ids are uuid5 of (parent, index, size, overlap), so a redelivered or re-processed
document yields the same chunks and the stores below write nothing twice. A document without a
date in its metadata may give one in its text ("Date: …" near the top) or its dated path
("2020-09-21-outage.md"); every chunk carries it.
"""

from __future__ import annotations

import base64
import logging

from semantic_text_splitter import MarkdownSplitter, TextSplitter

from tracegraph.base.documents import MARKDOWN_KINDS, read_pages
from tracegraph.base.extraction.structure import read_structure
from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.provenance.extraction import (
    Component, chunk_triples, failed_indexing_triples, page_triples,
)
from tracegraph.base.provenance.uris import chunk_uri, page_uri
from tracegraph.base.specs import Client, Consumer, Parameter, Producer
from tracegraph.base.temporal.dates import document_date, path_date
from tracegraph.schemas.ingest import DocumentLoad, TextChunk, Triples
from tracegraph.schemas.library import LibrarianRequest, LibrarianResponse

log = logging.getLogger(__name__)
COMPONENT = Component("chunker", "1.0")


def split(text: str, size: int, overlap: int, markdown: bool = False) -> list[tuple[int, str]]:
    """(character offset, chunk) pairs: the largest semantic units (sections, paragraphs,
    sentences, words) that fit `size` characters, neighbours sharing up to `overlap`."""
    splitter = (MarkdownSplitter if markdown else TextSplitter)(size, overlap=overlap)
    return splitter.chunk_indices(text)


class ChunkerProcessor(FlowProcessor):
    name = "chunker"
    input = Consumer("input", DocumentLoad, prefetch=2)
    output = Producer("output", TextChunk)
    triples = Producer("triples", Triples)
    librarian = Client("librarian", LibrarianRequest, LibrarianResponse)
    chunk_size = Parameter("chunk-size", int, default=1000)
    chunk_overlap = Parameter("chunk-overlap", int, default=100)

    @input.handler
    async def chunk(self, load: DocumentLoad, flow: Flow) -> None:
        meta = load.metadata
        response = await flow[self.librarian].request(LibrarianRequest(
            operation="get-document-content", document_id=meta.id, user=meta.user))
        pages = read_pages(base64.b64decode(response.content or ""), load.kind)
        if not meta.date and pages:
            found = document_date(pages[0].text) or path_date(load.path or load.title, pages[0].text)
            meta = meta.model_copy(update={"date": found or ""})
        size, overlap = flow[self.chunk_size], flow[self.chunk_overlap]
        if not 0 <= overlap < size:
            raise ValueError(f"chunk-overlap {overlap} must be smaller than chunk-size {size}")
        paged = load.kind == "application/pdf"
        total = 0
        for page in pages:
            parent = page_uri(meta.id, page.number) if paged else meta.id
            provenance = page_triples(parent, meta.id, number=page.number, component=COMPONENT,
                                      timestamp=meta.time, char_length=len(page.text)) if paged else []
            chunks = []
            pieces = split(page.text, size, overlap, load.kind in MARKDOWN_KINDS)
            structure = read_structure(page.text, load.kind, title=load.title, path=load.path,
                                       starts=[offset for offset, _ in pieces])
            for index, ((offset, text), (line, blocks)) in enumerate(zip(pieces, structure.chunks, strict=True), 1):
                uri = chunk_uri(parent, index, size, overlap)
                provenance += chunk_triples(uri, parent, index=index, char_offset=offset, char_length=len(text),
                                            chunk_size=size, chunk_overlap=overlap, component=COMPONENT,
                                            timestamp=meta.time)
                chunks.append(TextChunk(metadata=meta.model_copy(update={"id": uri}), text=text,
                                        document=meta.id, index=index, title=load.title, kind=load.kind,
                                        line=line, blocks=blocks, context=structure.context))
            # Provenance first, so a chunk's facts never arrive before the chunk is known.
            if provenance:
                await flow[self.triples].send(Triples(metadata=meta, triples=provenance))
            for chunk in chunks:
                await flow[self.output].send(chunk)
            total += len(chunks)
        log.info("chunked %s into %d chunk(s) over %d page(s)", meta.id, total, len(pages))

    async def gave_up(self, spec, message, flow: Flow, error: str) -> None:
        """A document given up on has no chunk to mark: record it on the document itself, where
        `--wait` looks, so the user is told instead of waiting out a timeout."""
        if spec is self.input:
            await flow[self.triples].send(Triples(metadata=message.metadata, triples=failed_indexing_triples(
                message.metadata.id, self.name, error[:1000])))
