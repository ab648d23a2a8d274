"""History benchmark (issue 16): ingest throughput with history on vs off, storage overhead of the
history, and point-in-time and diff latency, over a generated corpus of dated documents
(bench/temporal_data.py: 20 facts to a document, ~3 years of dates, a `--history` share of the facts
later superseded or retracted).

Ingest: every document is one message, written to two fresh on-disk oxigraph stores in turn. History
off is `store.add(message)`; history on is what TriplesProcessor.store_admitted does
(`HistoryKeeper.admit`, then `Admission.store`: the quads, the records' N-Quads, the removals). Only those calls are timed; building
the message (and the bus) is not. Retractions remove a document as TriplesProcessor.forget does
(`remove_document`, then `HistoryKeeper.retract` with history on). With `--measure N` only the last N
documents go that way; the others are preloaded in bulk to the same end state (temporal_data.preload).
Storage: on-disk size of each store once flushed, and again compacted, and quads per graph. Latency:
`query.snapshot`, `query.diff` and the temporal service's `answer` on the history store, at random
dates and windows; a slow shape stops after 3 runs once `--budget` seconds are spent.

Prints figures; never asserts on timing. The machine's load average is printed: others may share it.

    .venv/bin/python bench/temporal.py                                   # 100k facts, ~5 min
    .venv/bin/python bench/temporal.py --facts 1000000 --measure 2500    # the issue's size, ~25 min
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import resource
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import numpy as np
import pyoxigraph as ox
import temporal_data  # bench/ is on sys.path when this script runs
from tracegraph.base.errors import QueryError
from tracegraph.base.provenance.uris import entity_uri
from tracegraph.base.provenance.vocab import RDF, RDFS, TG
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import (
    ALL_GRAPHS,
    DEFAULT_GRAPH,
    HISTORY_FACTS_GRAPH,
    HISTORY_GRAPH,
    SOURCE_GRAPH,
    CollectionRef,
)
from tracegraph.base.temporal import query
from tracegraph.base.temporal.keeper import HistoryKeeper
from tracegraph.flow.triples.temporal import answer, store_rows
from tracegraph.schemas.dates import canonical
from tracegraph.schemas.temporal import TemporalRequest

REF = CollectionRef("bench", "history")
GRAPHS = [("default", DEFAULT_GRAPH), ("source", SOURCE_GRAPH), ("history", HISTORY_GRAPH),
          ("history-facts", HISTORY_FACTS_GRAPH)]
WINDOWS = [("3 days", timedelta(days=3)), ("30 days", timedelta(days=30)), ("1 year", timedelta(days=365))]
Row = tuple[str, str]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def ms(values: list[float]) -> str:
    return f"p50 {pct(values, .5) * 1e3:,.1f} ms  p95 {pct(values, .95) * 1e3:,.1f} ms"


def disk_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


class Profile:
    """pyinstrument around the history-on calls only (start/stop accumulate), when asked for."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.profiler = None
        if path is not None:
            # A bench-only tool, imported only when asked for: `.venv/bin/pip install pyinstrument`.
            from pyinstrument import Profiler
            self.profiler = Profiler(interval=0.0005)

    def __enter__(self) -> None:
        if self.profiler is not None:
            self.profiler.start()

    def __exit__(self, *exc_info: object) -> None:
        if self.profiler is not None:
            self.profiler.stop()

    def write(self) -> None:
        if self.profiler is not None:
            self.path.write_text(self.profiler.output_text(show_all=False, color=False))


async def ingest(corpus: temporal_data.Corpus, shape: str, off: OxigraphTripleStore, on: OxigraphTripleStore,
                 keeper: HistoryKeeper, start: int, profile: Profile) -> list[Row]:
    """Documents [start, end) one message at a time into both stores, timing each path."""
    spent = {"off": 0.0, "on": 0.0, "admit": 0.0}
    quads = {"off": 0, "on": 0}
    removals: dict[str, list[float]] = {"off": [], "on": []}
    facts = 0

    async def plain(message: temporal_data.Message) -> None:
        started = time.perf_counter()
        await off.add(REF, message.triples)
        spent["off"] += time.perf_counter() - started
        quads["off"] += len(message.triples)

    async def kept(message: temporal_data.Message) -> None:
        with profile:
            started = time.perf_counter()
            admission = await keeper.admit(REF, message.meta, message.triples, message.confidence)
            admitted = time.perf_counter()
            await admission.store(on, REF)
            done = time.perf_counter()
        spent["admit"] += admitted - started
        spent["on"] += done - started
        quads["on"] += len(admission.write) + len(admission.remove) + sum(r.count("\n") for r in admission.records)

    documents = corpus.documents - start
    progress = max(1, documents // 10)
    began = time.perf_counter()
    for i in range(start, corpus.documents):
        message = corpus.message(i, shape)
        facts += message.facts
        for write in ((plain, kept) if i % 2 else (kept, plain)):  # neither store always goes first
            await write(message)
        for doc, at in corpus.retractions.get(i, []):
            with profile:
                plain_s, kept_s = await temporal_data.forget(corpus.document(doc), at, off, on, keeper, REF)
            removals["off"].append(plain_s)
            removals["on"].append(kept_s)
        if (i + 1 - start) % progress == 0:
            print(f"  … {i + 1 - start:,}/{documents:,} documents written, {time.perf_counter() - began:,.0f} s "
                  f"(off {spent['off']:,.0f} s, on {spent['on']:,.0f} s)", file=sys.stderr, flush=True)
    rate_off, rate_on = facts / spent["off"], facts / spent["on"]
    where = f"documents {start + 1:,}-{corpus.documents:,}" if start else f"{documents:,} messages"
    rows = [
        (f"ingest, history off: store.add, {where}",
         f"{rate_off:,.0f} facts/s  ({quads['off'] / spent['off']:,.0f} quads/s, {quads['off'] / facts:.1f} quads/fact)"),
        ("ingest, history on: admit + Admission.store",
         f"{rate_on:,.0f} facts/s  ({quads['on'] / spent['on']:,.0f} quads/s, {quads['on'] / facts:.1f} quads/fact)"),
        ("  history on / off throughput", f"{rate_on / rate_off:.2f}  (aim: >= 0.85)"),
        ("  of the history-on time: keeper.admit",
         f"{spent['admit'] / spent['on']:.0%}  ({spent['admit'] * 1e3 / documents:.2f} ms/message)"),
    ]
    if removals["off"]:
        rows += [(f"document removal, history off ({len(removals['off'])} documents)", ms(removals["off"])),
                 ("document removal, history on (+ keeper.retract)", ms(removals["on"]))]
    return rows


async def counts(store: OxigraphTripleStore) -> dict[str, int]:
    found = {name: await store.count(REF, g) for name, g in GRAPHS}
    found["all"] = await store.count(REF, ALL_GRAPHS)
    rows = (await store.query(REF, f"SELECT (COUNT(*) AS ?n) WHERE {{ ?s ?p ?o FILTER(?p != <{RDFS.label.iri}>) }}")).rows
    found["current facts"] = int(rows[0]["n"].value)
    for name, predicate in (("records", RDF.reifies.iri), ("superseded", TG.supersededBy.iri),
                            ("retracted", TG.retractedAt.iri)):
        sparql = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{HISTORY_GRAPH}> {{ ?r <{predicate}> ?x }} }}"
        found[name] = int((await store.query(REF, sparql)).rows[0]["n"].value)
    return found


def measure_disk(root: Path) -> tuple[int, int]:
    """Bytes of a closed store's directory once flushed, and once compacted."""
    path = root / REF.user / REF.collection
    store = ox.Store(str(path))
    store.flush()
    flushed = disk_bytes(path)
    store.optimize()
    store.flush()
    compacted = disk_bytes(path)
    del store
    return flushed, compacted


def storage(facts: int, off: dict[str, int], on: dict[str, int], disk_off: tuple[int, int],
            disk_on: tuple[int, int]) -> list[Row]:
    rows = [(f"quads, history {name}: " + ", ".join(f"{g} {c[g]:,}" for g, _ in GRAPHS), f"{c['all']:,} in all")
            for name, c in (("off", off), ("on", on))]
    rows += [("current facts (default graph less labels), off / on", f"{off['current facts']:,} / {on['current facts']:,}"),
             ("history: records / tg:supersededBy / tg:retractedAt quads",
              f"{on['records']:,} / {on['superseded']:,} / {on['retracted']:,}"),
             ("  facts ever held (history-facts) over current facts",
              f"{on['history-facts'] / on['current facts']:.3f}"),
             ("history quads per stated fact",
              (f"{(on['history'] + on['history-facts']) / facts:.2f}  (all quads {off['all'] / facts:.1f} off, "
              f"{on['all'] / facts:.1f} on)"))]
    for i, state in enumerate(("flushed", "compacted")):
        a, b = disk_off[i], disk_on[i]
        rows.append((f"on disk ({state}): off / on",
                     (f"{a / 1e6:,.1f} MB / {b / 1e6:,.1f} MB  = {a / facts:,.0f} / {b / facts:,.0f} bytes per fact; "
                     f"history {(b - a) / facts:,.0f} bytes per fact (+{(b - a) / a:.0%})")))
    return rows


Call = Callable[[random.Random], Awaitable[tuple[int, bool]]]


async def timed(runs: int, call: Call, seed: int, budget: float) -> tuple[list[float], list[int], int, int]:
    """Latencies, result sizes, truncated answers and timeouts over `runs` calls, or fewer (at least 3)
    once `budget` seconds are spent."""
    rng = random.Random(seed)
    began = time.perf_counter()
    latencies, sizes, truncated, failed = [], [], 0, 0
    for run in range(runs):
        if run >= 3 and time.perf_counter() - began > budget:
            break
        started = time.perf_counter()
        try:
            size, cut = await call(rng)
        except QueryError:
            failed += 1
            continue
        latencies.append(time.perf_counter() - started)
        sizes.append(size)
        truncated += cut
    return latencies, sizes, truncated, failed


def figure(result: tuple[list[float], list[int], int, int], unit: str) -> str:
    latencies, sizes, truncated, failed = result
    if not latencies:
        return f"all {failed} runs timed out"
    text = f"{ms(latencies)}  ({len(latencies)} runs, {statistics.mean(sizes):,.0f} {unit}/answer"
    text += f", {truncated} cut by the limit" if truncated else ""
    return text + (f"; {failed} timed out)" if failed else ")")


async def latencies(corpus: temporal_data.Corpus, store: OxigraphTripleStore, runs: int, diff_runs: int,
                    budget: float) -> list[Row]:
    rows_of = store_rows(store, REF)
    first, last = temporal_data.span()
    seconds = (last - first).total_seconds()
    degree = np.bincount(corpus.s, minlength=len(corpus.entities))
    subjects = np.flatnonzero(degree)
    hub = int(np.argmax(degree))

    def date(rng: random.Random) -> str:
        return canonical(first + timedelta(seconds=rng.random() * seconds))

    def typical(rng: random.Random) -> str:
        return entity_uri(corpus.entities[int(subjects[rng.randrange(len(subjects))])])

    def snapshot(subject: Callable[[random.Random], str | None]):
        async def call(rng: random.Random) -> tuple[int, bool]:
            states, cut = await query.snapshot(rows_of, date(rng), subject=subject(rng), limit=1000)
            return len(states), cut
        return call

    def answered(subject: Callable[[random.Random], str | None]):
        async def call(rng: random.Random) -> tuple[int, bool]:
            response = await answer(store, REF, TemporalRequest(at=date(rng), subject=subject(rng), limit=1000,
                                                                 user=REF.user, collection=REF.collection))
            return len(response.facts), response.truncated
        return call

    shapes = [("(a) subject-scoped, a typical subject", typical), ("(b) whole graph, limit 1000", lambda rng: None)]
    result: list[Row] = [((f"subjects drawn: {len(subjects):,} entities with facts, median {np.median(degree[subjects]):.0f}"
                          f", mean {degree[subjects].mean():.1f} facts as subject"), "")]
    await snapshot(lambda rng: None)(random.Random(0))  # opens the store and warms its caches
    for label, subject in shapes:
        result.append((f"snapshot {label}", figure(await timed(runs, snapshot(subject), 101, budget), "facts")))
    for label, subject in shapes:
        result.append((f"answer   {label}", figure(await timed(runs, answered(subject), 202, budget), "facts")))

    def diff(width: timedelta, axis: str, service: bool):
        async def call(rng: random.Random) -> tuple[int, bool]:
            start = first + timedelta(seconds=rng.random() * (seconds - width.total_seconds()))
            lo, hi = canonical(start), canonical(start + width)
            if service:
                request = TemporalRequest.model_validate({"operation": "diff", "from": lo, "to": hi, "axis": axis,
                                                          "user": REF.user, "collection": REF.collection})
                response = await answer(store, REF, request)
                return len(response.changes), response.truncated
            changes, cut = await query.diff(rows_of, lo, hi, axis, limit=1000)
            return len(changes), cut
        return call

    for service in (False, True):
        for axis in ("valid", "recorded"):
            for label, width in WINDOWS[1:2] if service else WINDOWS:  # the service's cost over the query: one window
                name = f"{'answer' if service else 'query'}.diff {axis:<8} over {label}, limit 1000"
                result.append((name, figure(await timed(diff_runs, diff(width, axis, service), 303, budget), "changes")))
    # Last: at 1M facts it can outlive the query timeout, and a timed-out query runs on in the background.
    hub_iri = entity_uri(corpus.entities[hub])
    result.append((f"snapshot subject-scoped, the top hub ({degree[hub]:,} facts as subject)",
                   figure(await timed(runs, snapshot(lambda rng: hub_iri), 404, budget), "facts")))
    return result


async def main_async(args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    started = time.perf_counter()
    corpus = temporal_data.build(args.facts, args.history, args.per_document, args.seed)
    rows.append(((f"corpus: {corpus.facts:,} facts in {corpus.documents:,} documents over {len(corpus.entities):,} "
                 f"entities (built in {time.perf_counter() - started:.1f} s)"),
                 (f"{corpus.updates:,} updates of single-valued slots ({corpus.updates / corpus.facts:.1%}), "
                 f"{corpus.retracted_facts():,} facts in removed documents "
                 f"({corpus.retracted_facts() / corpus.facts:.1%})")))
    rows.append((f"message shape: {args.message}", SHAPES[args.message]))
    work = Path(tempfile.mkdtemp(prefix="tg-bench-temporal-", dir=args.work))
    off, on = OxigraphTripleStore(work / "off"), OxigraphTripleStore(work / "on")
    keeper = HistoryKeeper(on)
    keeper.functional = corpus.functional_iris
    start = corpus.documents - min(args.measure or corpus.documents, corpus.documents)
    if start:
        began = time.perf_counter()
        loaded = await temporal_data.preload(corpus, start, args.message, off, on, keeper, REF)
        rows.append(((f"preloaded documents 1-{start:,} ({start * args.per_document:,} facts): bulk N-Quads, then "
                     "single-valued facts and removals through the keeper"),
                     f"{time.perf_counter() - began:,.0f} s ({loaded:,} quads in bulk into the history store)"))
    profile = Profile(args.profile)
    rows += await ingest(corpus, args.message, off, on, keeper, start, profile)
    profile.write()
    count_off, count_on = await counts(off), await counts(on)
    await off.aclose()
    await on.aclose()
    rows += storage(corpus.facts, count_off, count_on, measure_disk(work / "off"), measure_disk(work / "on"))
    if args.runs:
        store = OxigraphTripleStore(work / "on")
        rows += await latencies(corpus, store, args.runs, args.diff_runs, args.budget)
        await store.aclose()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        rows.append(("stores kept under", str(work)))
    return rows


SHAPES = {"facts": "the facts only",
          "labels": "facts + rdfs:label of every entity and predicate named (default graph)",
          "full": "facts + labels + the chunk and its subgraph in urn:graph:source "
                  "(tg:contains per fact, tg:mentions per entity, activities)"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--facts", type=int, default=100_000, help="facts stated in all [100000; the issue: 1000000]")
    p.add_argument("--history", type=float, default=0.10,
                   help="share of facts later superseded (70%%) or retracted with their document (30%%) [0.10]")
    p.add_argument("--per-document", type=int, default=20, help="facts per document (one message) [20]")
    p.add_argument("--message", choices=sorted(SHAPES), default="full",
                   help="what each message carries besides its facts: " +
                        "; ".join(f"{k}: {v}" for k, v in SHAPES.items()) + " [full]")
    p.add_argument("--measure", type=int, default=None,
                   help="write only the last MEASURE documents one message at a time (timed), and preload the "
                        "others in bulk (temporal_data.preload) [all: no preload]")
    p.add_argument("--runs", type=int, default=50, help="timed snapshots per shape; 0 skips latency [50]")
    p.add_argument("--diff-runs", type=int, default=20, help="timed diffs per window and axis [20]")
    p.add_argument("--budget", type=float, default=30.0,
                   help="seconds per query shape: past it, a shape stops after 3 runs [30]")
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--work", type=Path, default=None, help="where the stores go (a temporary directory under it)")
    p.add_argument("--keep", action="store_true", help="keep the stores afterwards")
    p.add_argument("--profile", type=Path, default=None,
                   help="write a pyinstrument profile of the history-on calls here (pip install pyinstrument)")
    p.add_argument("--markdown", type=Path, default=None, help="also append the figures as a markdown table here")
    args = p.parse_args()
    load = os.getloadavg()
    began = time.perf_counter()
    rows = asyncio.run(main_async(args))
    rows.append(("peak resident memory of this process", f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB"))
    rows.append(("total run time", f"{time.perf_counter() - began:,.0f} s"))
    rows.append(("load average (1 min) at start / end, on 2 cores", f"{load[0]:.2f} / {os.getloadavg()[0]:.2f}"))
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    if args.markdown:
        command = ".venv/bin/python bench/temporal.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        with args.markdown.open("a", encoding="utf-8") as out:
            out.write(f"\n`{command}`\n\n| measure | figure |\n|---|---|\n")
            out.writelines(f"| {label.strip()} | {value} |\n" for label, value in rows)


if __name__ == "__main__":
    main()
