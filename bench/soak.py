"""Soak benchmark: thousands of GraphRAG and search questions against one long-running stack, with the
stack's memory (RSS) printed as it goes and its growth after warm-up at the end. Prints figures beside
the aim (< 5% growth after warm-up); never asserts.

How it runs
  * The stack is `tg-launch` in a child process (in-process bus by default, `--pubsub rabbitmq` for
    RabbitMQ), stores in a temporary data directory, offline extraction and answering, the bundled
    embedding model. TG_* variables of this shell are not passed on, so the stack is the embedded
    default. On RabbitMQ the stack gets a vhost of its own (`rabbitmqctl add_vhost tg-soak-…`), deleted
    afterwards, so queues of other stacks on the same broker are never touched. `--url` skips all this
    and soaks a gateway that is already running (give `--pid` to see its memory).
  * The bundled corpus (launch/corpus) is loaded through the gateway into the collection
    `--collection` and extraction waited for, as tg-load-text --wait does.
  * Questions are made from the collection's own entity labels (read back by SPARQL) and a dozen
    templates, one- and two-entity, so that few repeat; `--repeat-share` of them come from a small
    fixed pool instead, so caches see repeats too. Even-numbered questions go to GraphRAG, odd ones to
    search: POST /api/v1/flow/{flow}/service/graph-rag and …/search, non-streaming (`--stream`: NDJSON),
    explain on, as a client would send them; `--concurrency` requests in flight.
  * Every `--every` answers the RSS of the stack (the process and its children, from /proc) is printed
    with q/s, latency p50/p95 and errors. The first `--warmup` answers are warm-up; the growth is the
    RSS at the last checkpoint minus the RSS at the end of warm-up.
  * `--tracemalloc FRAMES` runs the stack under tracemalloc (this file wraps tg-launch; slower). At each
    checkpoint the stack writes a snapshot and a census of live objects by type; at the end the lines
    and types that grew most after warm-up are printed. For finding leaks, not for timing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import add_document, process, wait_for_extraction

CORPUS = Path(__file__).resolve().parents[1] / "launch" / "corpus"
BROKER = "amqp://guest:guest@127.0.0.1:5672/"
AIM_PERCENT = 5.0
SERVE_STACK = "--serve-stack"  # argv[1] of the child under --tracemalloc: SNAPSHOT_DIR FRAMES TG_LAUNCH_ARGS…

ONE = ["What does {a} depend on?", "Who owns {a}?", "Who leads {a}?", "Where is {a} based?", "What is {a}?",
       "Tell me about {a}.", "Which organisations work with {a}?", "What risks does {a} face?",
       "Who runs {a} and what does it depend on?", "What happened to {a}?"]
TWO = ["How is {a} connected to {b}?", "What happens to {a} if {b} fails?", "Do {a} and {b} share an owner?",
       "Which of {a} and {b} depends on the other?"]
POOL = ["What does Helios Grid depend on?", "Who runs Helios Grid?", "What does Corvid Analytics do?",
        "Which systems does Orbis Systems build?", "What supplies water to Sable Water Authority?",
        "Who owns the cloud that Skyline runs on?", "Who leads the team that owns Skyline?",
        "What happened in the Eastmarch data centre?"]
LABELS_QUERY = """SELECT DISTINCT ?l WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l .
  FILTER(STRSTARTS(STR(?s), "https://trustgraph.ai/e/")) }"""


# -- memory ----------------------------------------------------------------------------------------

def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def rss_mb(pid: int) -> float:
    """VmRSS of `pid` and all its descendants, in MB (MiB)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            todo += _children(current)
    return total / 1024


# -- the stack -------------------------------------------------------------------------------------

class RabbitVhost:
    """A vhost of our own on the local broker, so that our queues never meet another stack's."""

    def __init__(self, base_url: str) -> None:
        self.name = f"tg-soak-{uuid.uuid4().hex[:8]}"
        self.url = base_url.rstrip("/") + "/" + self.name
        self.user = base_url.split("//", 1)[1].split(":", 1)[0] if "@" in base_url else "guest"

    def __enter__(self) -> "RabbitVhost":
        if not shutil.which("rabbitmqctl"):
            raise SystemExit("soak: --pubsub rabbitmq needs rabbitmqctl to make a vhost of its own; "
                             "or run tg-launch yourself and pass --url")
        for command in (["add_vhost", self.name], ["set_permissions", "-p", self.name, self.user, ".*", ".*", ".*"]):
            subprocess.run(["rabbitmqctl", *command], check=True, capture_output=True, timeout=60)
        return self

    def __exit__(self, *exc: object) -> None:
        subprocess.run(["rabbitmqctl", "delete_vhost", self.name], check=False, capture_output=True, timeout=60)


@dataclass
class Stack:
    proc: asyncio.subprocess.Process
    url: str
    log: Path
    snapshots: Path | None = None


async def launch(args: argparse.Namespace, data_dir: Path, pubsub_url: str | None) -> Stack:
    argv = ["--data-dir", str(data_dir), "--gateway-port", str(args.port)]
    if args.pubsub == "rabbitmq":
        argv += ["--pubsub", "rabbitmq", "--pubsub-url", pubsub_url]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TG_")}
    env.update(TG_LOG_LEVEL="WARNING", TG_EXTRACTOR="offline")
    snapshots = None
    if args.tracemalloc:
        snapshots = data_dir / "snapshots"
        snapshots.mkdir()
        command = [sys.executable, str(Path(__file__).resolve()), SERVE_STACK, str(snapshots),
                   str(args.tracemalloc), *argv]
    else:
        command = [str(Path(sys.executable).parent / "tg-launch"), *argv]
    log = data_dir / "stack.log"
    with log.open("wb") as sink:
        proc = await asyncio.create_subprocess_exec(*command, env=env, stdout=sink, stderr=sink)
    stack = Stack(proc, f"http://127.0.0.1:{args.port}/", log, snapshots)
    api = Api(stack.url)
    for _ in range(600):
        if proc.returncode is not None:
            raise SystemExit(f"soak: the stack exited with {proc.returncode}; see {log}:\n{log.read_text()[-2000:]}")
        with contextlib.suppress(Exception):
            if "default" in (await api.flow("list-flows")).get("flow-ids", []):
                return stack
        await asyncio.sleep(0.2)
    raise SystemExit(f"soak: tg-launch did not come up within 120 s; see {log}")


async def stop(stack: Stack) -> None:
    if stack.proc.returncode is None:
        stack.proc.terminate()
        try:
            await asyncio.wait_for(stack.proc.wait(), 30)
        except TimeoutError:
            stack.proc.kill()
            await stack.proc.wait()


async def load_corpus(api: Api, collection: str) -> int:
    ids = []
    for path in sorted(CORPUS.glob("*.md")):
        meta = await add_document(api, path, collection=collection)
        await process(api, meta["id"], "default", collection)
        ids.append(meta["id"])
    return await wait_for_extraction(api, "default", ids, collection, 300)


# -- questions -------------------------------------------------------------------------------------

async def entity_labels(api: Api, flow: str, collection: str) -> list[str]:
    reply = await api.flow_service(flow, "sparql", {"query": LABELS_QUERY, "collection": collection})
    labels = {row["l"]["v"] for row in reply.get("bindings", []) if "l" in row}
    return sorted(label for label in labels if 2 < len(label) < 60)


def questions(labels: list[str], count: int, repeat_share: float, seed: int) -> list[str]:
    rng = random.Random(seed)
    made: list[str] = []
    for _ in range(count):
        if rng.random() < repeat_share or len(labels) < 2:
            made.append(rng.choice(POOL))
        elif rng.random() < 0.6:
            made.append(rng.choice(ONE).format(a=rng.choice(labels)))
        else:
            a, b = rng.sample(labels, 2)
            made.append(rng.choice(TWO).format(a=a, b=b))
    return made


# -- the soak --------------------------------------------------------------------------------------

@dataclass
class Round:
    latencies: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    started: float = field(default_factory=time.perf_counter)


async def ask(session: aiohttp.ClientSession, url: str, flow: str, service: str, body: dict,
              stream: bool) -> tuple[str, str] | None:
    """One question; None if answered, else (error type, what was said)."""
    target = f"{url}api/v1/flow/{flow}/service/{service}" + ("?stream=true" if stream else "")
    try:
        async with session.post(target, json=body) as response:
            text = await response.text()
    except (aiohttp.ClientError, TimeoutError) as exc:
        return type(exc).__name__, str(exc)
    try:
        reply = json.loads(text.strip().splitlines()[-1] if stream and text.strip() else text)
    except ValueError:
        return f"http-{response.status}-not-json", text[:300]
    error = reply.get("error") if isinstance(reply, dict) else "bad-reply"
    if error:
        return (error.get("type", "error"), error.get("message", "")) if isinstance(error, dict) else (str(error), "")
    if response.status != 200:
        return f"http-{response.status}", text[:300]
    return None


class Checkpoints:
    """RSS (and, under tracemalloc, a snapshot) every `every` answers, printed as a row."""

    def __init__(self, stack: Stack | None, pid: int | None, every: int) -> None:
        self.stack, self.pid, self.every = stack, pid, every
        self.rows: list[tuple[int, float | None]] = []
        self.round = Round()
        self.samples: dict[str, tuple[str, str]] = {}  # error kind -> (question, message) of its first case

    async def take(self, answered: int) -> None:
        if self.stack is not None and self.stack.snapshots is not None:
            await snapshot(self.stack, answered)
        rss = rss_mb(self.pid) if self.pid else None
        self.rows.append((answered, rss))
        r, self.round = self.round, Round()
        ms = sorted(x * 1000 for x in r.latencies)
        rate = len(ms) / (time.perf_counter() - r.started) if ms else 0.0
        p50 = statistics.median(ms) if ms else 0.0
        p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))] if ms else 0.0
        errors = ", ".join(f"{k}×{v}" for k, v in r.errors.most_common(3)) or "0"
        memory = f"{rss:8.1f}" if rss is not None else "       -"
        print(f"{answered:>9} {memory} {rate:>7.1f} {p50:>8.0f} {p95:>8.0f}  {errors}", flush=True)


async def soak(url: str, flow: str, collection: str, asked: list[str], args: argparse.Namespace,
               marks: Checkpoints) -> None:
    services = args.services
    queue: asyncio.Queue[tuple[int, str]] = asyncio.Queue()
    for n, question in enumerate(asked):
        queue.put_nowait((n, question))
    answered = 0
    checkpoint = asyncio.Lock()
    timeout = aiohttp.ClientTimeout(total=args.timeout)
    connector = aiohttp.TCPConnector(limit=args.concurrency)

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal answered
        while not queue.empty():
            n, question = queue.get_nowait()
            service = services[n % len(services)]
            body = {"query": question, "collection": collection, "explain": not args.no_explain}
            started = time.perf_counter()
            error = await ask(session, url, flow, service, body, args.stream)
            marks.round.latencies.append(time.perf_counter() - started)
            if error:
                kind = f"{service}:{error[0]}"
                marks.round.errors[kind] += 1
                marks.samples.setdefault(kind, (question, error[1]))
            answered += 1
            if answered % args.every == 0 or answered == len(asked):
                async with checkpoint:  # the other workers carry on; only this one waits for the figure
                    await marks.take(answered)

    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        await asyncio.gather(*(worker(session) for _ in range(args.concurrency)))


def summary(rows: list[tuple[int, float | None]], warmup: int) -> None:
    measured = [(n, rss) for n, rss in rows if rss is not None]
    if not measured:
        print("\nno RSS figures (give --pid with --url)")
        return
    base = next(((n, rss) for n, rss in measured if n >= warmup), measured[0])
    last = measured[-1]
    growth = last[1] - base[1]
    percent = 100 * growth / base[1]
    after = [(n, rss) for n, rss in measured if n >= base[0]]
    slope = 0.0
    if len(after) >= 2:
        mean_n = statistics.fmean(n for n, _ in after)
        mean_r = statistics.fmean(r for _, r in after)
        spread = sum((n - mean_n) ** 2 for n, _ in after)
        slope = sum((n - mean_n) * (r - mean_r) for n, r in after) / spread * 1000 if spread else 0.0
    verdict = "meets" if percent < AIM_PERCENT else "misses"
    print(f"\nRSS {measured[0][1]:.1f} MB at {measured[0][0]} answers, {base[1]:.1f} MB after warm-up "
          f"({base[0]}), {last[1]:.1f} MB at {last[0]}")
    print(f"growth after warm-up: {growth:+.1f} MB ({percent:+.1f}%), trend {slope:+.1f} MB per 1000 questions; "
          f"{verdict} the aim of < {AIM_PERCENT:g}%")


# -- tracemalloc inside the stack ------------------------------------------------------------------

def census() -> dict[str, int]:
    """Live objects the collector tracks, by type name (module-qualified when not a builtin)."""
    counts: Counter = Counter()
    for obj in gc.get_objects():
        kind = type(obj)
        counts[kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"] += 1
    return dict(counts)


def serve_stack(folder: Path, frames: int, argv: list[str]) -> int:
    """The child under --tracemalloc: tg-launch, plus a SIGUSR1 handler that writes
    `folder/N.snapshot` and `folder/N.json` (census, asyncio tasks) and then `folder/N.done`."""
    tracemalloc.start(frames)
    taken = 0

    def dump(signum: int, frame: object) -> None:
        nonlocal taken
        taken += 1
        gc.collect()
        tasks = -1
        with contextlib.suppress(RuntimeError):
            tasks = len(asyncio.all_tasks())
        tracemalloc.take_snapshot().dump(str(folder / f"{taken}.snapshot"))
        (folder / f"{taken}.json").write_text(json.dumps({"tasks": tasks, "types": census(),
                                                          "traced": tracemalloc.get_traced_memory()}))
        (folder / f"{taken}.done").touch()

    signal.signal(signal.SIGUSR1, dump)
    from tracegraph.launch.all_in_one import main as tg_launch
    return tg_launch(argv)


async def snapshot(stack: Stack, answered: int) -> None:
    before = len(list(stack.snapshots.glob("*.done")))
    stack.proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 300
    while len(list(stack.snapshots.glob("*.done"))) <= before:
        if time.monotonic() > deadline:
            raise SystemExit("soak: the stack wrote no snapshot within 300 s")
        await asyncio.sleep(0.1)
    (stack.snapshots / f"{before + 1}.answered").write_text(str(answered))


def growth_report(folder: Path, warmup: int, top: int) -> None:
    marks = sorted((int(p.read_text()), int(p.stem)) for p in folder.glob("*.answered"))
    if len(marks) < 2:
        return
    first = next((m for m in marks if m[0] >= warmup), marks[0])
    last = marks[-1]
    old = tracemalloc.Snapshot.load(str(folder / f"{first[1]}.snapshot"))
    new = tracemalloc.Snapshot.load(str(folder / f"{last[1]}.snapshot"))
    old_info = json.loads((folder / f"{first[1]}.json").read_text())
    new_info = json.loads((folder / f"{last[1]}.json").read_text())
    traced = (new_info["traced"][0] - old_info["traced"][0]) / 2**20
    print(f"\ntracemalloc, answers {first[0]} → {last[0]}: traced Python memory {traced:+.1f} MB; "
          f"asyncio tasks {old_info['tasks']} → {new_info['tasks']}")
    print(f"top {top} allocation sites by growth:")
    for stat in new.compare_to(old, "traceback")[:top]:
        where = " ← ".join(f"{Path(f.filename).name}:{f.lineno}" for f in reversed(stat.traceback[-4:]))
        print(f"  {stat.size_diff / 1024:>+9.1f} KiB {stat.count_diff:>+8} blocks  {where}")
    grew = Counter(new_info["types"])
    grew.subtract(old_info["types"])
    print("object types by growth in count:")
    for name, diff in grew.most_common(top):
        if diff <= 0:
            break
        print(f"  {diff:>+8}  {name} (now {new_info['types'][name]})")


# -- main ------------------------------------------------------------------------------------------

async def run(args: argparse.Namespace) -> None:
    pubsub_url: str | None = None
    with contextlib.ExitStack() as exits:
        if args.url:
            url, stack, pid = args.url.rstrip("/") + "/", None, args.pid
        else:
            data = Path(exits.enter_context(tempfile.TemporaryDirectory(prefix="tg-soak-")))
            pubsub_url = exits.enter_context(RabbitVhost(args.pubsub_url)).url if args.pubsub == "rabbitmq" else None
            stack = await launch(args, data, pubsub_url)
            url, pid = stack.url, stack.proc.pid
        try:
            api = Api(url)
            where = f"tg-launch pid {pid}, {args.pubsub}" + (f" {pubsub_url}" if pubsub_url else "")
            print(f"stack: {where if stack else url}; gateway {url}; collection {args.collection!r}", flush=True)
            if not args.no_load:
                started = time.perf_counter()
                chunks = await load_corpus(api, args.collection)
                print(f"corpus: {chunks} chunks loaded and extracted in {time.perf_counter() - started:.1f}s")
            labels = await entity_labels(api, args.flow, args.collection)
            asked = questions(labels, args.questions, args.repeat_share, args.seed)
            print(f"questions: {len(asked)} ({len(set(asked))} distinct) from {len(labels)} entity labels, "
                  f"{'/'.join(args.services)} alternating, concurrency {args.concurrency}, warm-up {args.warmup}")
            marks = Checkpoints(stack, pid, args.every)
            print(f"\n{'answered':>9} {'RSS MB':>8} {'q/s':>7} {'p50 ms':>8} {'p95 ms':>8}  errors", flush=True)
            await marks.take(0)
            await soak(url, args.flow, args.collection, asked, args, marks)
            summary(marks.rows, args.warmup)
            for kind, (question, message) in marks.samples.items():
                print(f"first {kind}: {question!r} -> {message}")
            if stack is not None and stack.snapshots is not None:
                growth_report(stack.snapshots, args.warmup, args.top)
        finally:
            if stack is not None:
                await stop(stack)
                if args.keep_log:
                    shutil.copy(stack.log, args.keep_log)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--questions", type=int, default=2000, metavar="N", help="questions to ask [2000]")
    p.add_argument("--concurrency", type=int, default=4, metavar="N", help="requests in flight [4]")
    p.add_argument("--every", type=int, default=200, metavar="N", help="print a checkpoint every N answers [200]")
    p.add_argument("--warmup", type=int, default=200, metavar="N",
                   help="answers counted as warm-up; growth is measured from here [200]")
    p.add_argument("--services", type=lambda s: s.split(","), default=["graph-rag", "search"],
                   help="services asked in turn [graph-rag,search]")
    p.add_argument("--repeat-share", type=float, default=0.2, metavar="F",
                   help="share of questions drawn from a fixed pool of 8, so caches see repeats [0.2]")
    p.add_argument("--stream", action="store_true", help="ask with ?stream=true (NDJSON) instead of one reply")
    p.add_argument("--no-explain", action="store_true",
                   help='ask with "explain": false (no explain events sent or stored), to tell their cost apart')
    p.add_argument("--seed", type=int, default=7, help="random seed of the questions [7]")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS", help="per request [120]")
    stack = p.add_argument_group("the stack")
    stack.add_argument("--pubsub", choices=["inproc", "rabbitmq"], default="inproc",
                       help="bus of the tg-launch this bench starts [inproc]")
    stack.add_argument("--pubsub-url", default=BROKER,
                       help=f"RabbitMQ to use with --pubsub rabbitmq; a fresh vhost is made on it [{BROKER}]")
    stack.add_argument("--port", type=int, default=18890, help="gateway port of the child stack [18890]")
    stack.add_argument("--url", help="soak a gateway that is already running instead of starting a stack (the "
                       "corpus, answers and traces stay in its --collection afterwards)")
    stack.add_argument("--pid", type=int, help="with --url: the stack's process id, for its RSS")
    stack.add_argument("--flow", default="default", help="flow to ask [default]")
    stack.add_argument("--collection", default=None,
                       help="collection to load and ask [soak, or soak-<random> with --url]")
    stack.add_argument("--no-load", action="store_true", help="do not load the corpus (it is loaded already)")
    stack.add_argument("--keep-log", type=Path, metavar="FILE", help="copy the stack's stderr log to FILE")
    leaks = p.add_argument_group("finding leaks")
    leaks.add_argument("--tracemalloc", type=int, default=0, metavar="FRAMES",
                       help="run the stack under tracemalloc with FRAMES frames per allocation and report "
                            "what grew after warm-up (slow; 0 = off) [0]")
    leaks.add_argument("--top", type=int, default=25, metavar="N", help="lines of the tracemalloc report [25]")
    return p


def main() -> None:
    if sys.argv[1:2] == [SERVE_STACK]:
        folder, frames, *argv = sys.argv[2:]
        raise SystemExit(serve_stack(Path(folder), int(frames), argv))
    args = parser().parse_args()
    if args.url and args.tracemalloc:
        raise SystemExit("soak: --tracemalloc works only on a stack this bench starts")
    args.collection = args.collection or ("soak-" + uuid.uuid4().hex[:6] if args.url else "soak")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
