"""A shelf of per-collection tantivy indexes: each opened on first use, at most `max_open` kept open
(least recently used closed first, since every open writer holds a heap), writes to one collection
one at a time, searches never waiting for them once the collection is open. The fact index and the
passage index both stand on it; each supplies what one open index is and does."""

from __future__ import annotations

import asyncio
import shutil
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

import tantivy

from tracegraph.base.stores.protocol import CollectionRef

WRITER_HEAP = 32_000_000  # bytes; tantivy wants at least 15 MB for one indexing thread


class OpenIndex:
    """One collection's tantivy index and, once it has written, its writer. Methods block: call
    them from worker threads, and writes only under the collection's lock (IndexShelf.write)."""

    def __init__(self, path: Path, schema: tantivy.Schema, analyzers: dict[str, tantivy.TextAnalyzer],
                 writer_heap: int) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.schema = schema
        self.index = tantivy.Index(schema, path=str(path), reuse=True)
        for name, analyzer in analyzers.items():
            self.index.register_tokenizer(name, analyzer)
        self.writer_heap = writer_heap
        self.writer: tantivy.IndexWriter | None = None

    def commit(self, write: Callable[[tantivy.IndexWriter], object]) -> None:
        """Run `write` with the writer and commit, or roll back on any error; the next search sees it."""
        if self.writer is None:
            self.writer = self.index.writer(heap_size=self.writer_heap, num_threads=1)
        try:
            write(self.writer)
            self.writer.commit()
        except BaseException:
            self.writer.rollback()
            raise
        self.index.reload()

    def search(self, terms: list[str], limit: int) -> list:
        """The best `limit` documents for these analysed terms, best first."""
        raise NotImplementedError

    def any_term(self, field: str, terms: list[str]) -> tantivy.Query:
        """Documents whose `field` has any of `terms`, scored by BM25."""
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, field, term)) for term in terms])

    def close(self) -> None:
        """Let the writer finish its merges and release the index's lock file."""
        if self.writer is not None:
            writer, self.writer = self.writer, None
            writer.wait_merging_threads()


E = TypeVar("E", bound=OpenIndex)


class IndexShelf(Generic[E]):
    def __init__(self, root: Path, *, max_open: int = 16, writer_heap: int = WRITER_HEAP) -> None:
        self.root = root
        self.max_open = max_open
        self.writer_heap = writer_heap
        self._open: OrderedDict[CollectionRef, E] = OrderedDict()
        self._locks: dict[CollectionRef, asyncio.Lock] = {}

    def _open_entry(self, path: Path) -> E:
        """Open (or create) the index at `path`; blocks, runs in a worker thread."""
        raise NotImplementedError

    def path(self, ref: CollectionRef) -> Path:
        return self.root / ref.user / ref.collection

    async def write(self, ref: CollectionRef, change: Callable[[E], object]) -> None:
        """Run a blocking `change` on the collection's index (created if need be), under its lock."""
        async with self._lock(ref):
            entry = await self._lease(ref, create=True)
            work = asyncio.ensure_future(asyncio.to_thread(change, entry))
            try:
                await asyncio.shield(work)
            except asyncio.CancelledError:
                await work  # a thread cannot be stopped: keep the lock until it is done, or a close races it
                raise
        await self._evict()

    async def reader(self, ref: CollectionRef) -> E | None:
        """The collection's open index for searching, or None when it has none."""
        entry = self._open.get(ref)
        if entry is not None:
            self._open.move_to_end(ref)
            return entry
        async with self._lock(ref):
            entry = await self._lease(ref, create=False)
        if entry is not None:
            await self._evict()
        return entry

    async def search(self, ref: CollectionRef, text: str, limit: int = 20) -> list:
        """What best matches `text` in the collection, best first; [] for no usable words or no such collection."""
        terms = await asyncio.to_thread(self.terms, text)
        if not terms or limit < 1:
            return []
        entry = await self.reader(ref)
        return [] if entry is None else await asyncio.to_thread(entry.search, terms, limit)

    def terms(self, text: str) -> list[str]:
        """The index terms of user text (the analyzer the index was written with)."""
        raise NotImplementedError

    async def drop(self, ref: CollectionRef) -> None:
        """Forget a collection: close its index and remove its folder."""
        async with self._lock(ref):
            await self._release(ref)
            await asyncio.to_thread(shutil.rmtree, self.path(ref), True)

    async def aclose(self) -> None:
        for ref in list(self._open):
            await self._close(ref)

    def _lock(self, ref: CollectionRef) -> asyncio.Lock:
        return self._locks.setdefault(ref, asyncio.Lock())

    async def _lease(self, ref: CollectionRef, create: bool) -> E | None:
        """The open index of `ref`, opened if need be (None if absent and not `create`); hold its lock."""
        entry = self._open.get(ref)
        if entry is None:
            path = self.path(ref)
            if not create and not await asyncio.to_thread(has_index, path):
                return None
            entry = self._open[ref] = await asyncio.to_thread(self._open_entry, path)
        self._open.move_to_end(ref)
        return entry

    async def _evict(self) -> None:
        """Close the least recently used indexes beyond `max_open`, skipping any being written."""
        idle = [ref for ref in self._open if not self._lock(ref).locked()]
        for ref in idle[:max(0, len(self._open) - self.max_open)]:
            await self._close(ref)

    async def _close(self, ref: CollectionRef) -> None:
        async with self._lock(ref):
            await self._release(ref)

    async def _release(self, ref: CollectionRef) -> None:
        """Close `ref`'s index; hold its lock, so whoever opens it next waits until the writer let go."""
        entry = self._open.pop(ref, None)
        if entry is not None:
            await asyncio.to_thread(entry.close)


def has_index(path: Path) -> bool:
    return path.is_dir() and tantivy.Index.exists(str(path))
