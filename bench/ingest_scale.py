"""Ingest at scale: N real passages (bench/scale_corpus.py: stdlib docstrings, Debian docs, the public
multi-hop samples) loaded through the default flow of an all-in-one `tg-launch` (offline extraction,
in-process bus, bundled embedding model), with GraphRAG and search questions asked every few seconds
during the load and after it. Figures are printed, never asserted.

Printed as it goes: a progress line every --report-every seconds (submitted, chunked, extracted, RSS
of the stack, disk, question latency); at the end passages/s to *submitted*, to *extracted and
indexed* and to *settled*, disk per passage, question p50/p95 per phase and service, timeouts, and the
curve: one row per 10% of N, so that linear or not can be seen.

When is a structure current? What the stack lets one tell, and how this bench tells it:
  * extraction and history: every document chunked and every chunk with its extracted subgraph
    (provenance in urn:graph:source), twice in a row. History is written by the triples writer in
    the same write as the facts, so it is current when the subgraph is.
  * chunk and entity vectors: library_upload.wait_for_vectors (the chunk index answers >= min(chunks,
    1000) and the entity index stops growing; it cannot count past 1000).
  * keyword and passage indexes: no count or status exists; multihop_public.wait_indexes's heuristic
    (top hits of a few questions unchanged between two probes). Printed as a heuristic.
  * communities and RAPTOR tree: their `status` operation (it waits for a running refresh); settled
    when the tree covers every chunk, each status that reports its `state` and `coverage` says
    current and complete, and neither reports a newer update for longer than the processors'
    micro-batch window (TG_DERIVED_SETTLE, default 10 s). Updates still queued in the window cannot
    be seen from outside; hence the quiet period.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

import multihop_public as mp  # noqa: E402
import scale_corpus  # noqa: E402
import soak  # noqa: E402
from multihop_metrics import percentile  # noqa: E402

from tracegraph.cli.api import Api  # noqa: E402
from tracegraph.cli.library_upload import process, wait_for_vectors  # noqa: E402

FLOW = mp.FLOW
SERVICES = ("graph-rag", "search")
DERIVED = ("community", "raptor")
PHASES = ("loading", "settling", "after")


# -- what is measured ------------------------------------------------------------------------------

@dataclass
class Asked:
    at: float  # seconds since the load began
    phase: str
    service: str
    seconds: float
    error: str | None


@dataclass
class Sample:
    """One look at the collection's progress."""

    at: float
    submitted: int
    documents: int
    chunks: int
    extracted: int
    rss_mb: float
    disk_mb: float


@dataclass
class Run:
    passages: list[scale_corpus.Passage]
    began: float = field(default_factory=time.perf_counter)
    phase: str = "loading"
    submit_times: list[float] = field(default_factory=list)  # elapsed at each submission, in order
    asked: list[Asked] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    marks: dict[str, float] = field(default_factory=dict)  # submitted / extracted / indexed / settled -> elapsed

    def elapsed(self) -> float:
        return time.perf_counter() - self.began


def disk_mb(folder: Path) -> float:
    """Space the folder's files take on disk (du), in MB (MiB)."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                continue
    return total / 2**20


def ms(values: list[float], q: float) -> str:
    """The q-th percentile of latencies in seconds, in ms, or a dash for none."""
    found = percentile(values, q)
    return f"{found * 1000:.0f}" if found is not None else "-"


def p95_ms(values: list[float]) -> str:
    return ms(values, 95)


def rate(count: float, at: float | None, before: float) -> str:
    return f"{count / (at - before):8.2f}" if at and at > before else f"{'-':>8}"


# -- the load --------------------------------------------------------------------------------------

async def submit_all(api: Api, run: Run, collection: str, in_flight: int) -> None:
    """Every passage as one text/plain document, `in_flight` at a time, as multihop_public does."""
    gate = asyncio.Semaphore(in_flight)

    async def one(passage: scale_corpus.Passage) -> None:
        async with gate:
            reply = await api.request("librarian", {
                "operation": "add-document", "collection": collection,
                "document-metadata": {"id": "", "kind": "text/plain", "title": passage.title,
                                      "collection": collection},
                "content": base64.b64encode(passage.text.encode()).decode()})
            await process(api, reply["document-metadata"]["id"], FLOW, collection)
            run.submit_times.append(run.elapsed())

    await asyncio.gather(*(one(p) for p in run.passages))
    run.marks["submitted"] = run.elapsed()


async def progress(api: Api, collection: str) -> tuple[int, int, int]:
    """(documents chunked, chunks, chunks with their subgraph) of the collection."""
    reply = await api.flow_service(FLOW, "sparql", {"query": mp.COLLECTION_PROGRESS, "collection": collection,
                                                    "timeout": 300})
    row = (reply.get("bindings") or [{}])[0]
    return tuple(int(row.get(k, {}).get("v", 0)) for k in ("docs", "chunks", "done"))  # type: ignore[return-value]


async def watch(api: Api, run: Run, collection: str, pid: int, data_dir: Path, every: float) -> None:
    """A progress line every `every` seconds until cancelled; marks `extracted` once every document
    is chunked and every chunk extracted on two looks in a row."""
    steady = 0
    while True:
        try:
            docs, chunks, done = await progress(api, collection)
        except Exception as exc:  # a slow or refused count must not end the watch; the next look retries
            print(f"  {run.elapsed():7.0f} s  progress count failed: {type(exc).__name__}: {exc}", flush=True)
            await asyncio.sleep(every)
            continue
        sample = Sample(run.elapsed(), len(run.submit_times), docs, chunks, done, soak.rss_mb(pid), disk_mb(data_dir))
        run.samples.append(sample)
        recent = [a.seconds for a in run.asked if a.at + a.seconds > sample.at - every and not a.error]
        errors = sum(1 for a in run.asked if a.error)
        print(f"  {sample.at:7.0f} s  {run.phase:<8} submitted {sample.submitted}/{len(run.passages)}  "
              f"chunked {docs}  extracted {done}/{chunks} chunks  RSS {sample.rss_mb:.0f} MB  "
              f"disk {sample.disk_mb:.0f} MB  questions {len(run.asked)} (p95 {p95_ms(recent)} ms lately, "
              f"{errors} failed)", flush=True)
        complete = "submitted" in run.marks and docs >= len(run.passages) and done >= chunks > 0
        steady = steady + 1 if complete else 0
        if steady >= 2 and "extracted" not in run.marks:
            run.marks["extracted"] = sample.at
        await asyncio.sleep(every)


async def until(run: Run, mark: str, timeout: float) -> None:
    """Wait for the watch to set `mark`; a chunk whose extraction failed never gets its subgraph,
    so the wait is bounded and the figures so far are still printed."""
    deadline = time.monotonic() + timeout
    while mark not in run.marks:
        if time.monotonic() > deadline:
            raise SystemExit(f"ingest_scale: not {mark} after {timeout:.0f} s (see the stack log's errors below)")
        await asyncio.sleep(0.5)


# -- questions -------------------------------------------------------------------------------------

async def ask_while(run: Run, url: str, collection: str, every: float, timeout: float,
                    stop: asyncio.Event) -> None:
    """One question every `every` seconds, GraphRAG and search in turn, about a passage submitted
    already ("What is <its subject>?"), until `stop` is set."""
    asked = 0
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
        while not stop.is_set():
            started = time.perf_counter()
            known = len(run.submit_times)
            if known:
                passage = run.passages[(asked * 7919) % known]  # a stride over what is loaded so far
                service = SERVICES[asked % len(SERVICES)]
                body = {"query": f"What is {passage.subject}?", "collection": collection}
                phase, at = run.phase, run.elapsed()
                error = await soak.ask(session, url, FLOW, service, body, stream=False)
                run.asked.append(Asked(at, phase, service, time.perf_counter() - started,
                                       error[0] if error else None))
                asked += 1
            with_rest = every - (time.perf_counter() - started)
            try:
                await asyncio.wait_for(stop.wait(), max(with_rest, 0.1))
            except TimeoutError:
                pass


# -- settling --------------------------------------------------------------------------------------

async def wait_derived(api: Api, collection: str, chunks: int, quiet: float, timeout: float,
                       every: float) -> dict[str, dict] | None:
    """The community and RAPTOR status until the tree covers every chunk and neither structure was
    updated for `quiet` seconds; None at the timeout."""
    deadline = time.monotonic() + timeout
    last_change: dict[str, tuple[str | None, float]] = {}
    while time.monotonic() < deadline:
        statuses = {kind: await api.flow_service(FLOW, kind, {"operation": "status", "collection": collection})
                    for kind in DERIVED}
        now = time.monotonic()
        for kind, status in statuses.items():
            if last_change.get(kind, (None, 0.0))[0] != status.get("updated") or kind not in last_change:
                last_change[kind] = (status.get("updated"), now)
        covered = statuses["raptor"].get("counts", {}).get("passages", 0)
        still = min(now - since for _, since in last_change.values())
        print(f"    derived: RAPTOR covers {covered}/{chunks} chunks ({statuses['raptor'].get('mode')}), communities "
              f"{describe(statuses['community'])}; no update for {still:.0f} s", flush=True)
        if covered >= chunks and still >= quiet and all(is_current(s) for s in statuses.values()):
            return statuses
        await asyncio.sleep(every)
    return None


def is_current(status: dict) -> bool:
    """Updated at least once, and, where the processor says (`state`, `coverage`), current and
    covering all of the collection."""
    coverage = status.get("coverage") or {}
    gaps = [kind for kind in ("passages", "entities")
            if coverage.get(f"{kind}-covered", 0) < coverage.get(f"{kind}-total", 0)]
    return bool(status.get("updated")) and status.get("state") in (None, "current") and not gaps


def describe(status: dict) -> str:
    counts = status.get("counts") or {}
    shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none yet"
    said = [f"{k} {v}" for k, v in sorted((status.get("coverage") or {}).items())]
    said += [status["state"]] if status.get("state") else []
    return f"{shown} (last run {status.get('mode')}, {status.get('duration_ms')} ms{''.join('; ' + x for x in said)})"


async def settle(api: Api, run: Run, collection: str, args: argparse.Namespace) -> None:
    chunks = run.samples[-1].chunks
    await wait_for_vectors(api, FLOW, collection, chunks, args.settle_timeout)
    run.marks["indexed"] = run.elapsed()
    print(f"  extracted and indexed at {run.marks['indexed']:.0f} s ({chunks} chunks); waiting for the "
          "keyword and passage indexes (heuristic: top hits unchanged on two probes)", flush=True)
    probe = SimpleNamespace(name=collection, questions=[{"question": f"What is {p.subject}?"}
                                                        for p in run.passages[-3:]])
    await mp.wait_indexes(api, probe, timeout=args.settle_timeout)
    run.marks["keyword+passage indexes"] = run.elapsed()
    statuses = await wait_derived(api, collection, chunks, args.quiet, args.settle_timeout, args.report_every)
    if statuses is None:
        print(f"  communities and RAPTOR tree still changing after {args.settle_timeout:.0f} s: NOT settled", flush=True)
        return
    run.marks["settled"] = run.elapsed()
    for kind, status in statuses.items():
        print(f"  {kind}: {describe(status)}", flush=True)


# -- the report ------------------------------------------------------------------------------------

def logged_errors(log: Path) -> dict[str, int]:
    """ERROR lines of the stack's log by logger and message, so that failures under load are seen."""
    found: dict[str, int] = {}
    text = log.read_text(errors="replace") if log.exists() else ""
    for line in text.splitlines():
        if " ERROR " in line:
            what = line.split(" ERROR ", 1)[1]
            found[what] = found.get(what, 0) + 1
    return found


def report(run: Run, data_dir: Path) -> None:
    n = len(run.passages)
    print(f"\npassages: {n} ({', '.join(f'{k} {v}' for k, v in scale_corpus.counts(run.passages).items())})")
    for mark in ("submitted", "extracted", "indexed", "keyword+passage indexes", "settled"):
        at = run.marks.get(mark)
        print(f"  {mark:<24} " + (f"at {at:7.0f} s  {n / at:6.2f} passages/s" if at else "not reached"))
    print("  history                  current with extraction (written by the triples writer with each fact)")
    last = run.samples[-1] if run.samples else None
    if last:
        peak = max(s.rss_mb for s in run.samples)
        print(f"  RSS of the stack         {last.rss_mb:.0f} MB at the end, {peak:.0f} MB at most")
        print(f"  disk                     {disk_mb(data_dir):.1f} MB, {disk_mb(data_dir) * 1024 / n:.1f} KB per passage")
    print("\nquestions (\"What is <subject>?\" about loaded passages):")
    print(f"  {'phase':<9}{'service':<11}{'asked':>6}{'p50 ms':>8}{'p95 ms':>8}  failures")
    for phase in PHASES:
        for service in SERVICES:
            rows = [a for a in run.asked if a.phase == phase and a.service == service]
            if rows:
                ok = [a.seconds for a in rows if not a.error]
                errors: dict[str, int] = {}
                for a in rows:
                    if a.error:
                        errors[a.error] = errors.get(a.error, 0) + 1
                print(f"  {phase:<9}{service:<11}{len(rows):>6}{ms(ok, 50):>8}{p95_ms(ok):>8}  "
                      + (", ".join(f"{k}×{v}" for k, v in errors.items()) or "0"))
    timeouts = sum(1 for a in run.asked if a.error and "timeout" in a.error.lower())
    print(f"  request timeouts: {timeouts}")
    errors = logged_errors(data_dir / "stack.log")
    print(f"\nstack log: {sum(errors.values())} ERROR lines" + "".join(f"\n  {n}× {what}" for what, n in errors.items()))
    print_curve(run)


def crossing(samples: list[Sample], target: float) -> float | None:
    """When the extracted chunks reached `target`, interpolated between the two looks around it."""
    before = None
    for sample in samples:
        if target > 0 and sample.extracted >= target:
            if before is None or sample.extracted == before.extracted:
                return sample.at
            share = (target - before.extracted) / (sample.extracted - before.extracted)
            return before.at + share * (sample.at - before.at)
        before = sample
    return None


def print_curve(run: Run) -> None:
    """Per 10% of N: when it was submitted and when that share of the chunks was extracted, the rate
    over that tenth, the RSS then and the p95 of questions asked while that tenth was extracted."""
    n = len(run.passages)
    total_chunks = run.samples[-1].chunks if run.samples else 0
    print("\ncurve (per 10% of N; extraction times interpolated between progress looks, RSS at the next look):")
    print(f"  {'share':>5} {'submitted s':>11} {'sub p/s':>8} {'extracted s':>11} {'ext p/s':>8} "
          f"{'RSS MB':>7} {'q p95 ms':>8}")
    previous_sub = previous_ext = 0.0
    for tenth in range(1, 11):
        index = max(1, n * tenth // 10) - 1
        sub_at = run.submit_times[index] if index < len(run.submit_times) else None
        ext_at = crossing(run.samples, total_chunks * tenth / 10)
        seen = next((s for s in run.samples if ext_at is not None and s.at >= ext_at), None)
        window = [a.seconds for a in run.asked if not a.error and previous_ext < a.at <= (ext_at or 0)]
        print(f"  {tenth * 10:>4}% {sub_at or 0:>11.0f} {rate(n / 10, sub_at, previous_sub)} {ext_at or 0:>11.0f} "
              f"{rate(n / 10, ext_at, previous_ext)} {seen.rss_mb if seen else 0:>7.0f} {p95_ms(window):>8}")
        previous_sub, previous_ext = sub_at or previous_sub, ext_at or previous_ext


# -- main ------------------------------------------------------------------------------------------

async def run_bench(args: argparse.Namespace, data_dir: Path) -> None:
    started = time.perf_counter()
    passages = scale_corpus.build(args.passages)
    print(f"corpus: {len(passages)} passages in {time.perf_counter() - started:.1f} s — "
          + ", ".join(f"{k} {v}" for k, v in scale_corpus.counts(passages).items())
          + f"; code {mp.code_version()}", flush=True)
    if len(passages) < args.passages:
        print(f"  only {len(passages)} distinct passages on this machine (asked for {args.passages})", flush=True)
    stack = await soak.launch(args, data_dir, None)
    print(f"stack: tg-launch pid {stack.proc.pid}, data {data_dir}, gateway {stack.url}", flush=True)
    api = Api(stack.url, timeout=args.timeout * 10)
    run = Run(passages)
    stop = asyncio.Event()
    asker = asyncio.create_task(ask_while(run, stack.url, args.collection, args.ask_every, args.timeout, stop))
    watcher = asyncio.create_task(watch(api, run, args.collection, stack.proc.pid, data_dir, args.report_every))
    try:
        await submit_all(api, run, args.collection, args.in_flight)
        print(f"  all {len(passages)} submitted at {run.marks['submitted']:.0f} s", flush=True)
        await until(run, "extracted", args.settle_timeout)
        run.phase = "settling"
        await settle(api, run, args.collection, args)
        run.phase = "after"
        finished = time.perf_counter() + args.after
        while time.perf_counter() < finished:
            await asyncio.sleep(1)
    finally:
        stop.set()
        await asker
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        if run.samples:
            report(run, data_dir)
        await soak.stop(stack)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--passages", type=int, default=10_000, metavar="N", help="passages to load [10000]")
    p.add_argument("--data-dir", type=Path, help="the stack's data directory (kept afterwards); a fresh empty "
                   "one is needed for disk per passage to mean anything [a temporary one, deleted]")
    p.add_argument("--report-every", type=float, default=30.0, metavar="SECONDS",
                   help="seconds between progress lines (each costs one collection-wide SPARQL count) [30]")
    p.add_argument("--ask-every", type=float, default=5.0, metavar="SECONDS",
                   help="seconds between questions, GraphRAG and search in turn [5]")
    p.add_argument("--after", type=float, default=60.0, metavar="SECONDS",
                   help="keep asking this long once settled [60]")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS", help="per question [60]")
    p.add_argument("--settle-timeout", type=float, default=7200.0, metavar="SECONDS",
                   help="give up waiting for each settling step after this long [7200]")
    p.add_argument("--quiet", type=float, default=25.0, metavar="SECONDS",
                   help="communities and RAPTOR count as settled after this long without an update; more than "
                        "TG_DERIVED_SETTLE (10 s) [25]")
    p.add_argument("--in-flight", type=int, default=mp.IN_FLIGHT, metavar="N", help="documents submitted at once [8]")
    p.add_argument("--collection", default="scale", help="collection to load [scale]")
    p.add_argument("--port", type=int, default=18893, help="gateway port of the stack this bench starts [18893]")
    return p


def main() -> None:
    args = parser().parse_args()
    args.pubsub, args.tracemalloc = "inproc", 0  # what soak.launch reads
    if args.data_dir is not None:
        args.data_dir.mkdir(parents=True, exist_ok=True)
        if any(args.data_dir.iterdir()):
            print(f"note: {args.data_dir} is not empty; disk per passage counts what was there", flush=True)
        asyncio.run(run_bench(args, args.data_dir))
        return
    data_dir = Path(tempfile.mkdtemp(prefix="tg-scale-"))
    try:
        asyncio.run(run_bench(args, data_dir))
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
