"""The micro-batcher: batches leave on their window or their size, each submitter gets its own results
or the batch's error, a cancelled submitter harms nobody else, and nobody is left waiting."""

import asyncio

import pytest

from tracegraph.base.errors import ConfigError, TransientError
from tracegraph.base.microbatch import MicroBatcher


class Recorder:
    """A flush that doubles numbers, keeps every batch it got, and can be told to fail or to hold."""

    def __init__(self, fail_on: int | None = None, error: Exception | None = None) -> None:
        self.batches: list[list[int]] = []
        self.fail_on = fail_on
        self.error = error or RuntimeError("store down")
        self.release = asyncio.Event()
        self.release.set()
        self.running = 0
        self.most_running = 0

    async def __call__(self, items: list[int]) -> list[int]:
        self.batches.append(list(items))
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            await self.release.wait()
            if self.fail_on is not None and self.fail_on in items:
                raise self.error
            return [2 * i for i in items]
        finally:
            self.running -= 1


async def test_concurrent_submissions_share_one_batch_when_the_window_ends():
    flush = Recorder()
    async with MicroBatcher(flush, window=0.05, max_items=100) as batcher:
        loop = asyncio.get_running_loop()
        started = loop.time()
        results = await asyncio.gather(batcher.submit([1]), batcher.submit([2, 3]), batcher.submit([4]))
        waited = loop.time() - started
    assert results == [[2], [4, 6], [8]]
    assert flush.batches == [[1, 2, 3, 4]]
    assert 0.04 <= waited < 1.0


async def test_a_full_batch_leaves_without_waiting_out_the_window():
    flush = Recorder()
    async with MicroBatcher(flush, window=30.0, max_items=4) as batcher:
        results = await asyncio.wait_for(asyncio.gather(*(batcher.submit([i]) for i in range(8))), 5)
    assert results == [[2 * i] for i in range(8)]
    assert flush.batches == [[0, 1, 2, 3], [4, 5, 6, 7]]


async def test_submissions_are_never_split_and_an_oversized_one_goes_alone():
    flush = Recorder()
    async with MicroBatcher(flush, window=0.01, max_items=3) as batcher:
        results = await asyncio.gather(batcher.submit([1, 2]), batcher.submit([3, 4]),
                                       batcher.submit(list(range(10, 15))))
    assert results == [[2, 4], [6, 8], [20, 22, 24, 26, 28]]
    assert flush.batches == [[1, 2], [3, 4], [10, 11, 12, 13, 14]]


async def test_an_empty_submission_returns_at_once():
    flush = Recorder()
    async with MicroBatcher(flush, window=30.0, max_items=4) as batcher:
        assert await asyncio.wait_for(batcher.submit([]), 1) == []
    assert flush.batches == []


async def test_an_error_reaches_every_submitter_of_the_batch_and_the_next_batch_still_runs():
    flush = Recorder(fail_on=2)
    async with MicroBatcher(flush, window=0.02, max_items=10) as batcher:
        results = await asyncio.gather(batcher.submit([1]), batcher.submit([2]), batcher.submit([3]),
                                       return_exceptions=True)
        assert all(isinstance(r, RuntimeError) and str(r) == "store down" for r in results)
        assert await batcher.submit([5]) == [10]
    assert flush.batches == [[1, 2, 3], [5]]


async def test_an_error_marked_for_retry_alone_fails_only_the_culprit():
    flush = Recorder(fail_on=2, error=ConfigError("bad item"))
    async with MicroBatcher(flush, window=0.02, max_items=10,
                            retry_alone=lambda exc: isinstance(exc, ConfigError)) as batcher:
        results = await asyncio.gather(batcher.submit([1]), batcher.submit([2]), batcher.submit([3]),
                                       return_exceptions=True)
    assert results[0] == [2] and results[2] == [6]
    assert isinstance(results[1], ConfigError)
    assert flush.batches == [[1, 2, 3], [1], [2], [3]]


async def test_a_flush_returning_too_few_results_fails_its_submitters():
    async def short(items: list[int]) -> list[int]:
        return items[:-1]

    async with MicroBatcher(short, window=0.0, max_items=10) as batcher:
        with pytest.raises(ValueError, match="2 results for 3 items"):
            await batcher.submit([1, 2, 3])


async def test_a_cancelled_submitter_leaves_the_batch_and_the_others_are_served():
    flush = Recorder()
    async with MicroBatcher(flush, window=0.05, max_items=10) as batcher:
        first = asyncio.create_task(batcher.submit([1]))
        doomed = asyncio.create_task(batcher.submit([2]))
        last = asyncio.create_task(batcher.submit([3]))
        await asyncio.sleep(0.01)
        doomed.cancel()
        assert await first == [2] and await last == [6]
        with pytest.raises(asyncio.CancelledError):
            await doomed
    assert flush.batches == [[1, 3]]


async def test_cancelling_a_submitter_whose_batch_is_in_flight_does_not_disturb_the_batch():
    flush = Recorder()
    flush.release.clear()
    async with MicroBatcher(flush, window=0.0, max_items=10) as batcher:
        doomed = asyncio.create_task(batcher.submit([1]))
        kept = asyncio.create_task(batcher.submit([2]))
        while not flush.batches:
            await asyncio.sleep(0.001)
        doomed.cancel()
        await asyncio.sleep(0)
        flush.release.set()
        assert await asyncio.wait_for(kept, 1) == [4]
        assert doomed.cancelled()


async def test_at_most_concurrency_batches_run_at_once_and_waiting_items_make_the_next_batch():
    flush = Recorder()
    flush.release.clear()
    async with MicroBatcher(flush, window=0.0, max_items=100, concurrency=1) as batcher:
        first = asyncio.create_task(batcher.submit([1]))
        while not flush.batches:
            await asyncio.sleep(0.001)
        later = [asyncio.create_task(batcher.submit([i])) for i in (2, 3, 4)]
        await asyncio.sleep(0.02)
        assert flush.batches == [[1]]  # the next batch waits for the slot
        flush.release.set()
        assert await first == [2]
        assert [await t for t in later] == [[4], [6], [8]]
    assert flush.batches == [[1], [2, 3, 4]]
    assert flush.most_running == 1


async def test_closing_releases_waiting_and_in_flight_submitters_and_refuses_new_ones():
    flush = Recorder()
    flush.release.clear()  # the first batch never finishes by itself
    batcher = MicroBatcher(flush, window=0.0, max_items=1)
    in_flight = asyncio.create_task(batcher.submit([1]))
    while not flush.batches:
        await asyncio.sleep(0.001)
    waiting = asyncio.create_task(batcher.submit([2]))  # its slot never frees
    await asyncio.sleep(0.01)
    await asyncio.wait_for(batcher.aclose(), 1)
    for task in (in_flight, waiting):
        with pytest.raises(TransientError, match="closed"):
            await asyncio.wait_for(task, 1)
    with pytest.raises(TransientError, match="closed"):
        await batcher.submit([3])


async def test_a_sender_that_dies_leaves_nobody_waiting(monkeypatch: pytest.MonkeyPatch):
    async with MicroBatcher(Recorder(), window=0.0, max_items=10) as batcher:
        def broken() -> list:
            raise RuntimeError("bug")

        monkeypatch.setattr(batcher, "_take", broken)
        with pytest.raises(TransientError, match="bug"):
            await asyncio.wait_for(batcher.submit([1]), 1)


def test_settings_out_of_range_are_refused():
    with pytest.raises(ConfigError):
        MicroBatcher(Recorder(), window=-1, max_items=1)
    with pytest.raises(ConfigError):
        MicroBatcher(Recorder(), window=0, max_items=0)
