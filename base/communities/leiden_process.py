"""Leiden runs in a process of their own.

leidenalg holds the GIL while it optimises, so in a worker thread a long run still stalls the event loop
it shares the process with (embedding requests then time out). A `LeidenProcess` is called like
`run_leiden` from that worker thread, which waits for the child process's answer without the GIL.
"""

from __future__ import annotations

import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from tracegraph.base.communities.detect import LeidenJob, run_leiden

log = logging.getLogger(__name__)


class LeidenProcess:
    """One child process (spawned on first use, respawned if it dies) that runs Leiden jobs in turn."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    def __call__(self, job: LeidenJob) -> np.ndarray:
        try:
            return self._executor().submit(run_leiden, job).result()
        except BrokenProcessPool:  # the child died (killed, out of memory): a new one takes the job
            log.warning("community: the Leiden process died; starting a new one")
            self.close()
            return self._executor().submit(run_leiden, job).result()

    def warm(self) -> None:
        """Start the child now (it imports igraph and leidenalg), so the first refresh does not wait for it."""
        self._executor().submit(run_leiden, LeidenJob(1, [], [], 1.0, 0, 1))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        return self._pool
