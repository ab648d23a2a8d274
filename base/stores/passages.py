"""The passage index: BM25 over a collection's passages (chunks), each indexed with its document's
title, for hybrid passage retrieval (dense + BM25) beside the chunk vectors. The document-embeddings
processor owns it, as it owns the chunk vectors: the same messages fill both, and removing a
document empties both. One tantivy index per collection under root/<user>/<collection>/."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import NamedTuple

import tantivy

from tracegraph.base.stores.keyword import ANALYZER, _analyzer, query_terms
from tracegraph.base.stores.protocol import CollectionRef
from tracegraph.base.stores.shelf import IndexShelf, OpenIndex


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


class _OpenPassages(OpenIndex):
    """One collection's passage index."""

    def __init__(self, path: Path, writer_heap: int) -> None:
        super().__init__(path, _schema(), {ANALYZER: _analyzer()}, writer_heap)

    def add(self, passages: Sequence[Passage]) -> None:
        def write(writer: tantivy.IndexWriter) -> None:
            for p in passages:  # delete first: a redelivered chunk leaves one document
                writer.delete_documents_by_term("id", p.id)
                writer.add_document(tantivy.Document(id=p.id, document=p.document, text=f"{p.title}\n{p.text}"))
        self.commit(write)

    def remove(self, ids: Sequence[str], document: str | None) -> int:
        searcher = self.index.searcher()
        terms = [("id", i) for i in ids] + ([("document", document)] if document else [])
        found = sum(searcher.search(tantivy.Query.term_query(self.schema, field, value), 1, count=True).count
                    for field, value in terms)
        self.commit(lambda writer: [writer.delete_documents_by_term(f, v) for f, v in terms])
        return found

    def search(self, terms: list[str], limit: int) -> list[PassageHit]:
        searcher = self.index.searcher()
        hits = []
        for score, address in searcher.search(self.any_term("text", terms), limit, count=False).hits:
            doc = searcher.doc(address)
            hits.append(PassageHit(doc.get_first("id"), doc.get_first("document"), score))
        return hits


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

    def terms(self, text: str) -> list[str]:
        return query_terms(text)
