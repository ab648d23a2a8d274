"""Bus benchmark: request/response round trips through the real runtime (config + ping processors)
and one-way durable flow throughput, per backend, with 1 KB bodies. Prints figures beside the aims;
it never asserts on timing, so a slow machine gives low numbers, not a failure."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from tracegraph.base.bus import codec
from tracegraph.base.bus.protocol import Backend
from tracegraph.base.bus.topic import Topic, request_topic, response_topic
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import ConnectError, RequestTimeout
from tracegraph.base.settings import RuntimeSettings
from tracegraph.launch.process import open_backend, run_loop
from tracegraph.launch.stack import Stack, ensure_flow
from tracegraph.schemas.base import Ping, Pong

import naive_rabbitmq  # bench/ is on sys.path when this script runs

FLOW = "bench"
BODY_BYTES = 1024
WINDOW = 256  # in-flight publishes in the pipelined one-way run, and the consumer's prefetch
# (backend, measure) -> aim; round-trip aims hold at concurrency 32, one-way aims for the pipelined run.
AIMS = {("inproc", "rt32"): 20_000, ("rabbitmq", "rt32"): 1_500, ("rabbitmq", "oneway"): 2_600}

Row = tuple[str, str, float | None]  # label, figure text, rate compared with the aim (None: no aim)


def ping(seq: int = 0) -> Ping:
    """A Ping whose encoded body is BODY_BYTES long (at seq 0)."""
    overhead = len(codec.encode(Ping(text="", seq=0))[0])
    return Ping(text="x" * (BODY_BYTES - overhead), seq=seq)


async def workers(count: int, job: Callable[[], Awaitable[bool]]) -> None:
    """Run `count` coroutines, each calling `job` until it returns False: bounded concurrency, no task per call."""
    async def loop() -> None:
        while await job():
            pass
    await asyncio.gather(*(loop() for _ in range(count)))


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))] if sorted_values else 0.0


# ---------------------------------------------------------------- request/response through the runtime

async def drive(client: RequestClient[Ping, Pong], concurrency: int, seconds: float) -> tuple[float, list[float]]:
    """Round trips per second and sorted latencies (s) of `concurrency` callers for `seconds`."""
    latencies: list[float] = []
    message = ping(1)
    deadline = time.perf_counter() + seconds

    async def one() -> bool:
        started = time.perf_counter()
        if started >= deadline:
            return False
        await client.request(message, timeout=30)
        latencies.append(time.perf_counter() - started)
        return True

    begun = time.perf_counter()
    await workers(concurrency, one)
    return len(latencies) / (time.perf_counter() - begun), sorted(latencies)


async def wait_for_ping(client: RequestClient[Ping, Pong], limit: float = 30.0) -> None:
    """Poll until the ping processor has joined the flow and answers."""
    deadline = time.monotonic() + limit
    while True:
        try:
            await client.request(Ping(text="ready?"), timeout=0.5)
            return
        except RequestTimeout:
            if time.monotonic() > deadline:
                raise


@contextlib.asynccontextmanager
async def services_elsewhere(settings: RuntimeSettings):
    """config + ping in their own process (`tg-launch`), as a scale-out deployment runs them."""
    launcher = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "tg-launch"), "--pubsub", settings.pubsub, "--pubsub-url",
        settings.pubsub_url, "--processors", "config,ping", "--flow", "", "--data-dir", str(settings.data_dir),
        "--log-level", "WARNING")
    try:
        yield
    finally:
        launcher.terminate()
        await launcher.wait()


async def round_trips(backend: Backend, settings: RuntimeSettings, levels: list[int], seconds: float,
                      rows: list[Row], split: bool = False) -> None:
    where = "ping in its own process" if split else "one process"
    services = services_elsewhere(settings) if split else Stack(backend, settings, ["config", "ping"])
    async with services:
        for _ in range(60):  # the config service of a fresh process needs a moment to subscribe
            with contextlib.suppress(RequestTimeout):
                await ensure_flow(backend, FLOW, "default", timeout=0.5)
                break
        async with RequestClient(backend, request_topic("ping", FLOW), response_topic("ping", FLOW),
                                 Ping, Pong, owner="bench") as client:
            await wait_for_ping(client)
            for level in levels:
                await drive(client, level, min(1.0, seconds / 4))  # warm-up
                rate, lat = await drive(client, level, seconds)
                rows.append((f"round trips, concurrency {level} ({where})", f"{rate:,.0f} /s",
                             rate if level == 32 else None))
                rows.append(("  latency p50 / p99",
                             f"{percentile(lat, .5) * 1e3:.2f} / {percentile(lat, .99) * 1e3:.2f} ms", None))


# ---------------------------------------------------------------- one-way flow throughput

class Tally:
    """Counts acked deliveries and wakes whoever waits for `target` of them."""

    def __init__(self) -> None:
        self.count, self.target, self.done = 0, 0, asyncio.Event()

    def arm(self, target: int) -> None:
        self.count, self.target = 0, target
        self.done.clear()

    def add(self) -> None:
        self.count += 1
        if self.count >= self.target:
            self.done.set()


async def one_way(backend: Backend, topic: Topic, messages: int, rows: list[Row]) -> None:
    body, props = codec.encode(ping(1))
    tally = Tally()

    async def consume(deliveries) -> None:
        async for delivery in deliveries:
            await delivery.ack()
            tally.add()

    async def run(count: int, window: int) -> tuple[float, int]:
        """Publish `count` with `window` in flight; messages/s from first publish to last ack."""
        tally.arm(count)
        left = iter(range(count))

        async def publish() -> bool:
            if next(left, None) is None:
                return False
            await backend.publish(topic, body, props)
            return True

        begun = time.perf_counter()
        await workers(window, publish)
        try:
            await asyncio.wait_for(tally.done.wait(), timeout=max(30.0, count / 200))
        except TimeoutError:
            pass  # reported as a partial count below
        return tally.count / (time.perf_counter() - begun), tally.count

    async with backend.subscribe(topic, "bench", prefetch=WINDOW) as deliveries:
        consumer = asyncio.create_task(consume(deliveries))
        try:
            await run(50, 1)  # warm-up: declares the exchange once, outside any timed run
            naive = max(1, messages // 10)
            for label, count, window, aim in (("one-way durable, await each", naive, 1, False),
                                              (f"one-way durable, {WINDOW} in flight", messages, WINDOW, True)):
                rate, got = await run(count, window)
                note = "" if got == count else f" (only {got:,}/{count:,} acked: timed out)"
                rows.append((f"{label} ({count:,} msgs)", f"{rate:,.0f} msgs/s{note}", rate if aim else None))
        finally:
            consumer.cancel()
            await asyncio.gather(consumer, return_exceptions=True)


async def drop_rabbitmq_topic(url: str, topic: Topic, subscription: str) -> None:
    """Delete the durable queue and exchange the one-way run left on the broker."""
    import aio_pika
    from tracegraph.base.bus.rabbitmq import queue_name
    connection = await aio_pika.connect(url)
    async with connection:
        channel = await connection.channel()
        await channel.queue_delete(queue_name(topic, subscription))
        await channel.exchange_delete(topic.slug)


async def baseline(url: str, args: argparse.Namespace, messages: int, rows: list[Row]) -> None:
    """The naive aio-pika design, same broker, same run, and how many times faster ours is."""
    body = b"x" * BODY_BYTES
    level = max(args.concurrency)
    naive_rt = await naive_rabbitmq.round_trips(url, level, args.seconds, body)
    naive_oneway = await naive_rabbitmq.one_way(url, max(200, messages // 10), body)
    ours_rt = next((r for label, _, r in rows if label.startswith(f"round trips, concurrency {level} (one")), None)
    ours_oneway = next((r for label, _, r in rows if label.startswith("one-way durable, ") and r), None)
    rows.append((f"naive aio-pika round trips, concurrency {level}", f"{naive_rt:,.0f} /s", None))
    rows.append(("naive aio-pika one-way durable, await each", f"{naive_oneway:,.0f} msgs/s", None))
    if ours_rt:
        rows.append(("  ours / naive, round trips", f"{ours_rt / naive_rt:.2f}x", None))
    if ours_oneway:
        rows.append(("  ours / naive, one-way durable", f"{ours_oneway / naive_oneway:.2f}x", None))


# ---------------------------------------------------------------- driver

async def bench_backend(name: str, args: argparse.Namespace) -> None:
    url = args.rabbitmq_url if name == "rabbitmq" else None
    messages = args.messages or (20_000 if name == "inproc" else 10_000)
    print(f"\n== {name} ==" + (f"  ({url.split('@')[-1]})" if url else ""), flush=True)
    with tempfile.TemporaryDirectory(prefix="tg-bench-") as data_dir:
        settings = RuntimeSettings(pubsub=name, pubsub_url=url, data_dir=Path(data_dir))
        try:
            backend = await open_backend(settings)
        except ConnectError as exc:
            print(f"skipped: {exc}")
            return
        topic = Topic.parse(f"persistent://tg/flow/bench-oneway-{uuid.uuid4().hex[:8]}:{FLOW}")
        rows: list[Row] = []
        failure = None
        try:
            await round_trips(backend, settings, args.concurrency, args.seconds, rows)
            if name != "inproc":
                await round_trips(backend, settings, [max(args.concurrency)], args.seconds, rows, split=True)
            await one_way(backend, topic, messages, rows)
        except Exception as exc:  # e.g. a test elsewhere force-closing the broker's connections
            failure = f"run stopped early: {type(exc).__name__}: {exc}"
        with contextlib.suppress(Exception):
            await backend.aclose()
        if name == "rabbitmq" and failure is None:
            await baseline(url, args, messages, rows)
        if name == "rabbitmq":
            with contextlib.suppress(Exception):  # best effort: leave no durable queue behind
                await drop_rabbitmq_topic(url, topic, "bench")
    print(f"{'measure':<54} {'figure':>16}   aim")
    for label, figure, rate in rows:
        kind = "rt32" if label.startswith("round trips") else "oneway"
        aim = AIMS.get((name, kind)) if rate is not None else None
        verdict = f">= {aim:,} /s  {'met' if rate >= aim else 'SHORT'}" if aim else ""
        print(f"{label:<54} {figure:>16}   {verdict}")
    if failure:
        print(failure)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Measure the message bus: request/response round trips per second with p50/p99 latency "
                    "(through a config + ping stack and a RequestClient), and one-way durable publish→ack "
                    "throughput, with 1 KB bodies. Prints figures only; never fails on slow results.",
        epilog="aims: inproc >= 20,000 round trips/s; rabbitmq >= 1,500 round trips/s at concurrency 32 "
               "and >= 2,600 durable one-way msgs/s. example: python bench/bus.py --backends rabbitmq --seconds 5")
    p.add_argument("--backends", default="inproc,rabbitmq",
                   help="comma-separated backends to measure [inproc,rabbitmq]; an unreachable broker is skipped")
    p.add_argument("--rabbitmq-url", default=os.environ.get("TG_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/"),
                   help="broker for the rabbitmq backend [TG_RABBITMQ_URL, amqp://guest:guest@127.0.0.1:5672/]")
    p.add_argument("--concurrency", default="1,32", type=lambda s: [int(x) for x in s.split(",") if x.strip()],
                   help="comma-separated numbers of concurrent requesters [1,32]")
    p.add_argument("--seconds", type=float, default=3.0, help="measured seconds per concurrency level [3]")
    p.add_argument("--messages", type=int, default=None,
                   help="one-way messages for the pipelined run (a tenth for the await-each run) "
                        "[20000 inproc, 10000 rabbitmq]")
    return p


def main() -> None:
    args = parser().parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    print(f"bus benchmark: {BODY_BYTES}-byte bodies, {args.seconds:g} s per round-trip level, {os.cpu_count()} CPUs")
    for name in [b.strip() for b in args.backends.split(",") if b.strip()]:
        run_loop(bench_backend(name, args))


if __name__ == "__main__":
    main()
