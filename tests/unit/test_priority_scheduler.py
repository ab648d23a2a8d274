"""Questions first: the scheduler alone, and a service that runs its deliveries by it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.bus.topic import Topic
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import RemoteError
from tracegraph.base.flow import Flow
from tracegraph.base.llm.local_embed import LocalEmbedder
from tracegraph.base.priority import (
    BULK, INTERACTIVE, PATIENCE, PRIORITY, Busy, PriorityScheduler, priority_of, queue_patience,
)
from tracegraph.base.processor import Processor
from tracegraph.base.specs import Service
from tracegraph.schemas.base import Ping, Pong

pytestmark = pytest.mark.timeout(30)

REQUEST = "non-persistent://tg/request/gated:test"
RESPONSE = "non-persistent://tg/response/gated:test"


def test_unmarked_requests_are_interactive():
    assert priority_of({}) == INTERACTIVE
    assert priority_of({PRIORITY: "urgent?"}) == INTERACTIVE
    assert priority_of({PRIORITY: BULK}) == BULK


def test_a_request_may_wait_half_its_callers_patience():
    assert queue_patience({PATIENCE: "60"}) == 30.0
    assert queue_patience({}) is None
    assert queue_patience({PATIENCE: "soon"}) is None


async def test_bulk_work_leaves_one_slot_for_a_question():
    scheduler = PriorityScheduler(3)
    async with scheduler.turn(BULK), scheduler.turn(BULK):
        third_bulk = asyncio.create_task(_enter(scheduler, BULK))
        await asyncio.sleep(0)
        assert not third_bulk.done() and scheduler.waiting == 1
        async with asyncio.timeout(1):
            async with scheduler.turn(INTERACTIVE):  # the reserved slot
                assert scheduler.running == {INTERACTIVE: 1, BULK: 2}
    await asyncio.wait_for(third_bulk, 1)


async def test_a_waiting_question_starts_before_bulk_work_queued_earlier():
    scheduler = PriorityScheduler(1)
    started: list[str] = []
    async with scheduler.turn(BULK):
        waiters = [asyncio.create_task(_enter(scheduler, BULK, started, "bulk-1")),
                   asyncio.create_task(_enter(scheduler, BULK, started, "bulk-2"))]
        await asyncio.sleep(0)
        waiters.append(asyncio.create_task(_enter(scheduler, INTERACTIVE, started, "question")))
        await asyncio.sleep(0)
    await asyncio.wait_for(asyncio.gather(*waiters), 1)
    assert started == ["question", "bulk-1", "bulk-2"]


async def test_a_request_that_cannot_start_in_time_is_refused_as_busy():
    scheduler = PriorityScheduler(1)
    async with scheduler.turn(BULK):
        with pytest.raises(Busy, match="retry after 1s"):
            async with scheduler.turn(BULK, patience=0.05):
                pytest.fail("must not run")
        assert scheduler.waiting == 0
    async with asyncio.timeout(1), scheduler.turn(BULK):  # the refused one left no slot taken
        assert scheduler.running[BULK] == 1


async def test_a_cancelled_waiter_leaves_no_slot_taken():
    scheduler = PriorityScheduler(1)
    async with scheduler.turn(INTERACTIVE):
        waiter = asyncio.create_task(_enter(scheduler, INTERACTIVE))
        await asyncio.sleep(0)
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
    assert scheduler.running == {INTERACTIVE: 0, BULK: 0}
    async with asyncio.timeout(1), scheduler.turn(BULK):
        pass


async def _enter(scheduler: PriorityScheduler, priority, started: list[str] | None = None, label: str = "") -> None:
    async with scheduler.turn(priority):
        if started is not None:
            started.append(label)
        await asyncio.sleep(0)


class Gated(Processor):
    """Bulk requests hold their slot until `gate` opens; questions answer at once."""

    name = "gated"
    request = Service("request", Ping, Pong, prefetch=16, concurrency=2)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.gate = asyncio.Event()
        self.started: list[str] = []

    def fixed_topics(self):
        return {"request": {"request": REQUEST, "response": RESPONSE}}

    @request.handler
    async def answer(self, ping: Ping, flow: Flow) -> AsyncIterator[Pong]:
        self.started.append(ping.text)
        if ping.text.startswith("bulk"):
            await self.gate.wait()
        yield Pong(text=ping.text)


def _client(bus: InprocBackend, priority, timeout: float = 10.0) -> RequestClient[Ping, Pong]:
    return RequestClient(bus, Topic.parse(REQUEST), Topic.parse(RESPONSE), Ping, Pong,
                         timeout=timeout, priority=priority)


async def test_a_service_answers_a_question_while_its_bulk_work_is_queued():
    bus = InprocBackend()
    async with Gated(bus) as service, _client(bus, BULK) as bulk, _client(bus, INTERACTIVE) as questions:
        loads = [asyncio.create_task(bulk.request(Ping(text=f"bulk-{n}"))) for n in range(4)]
        while len(service.started) < 1:
            await asyncio.sleep(0.01)
        answer = await asyncio.wait_for(questions.request(Ping(text="question")), 5)
        assert answer.text == "question"
        # One bulk request holds the only bulk slot; the question took the reserved one, ahead of
        # the three bulk requests that came before it.
        assert service.started == ["bulk-0", "question"]
        service.gate.set()
        assert sorted(r.text for r in await asyncio.gather(*loads)) == [f"bulk-{n}" for n in range(4)]
        assert service.started[2:] == ["bulk-1", "bulk-2", "bulk-3"]
    await bus.aclose()


async def test_a_busy_service_answers_unavailable_instead_of_silence():
    bus = InprocBackend()
    async with Gated(bus) as service, _client(bus, BULK) as holder, _client(bus, BULK, timeout=0.4) as late:
        held = asyncio.create_task(holder.request(Ping(text="bulk-held")))
        while not service.started:
            await asyncio.sleep(0.01)
        with pytest.raises(RemoteError) as refused:
            await late.request(Ping(text="bulk-late"))
        assert refused.value.type == "unavailable" and "retry after" in str(refused.value)
        assert service.started == ["bulk-held"]  # the refused request never ran
        service.gate.set()
        assert (await held).text == "bulk-held"
    await bus.aclose()


class _Encoding:
    def __init__(self, text: str) -> None:
        self.text, self.ids = text, [0]


class _ScriptedModel(LocalEmbedder):
    """The embedder's own scheduling around a stand-in model that records which texts ran when."""

    def __init__(self) -> None:
        super().__init__(threads=1, batch_size=1)
        self.ran: list[str] = []

    def _encode(self, texts: list[str]) -> list[_Encoding]:
        return [_Encoding(t) for t in texts]

    def _run_batch(self, encodings: list[_Encoding]) -> list[list[float]]:
        time.sleep(0.01)
        self.ran.extend(e.text for e in encodings)
        return [[0.0] for _ in encodings]


async def test_the_model_takes_a_questions_texts_ahead_of_bulk_batches():
    model = _ScriptedModel()
    scheduler = PriorityScheduler(8)

    async def bulk(n: int) -> None:
        async with scheduler.turn(BULK):  # as the embeddings service runs a bulk request
            await model.embed([f"bulk-{n}-{k}" for k in range(6)])

    loads = [asyncio.create_task(bulk(n)) for n in range(3)]
    while not model.ran:
        await asyncio.sleep(0.005)
    async with scheduler.turn(INTERACTIVE):
        await model.embed(["question"])
    await asyncio.gather(*loads)
    await model.aclose()
    # Three bulk requests keep a call each queued for the model's one thread; the question's
    # tokenising and its batch still go next, so at most a few bulk batches ran before it.
    assert model.ran.index("question") <= 3, model.ran
