"""Concurrency benchmark: GraphRAG questions over the gateway's REST API with 1, 10 and 50 clients at
once, on the in-process bus and on RabbitMQ, offline (no LLM configured). Prints queries/s, p50 and
p95 per level beside a reference measured in the same run; never asserts on timing.

How it runs
  * For each bus, `tg-launch` in a child process with the bundled corpus loaded, as bench/soak.py
    starts it (its helpers, imported): stores in a temporary directory, offline extraction and
    answering, the bundled embedding model; on RabbitMQ a vhost of its own, deleted afterwards.
  * Questions are made from the collection's own entity labels (soak's templates, no fixed pool), so
    few repeat and caches do not make the run trivial. A level of N clients is N workers each asking
    one question after another (POST /api/v1/flow/default/service/graph-rag, non-streaming, explain
    on) until `--rounds`×N questions are answered; latency is from sending to the whole reply.
  * Reference, in the same run and at the same concurrency: the `ping` service through the same
    gateway route (the gateway, the bus and the runtime with no work behind them), and the one-client
    GraphRAG latency (what a question costs with nothing to wait for). Each row also gives the
    stack's CPU time per answer (/proc, the process and its children), which other load on the
    machine moves far less than latency; on a noisy machine it and the ratios to one client are the
    figures to compare.
  * `--py-spy FILE` records the stack process with py-spy during the largest level (speedscope JSON
    per bus: FILE with the bus name before its suffix); py-spy must be installed. `--no-explain`
    asks without explain events, to tell their cost apart; `--url` measures a running stack.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from graph_rag import pct  # bench/ is on sys.path when this script runs
from soak import BROKER, RabbitVhost, Stack, _children, ask, entity_labels, launch, load_corpus, questions, stop

from tracegraph.cli.api import Api

FLOW = "default"
# py-spy installed beside this interpreter (a venv's bin/) counts even when that is not on PATH.
PY_SPY = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU time of `pid` and its descendants so far (None: not known)."""
    if pid is None:
        return None
    total, todo, tick = 0, [pid], os.sysconf("SC_CLK_TCK")
    while todo:
        current = todo.pop()
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat(5)
            todo += _children(current)
    return total / tick


@dataclass
class Level:
    """One measured round: `clients` workers, every latency, the errors by kind."""

    service: str
    clients: int
    latencies: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    cpu: float | None = None  # CPU seconds the stack spent on the round

    @property
    def cpu_ms(self) -> float | None:
        """The stack's CPU time per answer: machine noise moves it far less than latency."""
        return self.cpu * 1000 / len(self.latencies) if self.cpu is not None and self.latencies else None

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def ms(self, q: float) -> float:
        return pct(self.latencies, q) * 1000 if self.latencies else 0.0

    def row(self, backend: str) -> str:
        errors = ", ".join(f"{k}×{v}" for k, v in self.errors.most_common(2)) or "0"
        cpu = f"{self.cpu_ms:>9.2f}" if self.cpu_ms is not None else f"{'-':>9}"
        return (f"{backend:>9} {self.service:>10} {self.clients:>8} {len(self.latencies):>8} {self.rate:>8.1f} "
                f"{self.ms(0.5):>9.1f} {self.ms(0.95):>9.1f} {cpu}  {errors}")


HEADER = (f"{'bus':>9} {'service':>10} {'clients':>8} {'asked':>8} {'q/s':>8} {'p50 ms':>9} {'p95 ms':>9} "
          f"{'CPU ms/q':>9}  errors")


async def measure(session: aiohttp.ClientSession, url: str, service: str, bodies: list[dict],
                  clients: int, pid: int | None = None) -> Level:
    """`clients` workers share `bodies`, each asking one at a time; `pid`: the stack, for its CPU time."""
    level = Level(service, clients)
    todo = iter(bodies)

    async def worker() -> None:
        for body in todo:
            started = time.perf_counter()
            error = await ask(session, url, FLOW, service, body, False)
            level.latencies.append(time.perf_counter() - started)
            if error:
                level.errors[error[0]] += 1

    begun, cpu = time.perf_counter(), cpu_seconds(pid)
    await asyncio.gather(*(worker() for _ in range(clients)))
    level.seconds = time.perf_counter() - begun
    if cpu is not None:
        level.cpu = cpu_seconds(pid) - cpu
    return level


@contextlib.contextmanager
def recording(pid: int, target: Path | None):
    """py-spy record of `pid` (and its children) while the block runs; nothing without a target."""
    if target is None:
        yield
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    spy = subprocess.Popen([PY_SPY, "record", "--pid", str(pid), "--subprocesses", "--format", "speedscope",
                            "--rate", "100", "--output", str(target)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield
    finally:
        spy.send_signal(signal.SIGINT)
        try:
            _, err = spy.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            spy.kill()
            err = b"timed out writing"
        if spy.returncode not in (0, None) and not target.exists():
            print(f"py-spy failed: {err.decode(errors='replace')[-300:]}", flush=True)
        else:
            print(f"py-spy profile of the {target.stem} run written to {target}", flush=True)


async def bench_bus(bus: str, args: argparse.Namespace) -> list[Level]:
    with contextlib.ExitStack() as exits:
        stack: Stack | None = None
        if args.url:
            url, pid, where = args.url.rstrip("/") + "/", args.pid, args.url
        else:
            data = Path(exits.enter_context(tempfile.TemporaryDirectory(prefix="tg-concurrency-")))
            pubsub_url = exits.enter_context(RabbitVhost(args.pubsub_url)).url if bus == "rabbitmq" else None
            stack = await launch(argparse.Namespace(pubsub=bus, port=args.port, tracemalloc=0), data, pubsub_url)
            url, pid = stack.url, stack.proc.pid
            where = f"tg-launch pid {pid}" + (f", {pubsub_url}" if pubsub_url else "")
        try:
            print(f"\n== {bus} ==  {where}", flush=True)
            return await levels_of(bus, url, pid, args)
        finally:
            if stack is not None:
                await stop(stack)


async def levels_of(bus: str, url: str, pid: int | None, args: argparse.Namespace) -> list[Level]:
    """Load the corpus, then ping and GraphRAG at each client count."""
    api = Api(url)
    started = time.perf_counter()
    if not args.no_load:
        chunks = await load_corpus(api, args.collection)
        print(f"corpus: {chunks} chunks loaded and extracted in {time.perf_counter() - started:.1f}s", flush=True)
    labels = await entity_labels(api, FLOW, args.collection)
    wanted = args.warmup + sum(max(args.min_questions, args.rounds * n) for n in args.clients)
    asked = iter(questions(labels, wanted, 0.0, args.seed))
    print(f"questions: {wanted} from soak's templates over {len(labels)} entity labels\n", flush=True)
    levels: list[Level] = []
    timeout = aiohttp.ClientTimeout(total=args.timeout)
    connector = aiohttp.TCPConnector(limit=max(args.clients) * 2)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        def bodies(count: int) -> list[dict]:
            return [{"query": next(asked), "collection": args.collection, "explain": not args.no_explain}
                    for _ in range(count)]

        await measure(session, url, "graph-rag", bodies(args.warmup), 1)  # caches, the first passage graph
        print(HEADER, flush=True)
        for clients in args.clients:
            count = max(args.min_questions, args.rounds * clients)
            ping = await measure(session, url, "ping", [{"text": f"ping {n}"} for n in
                                                        range(max(args.pings, clients * 20))], clients, pid)
            print(ping.row(bus), flush=True)
            spy = None
            if args.py_spy and pid and clients == max(args.clients):
                spy = args.py_spy.with_name(f"{args.py_spy.stem}-{bus}{args.py_spy.suffix}")
            with recording(pid, spy):
                answered = await measure(session, url, "graph-rag", bodies(count), clients, pid)
            print(answered.row(bus), flush=True)
            levels += [ping, answered]
    return levels


def summary(results: dict[str, list[Level]]) -> None:
    print("\nsummary: GraphRAG over the gateway, offline; the ratios are to the same bus with one client, "
          "ping is the same route with no work behind it")
    print(f"{'bus':>9} {'clients':>8} {'q/s':>8} {'p50 ms':>9} {'p95 ms':>9} {'CPU ms/q':>9} {'p50 ×':>7} "
          f"{'q/s ×':>7} {'CPU ×':>7} {'ping q/s':>9} {'ping p50':>9}")
    for bus, levels in results.items():
        rag = [lv for lv in levels if lv.service == "graph-rag"]
        pings = {lv.clients: lv for lv in levels if lv.service == "ping"}
        if not rag:
            continue
        one = rag[0]
        for lv in rag:
            ping = pings.get(lv.clients)
            cpu = f"{lv.cpu_ms:>9.1f}" if lv.cpu_ms is not None else f"{'-':>9}"
            cpu_ratio = f"{lv.cpu_ms / one.cpu_ms:>7.2f}" if lv.cpu_ms and one.cpu_ms else f"{'-':>7}"
            print(f"{bus:>9} {lv.clients:>8} {lv.rate:>8.1f} {lv.ms(0.5):>9.0f} {lv.ms(0.95):>9.0f} {cpu} "
                  f"{lv.ms(0.5) / max(one.ms(0.5), 1e-9):>7.1f} {lv.rate / max(one.rate, 1e-9):>7.2f} {cpu_ratio} "
                  f"{ping.rate if ping else 0:>9.0f} {ping.ms(0.5) if ping else 0:>9.1f}")


async def run(args: argparse.Namespace) -> None:
    print(f"concurrency benchmark: GraphRAG over REST, clients {','.join(map(str, args.clients))}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", flush=True)
    results: dict[str, list[Level]] = {}
    for bus in args.pubsub:
        if bus == "rabbitmq" and not shutil.which("rabbitmqctl"):
            print("\n== rabbitmq ==  skipped: no rabbitmqctl to make a vhost with")
            continue
        results[bus] = await bench_bus(bus, args)
    summary(results)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pubsub", type=lambda s: [b.strip() for b in s.split(",") if b.strip()],
                   default=["inproc", "rabbitmq"], help="buses to measure, in turn [inproc,rabbitmq]")
    p.add_argument("--pubsub-url", default=BROKER, help=f"RabbitMQ; a fresh vhost is made on it [{BROKER}]")
    p.add_argument("--clients", type=lambda s: [int(x) for x in s.split(",")], default=[1, 10, 50],
                   help="comma-separated client counts [1,10,50]")
    p.add_argument("--rounds", type=int, default=6, metavar="R",
                   help="questions per level = R × clients (at least --min-questions) [6]")
    p.add_argument("--min-questions", type=int, default=40, metavar="N", help="fewest questions per level [40]")
    p.add_argument("--warmup", type=int, default=5, metavar="N", help="questions asked before measuring [5]")
    p.add_argument("--pings", type=int, default=300, metavar="N",
                   help="ping requests per level (at least 20 per client) [300]")
    p.add_argument("--no-explain", action="store_true",
                   help='ask with "explain": false (no explain events sent or stored), to tell their cost apart')
    p.add_argument("--seed", type=int, default=11, help="random seed of the questions [11]")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS", help="per request [300]")
    p.add_argument("--port", type=int, default=18891, help="gateway port of the child stack [18891]")
    p.add_argument("--collection", default="concurrency", help="collection to load and ask [concurrency]")
    p.add_argument("--url", help="measure a gateway that is already running (one bus: name it with --pubsub) "
                   "instead of starting a stack")
    p.add_argument("--pid", type=int, help="with --url: the stack's process id, for --py-spy")
    p.add_argument("--no-load", action="store_true", help="do not load the corpus (it is loaded already)")
    p.add_argument("--py-spy", type=Path, metavar="FILE",
                   help="record the stack with py-spy during the largest level (speedscope JSON)")
    return p


def main() -> None:
    args = parser().parse_args()
    if args.url and len(args.pubsub) != 1:
        raise SystemExit("concurrency: with --url, name the running stack's one bus with --pubsub")
    if args.py_spy and not PY_SPY:
        raise SystemExit("concurrency: --py-spy needs py-spy on PATH (pip install py-spy)")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
