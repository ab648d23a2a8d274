"""Keeping each collection's passage graph current from graph-update events, without full scans
while serving and without a question ever waiting once a graph exists.

Per collection the cache keeps every chunk's rows (a Passage: document, title, facts, mentions). An
update names the chunks it touched: the chunk records it added or removed (`passages`) and the chunk
an extraction write came from (its `metadata.id`: the extractor, review approvals and withdrawals send
a chunk's facts under the chunk's own id). Only those chunks' rows are read again (SPARQL with
`VALUES ?chunk`), a chunk with no rows left is dropped, and the igraph object is assembled again from
the kept rows in a thread: the cost follows what changed, plus one graph construction.
`everything`, or knowledge changed under an id that names no chunk and with no `passages`, falls
back to reading every chunk (in the background too).

Questions are served from the current graph while that happens (stale-while-revalidate). Only a
collection's very first graph is waited for. Copies of a processor share one subscription to the
updates, so a copy may miss some: after `max_age` seconds since its last full read a question starts
a full re-read in the background, and goes on being answered from the graph it has."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from tracegraph.base.provenance.vocab import is_knowledge
from tracegraph.base.retrieval.passage_graph import Passage, PassageGraph, assemble, load_passages
from tracegraph.schemas.search import GraphUpdate

log = logging.getLogger(__name__)
Scope = tuple[str, str]
CHUNK_PREFIX = "urn:chunk:"  # how the chunker names chunks (base/provenance/uris.py chunk_uri)


def touched_chunks(update: GraphUpdate) -> set[str] | None:
    """The chunks whose rows this update may have changed, or None when it cannot say which: a change
    too large to list, or knowledge written under a document's own id (the architecture extractor
    derives its subgraphs from the document's lines, not from chunks). A document's description (the
    librarian's, under its id) is no knowledge and changes no passage."""
    if update.everything:
        return None
    if update.metadata.id.startswith(CHUNK_PREFIX):
        return {*update.passages, update.metadata.id}
    if not update.passages and any(is_knowledge(t) for t in (*update.added, *update.removed)):
        return None
    return set(update.passages)


@dataclass
class KeptGraph:
    """One collection's rows and the graph assembled from them, and what is still to apply."""

    passages: dict[str, Passage]
    graph: PassageGraph
    tools: Any  # the retrieval tools of the latest question: background reads go through them
    loaded: float = field(default_factory=time.monotonic)  # when every chunk was last read
    dirty: set[str] = field(default_factory=set)
    reload: bool = False
    task: asyncio.Task | None = None
    refreshes: int = 0  # rounds applied since the first build (for tests and logs)
    round_seconds: float = 0.0  # how long the last round took: the next one waits as long

    @property
    def pending(self) -> bool:
        return self.reload or bool(self.dirty)


class PassageGraphCache:
    """One passage graph per (user, collection), maintained from graph updates. Before each round
    of changes the cache waits `settle` seconds, or as long as the last round took if longer: a burst
    of updates (a bulk load's chunks and their extractions) gathers into few rounds, and upkeep keeps
    at most about half of a core busy however large the collection."""

    def __init__(self, max_age: float = 120.0, settle: float = 0.05) -> None:
        self.max_age, self.settle = max_age, settle
        self._kept: dict[Scope, KeptGraph] = {}
        self._locks: dict[Scope, asyncio.Lock] = {}
        self._early: dict[Scope, set[str] | None] = {}  # updates during a first build (None: everything)

    async def get(self, scope: Scope, tools) -> PassageGraph:
        """The collection's current graph; the first one is built here, every later one in the background."""
        kept = self._kept.get(scope) or await self._first(scope, tools)
        kept.tools = tools
        if time.monotonic() - kept.loaded > self.max_age:
            kept.reload, kept.loaded = True, time.monotonic()  # one re-read, not one per question meanwhile
        self._schedule(kept)  # also retries a change whose round failed
        return kept.graph

    def updated(self, scope: Scope, update: GraphUpdate) -> None:
        """Note what an update changed and start applying it; a collection never asked about is left alone."""
        kept = self._kept.get(scope)
        if kept is None:
            if scope in self._early:  # its first build is running: apply this once it is done
                early = self._early[scope]
                touched = touched_chunks(update)
                self._early[scope] = None if touched is None or early is None else early | touched
            return
        touched = touched_chunks(update)
        if touched is None:
            kept.reload = True
        else:
            kept.dirty |= touched
        self._schedule(kept)

    async def settled(self, scope: Scope) -> None:
        """Wait until every noted update is applied (tests; never on a question's path)."""
        kept = self._kept.get(scope)
        while kept is not None and kept.task is not None and not kept.task.done():
            await asyncio.shield(kept.task)

    def kept(self, scope: Scope) -> KeptGraph | None:
        return self._kept.get(scope)

    async def aclose(self) -> None:
        tasks = [k.task for k in self._kept.values() if k.task is not None and not k.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _first(self, scope: Scope, tools) -> KeptGraph:
        async with self._locks.setdefault(scope, asyncio.Lock()):
            if scope in self._kept:
                return self._kept[scope]
            self._early[scope] = set()
            try:
                started = time.monotonic()
                passages = await load_passages(tools)
                kept = KeptGraph(passages, await asyncio.to_thread(assemble, passages), tools, started)
            finally:
                early = self._early.pop(scope)
            kept.reload, kept.dirty = early is None, early or set()
            self._kept[scope] = kept
            self._schedule(kept)
            return kept

    def _schedule(self, kept: KeptGraph) -> None:
        if kept.pending and (kept.task is None or kept.task.done()):
            kept.task = asyncio.create_task(self._refresh(kept))

    async def _refresh(self, kept: KeptGraph) -> None:
        """Apply noted changes round after round until none is left; a failed round is left noted,
        and tried again with the next update or question."""
        while kept.pending:
            await asyncio.sleep(max(self.settle, kept.round_seconds))
            reload, chunks = kept.reload, kept.dirty
            kept.reload, kept.dirty = False, set()
            try:
                await self._apply(kept, reload, chunks)
            except Exception as exc:  # noqa: BLE001 - the graph in hand stays; the change stays noted
                kept.reload, kept.dirty = kept.reload or reload, kept.dirty | chunks
                log.warning("passage graph not refreshed (%s): answering from the one in hand", exc)
                return

    async def _apply(self, kept: KeptGraph, reload: bool, chunks: set[str]) -> None:
        started = time.monotonic()
        if reload:
            passages = await load_passages(kept.tools)
            kept.loaded = started
        else:
            found = await load_passages(kept.tools, sorted(chunks))
            passages = dict(kept.passages)
            for chunk in chunks:
                if chunk in found:
                    passages[chunk] = found[chunk]
                else:
                    passages.pop(chunk, None)
        kept.graph = await asyncio.to_thread(assemble, passages)
        kept.passages = passages
        kept.refreshes += 1
        kept.round_seconds = time.monotonic() - started
        log.debug("passage graph: %s applied in %.2f s (%d passages)", "full re-read" if reload
                  else f"{len(chunks)} chunk(s)", kept.round_seconds, len(passages))
