"""The passage index: BM25 over a collection's passages (chunks), each indexed with its document's
title, for hybrid passage retrieval (dense + BM25) beside the chunk vectors. The document-embeddings
processor owns it, as it owns the chunk vectors: the same messages fill both, and removing a
document empties both. One tantivy index per collection under root/<user>/<collection>/."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import NamedTuple

import tantivy

from tracegraph.base.stores.keyword import ANALYZER, _analyzer, query_terms
from tracegraph.base.stores.protocol import CollectionRef
from tracegraph.base.stores.shelf import IndexShelf


class Passage(NamedTuple):
    id: str  # the chunk IRI
    document: str
    title: str
    text: str


class PassageHit(NamedTuple):
    id: str
    document: str
    score: float


@cache
def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("document", stored=True, tokenizer_name="raw")
    builder.add_text_field("text", tokenizer_name=ANALYZER)  # title and passage; the text itself is not kept
    return builder.build()


class _OpenPassages:
    """One collection's passage index; methods block (worker threads), writes under the shelf's lock."""

    def __init__(self, path: Path, writer_heap: int) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.index = tantivy.Index(_schema(), path=str(path), reuse=True)
        self.index.register_tokenizer(ANALYZER, _analyzer())
        self.writer_heap = writer_heap
        self.writer: tantivy.IndexWriter | None = None

    def _commit(self, write) -> None:
        if self.writer is None:
            self.writer = self.index.writer(heap_size=self.writer_heap, num_threads=1)
        try:
            write(self.writer)
            self.writer.commit()
        except BaseException:
            self.writer.rollback()
            raise
        self.index.reload()

    def add(self, passages: Sequence[Passage]) -> None:
        def write(writer: tantivy.IndexWriter) -> None:
            for p in passages:  # delete first: a redelivered chunk leaves one document
                writer.delete_documents_by_term("id", p.id)
                writer.add_document(tantivy.Document(id=p.id, document=p.document, text=f"{p.title}\n{p.text}"))
        self._commit(write)

    def remove(self, ids: Sequence[str], document: str | None) -> int:
        searcher = self.index.searcher()
        found = 0
        terms = [("id", i) for i in ids] + ([("document", document)] if document else [])
        for field, value in terms:
            found += searcher.search(tantivy.Query.term_query(_schema(), field, value), 1, count=True).count
        self._commit(lambda writer: [writer.delete_documents_by_term(f, v) for f, v in terms])
        return found

    def search(self, terms: list[str], limit: int) -> list[PassageHit]:
        schema = _schema()
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "text", term)) for term in terms])
        searcher = self.index.searcher()
        hits = []
        for score, address in searcher.search(query, limit, count=False).hits:
            doc = searcher.doc(address)
            hits.append(PassageHit(doc.get_first("id"), doc.get_first("document"), score))
        return hits

    def close(self) -> None:
        if self.writer is not None:
            writer, self.writer = self.writer, None
            writer.wait_merging_threads()


class PassageIndex(IndexShelf[_OpenPassages]):
    """BM25 over each collection's passages: `add` as chunks are indexed, `remove` with a document."""

    def _open_entry(self, path: Path) -> _OpenPassages:
        return _OpenPassages(path, self.writer_heap)

    async def add(self, ref: CollectionRef, passages: Iterable[Passage]) -> None:
        passages = list(passages)
        if passages:
            await self.write(ref, lambda entry: entry.add(passages))

    async def remove(self, ref: CollectionRef, ids: Sequence[str] = (), document: str | None = None) -> int:
        """Forget these passages and every passage of `document`; how many there were."""
        if not ids and not document or await self.reader(ref) is None:
            return 0
        removed: list[int] = []
        await self.write(ref, lambda entry: removed.append(entry.remove(list(ids), document)))
        return removed[0]

    async def search(self, ref: CollectionRef, text: str, limit: int = 20) -> list[PassageHit]:
        """The passages that best match `text`, best first; [] for no usable words or no such collection."""
        terms = await asyncio.to_thread(query_terms, text)
        if not terms or limit < 1:
            return []
        entry = await self.reader(ref)
        return [] if entry is None else await asyncio.to_thread(entry.search, terms, limit)
