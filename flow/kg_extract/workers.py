"""Where the offline extractor runs: parsing is CPU-bound Python that holds the GIL most of the time, so in
kg-extract's own thread it would slow every other coroutine of the process (and, in the one-process stack,
every other processor). With `workers` > 0 chunks are parsed in that many worker processes, each loading the
spaCy pipeline once; with 0, in a thread of this process (tests, one-core machines)."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from tracegraph.base.errors import TransientError
from tracegraph.base.extraction import nlp
from tracegraph.base.extraction.facts import Extraction
from tracegraph.flow.kg_extract import offline
from tracegraph.schemas.ingest import TextChunk

log = logging.getLogger(__name__)


def _warm(model: str | None) -> None:
    """A worker's first job: load the pipeline before any chunk waits on it."""
    nlp.pipeline(model)


class OfflineExtractor:
    def __init__(self, workers: int, model: str | None) -> None:
        self.workers, self.model = workers, model
        self._pool: ProcessPoolExecutor | None = None

    async def extract(self, chunk: TextChunk) -> Extraction:
        if self.workers <= 0:
            return await asyncio.to_thread(offline.extract_chunk, chunk, self.model)
        try:
            # Starting workers and handing them work write to pipes: done off the event loop
            pool = self._pool or await asyncio.to_thread(self._start)
            future = await asyncio.to_thread(pool.submit, offline.extract_chunk, chunk, self.model)
            return await asyncio.wrap_future(future)
        except BrokenProcessPool:
            # A worker died (killed, out of memory): start afresh; the chunk is redelivered and parsed again.
            log.warning("an extraction worker died: starting new ones")
            await self.aclose()
            raise TransientError("the offline extraction worker died; the chunk will be extracted again") from None

    def _start(self) -> ProcessPoolExecutor:
        # spawn: a fork of a process running an event loop and threads may inherit a held lock
        self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_warm, initargs=(self.model,))
        return self._pool

    async def aclose(self) -> None:
        """Stop the workers (off the event loop: shutting a pool down writes to its pipes)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)
