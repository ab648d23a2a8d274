"""Architecture routes benchmark: p50/p95 latency of `GET /api/v1/ownership|dependencies|memory/{entity}` and
`POST /api/v1/intent-check` through the gateway, on the sample corpus and on a generated organisation of
~1M facts; and how right ownership is against the generated organisation's known truth.

Aims (issue): ownership < 100 ms, dependencies depth 3 < 300 ms, memory < 500 ms, intent-check < 200 ms,
LLM excluded: the embedded stack runs with no LLM (offline extraction) and the bundled embedding model.

How it runs
  * Sample corpus: the embedded stack (every processor, inproc bus) on a temporary data dir; every file of
    launch/corpus is added and processed through the gateway, extraction is waited for, and then until
    ownership of Skyline shows its CODEOWNERS match (the architecture extractor runs beside the chunker).
  * Generated graph (bench/architecture_data.py, deterministic with --seed): the organisation's documents
    and filler documents are built with the extractors' own triple builders and bulk-loaded as N-Quads into
    the oxigraph store the triples processor serves (<data dir>/triples/default/default). No history records
    are written for them (as with TG_HISTORY=false: the keeper's per-message bookkeeping is what bulk loading
    skips); the stack then serves with history on, as by default. Routes are timed for random services
    (one request each), and dependencies depth 3 in also for the hub services.
  * Each route: 3 warm-up requests, then --requests timed ones over one keep-alive HTTP connection, one at a
    time; latency is from sending the request to its parsed JSON body. Texts embedded once are cached (by
    the embeddings processor, and the answering service), so each intent check carries a new ticket number
    and each memory question its own wording or entity; a repeated request says so in its label.
  * Ownership precision/recall: `base.architecture.ownership.ownership` over the store (as the service calls
    it, without HTTP) for every generated service, compared with the truth: the CODEOWNERS owners (the rule
    deciding the service's directory), the graph owners, the discrepancy flag, and the directory-name fallback.

Prints figures; never asserts on timing. The machine's load average is printed: others may share it.

    .venv/bin/python bench/architecture_routes.py --facts 100000          # quick
    .venv/bin/python bench/architecture_routes.py                         # the issue's 1M facts
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import aiohttp
import architecture_data  # bench/ is on sys.path when this script runs
from temporal import pct
from tracegraph.base.architecture import graph
from tracegraph.base.architecture.ownership import ownership
from tracegraph.base.architecture.rules import CodeOwnersShelf
from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.provenance.vocab import RDFS
from tracegraph.base.settings import RuntimeSettings
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import CollectionRef
from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import add_document, process, wait_for_extraction
from tracegraph.flow.triples.temporal import store_rows
from tracegraph.launch.demo import ARCHITECTURE_ENTITY, INTENT_PAIRS, sample_corpus
from tracegraph.launch.registry import PROCESSORS
from tracegraph.launch.stack import Stack, ensure_flow
from tracegraph.schemas.architecture import OwnershipResponse

REF = CollectionRef("default", "default")
SCOPE = (REF.user, REF.collection)
AIMS = {"ownership": 0.100, "dependencies": 0.300, "memory": 0.500, "intent-check": 0.200}
SAMPLE_ENTITIES = (ARCHITECTURE_ENTITY, "Storage Gateway", "Demand Feed")
SAMPLE_QUESTION = "Why does Skyline run in two regions?"
LOAD_BATCH = 300_000  # triples per bulk write
MARKER = "architecture-bench.json"  # what a kept data dir holds, so a later run can reuse it
Row = tuple[str, ...]


def progress(text: str) -> None:
    print(f"  … {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- routes and timing


@dataclass(frozen=True, slots=True)
class Call:
    """One request to a route; `size` reads how big its answer was (owners, edges, items)."""

    route: str  # ownership, dependencies, memory or intent-check: which aim applies
    path: str
    params: dict[str, str] = field(default_factory=dict)
    body: dict | None = None
    size: Callable[[dict], int] = lambda answer: 1


def owners_of(entity: str) -> Call:
    return Call("ownership", f"ownership/{quote(entity)}", size=lambda a: len(a["ownership"]["owners"]))


def dependencies_of(entity: str, depth: int, direction: str = "out", max_edges: int | None = None) -> Call:
    asked = {"depth": str(depth), "direction": direction, **({"max-edges": str(max_edges)} if max_edges else {})}
    return Call("dependencies", f"dependencies/{quote(entity)}", asked,
                size=lambda a: len(a["dependencies"]["edges"]))


def memory_of(entity: str, question: str = "") -> Call:
    return Call("memory", f"memory/{quote(entity)}", {"q": question} if question else {},
                size=lambda a: len(a["memory"]["items"]))


def intent_check(change: str, work_item: str) -> Call:
    return Call("intent-check", "intent-check", body={"change": change, "work-item": work_item},
                size=lambda a: int(a["intent"]["mismatch"]))


def ticketed(pair: tuple[str, str], count: int) -> list[Call]:
    """The pair's intent check `count` times, each sentence naming a new ticket, so no vector is cached.

    >>> ticketed(("Fix it.", "Fix the bug."), 1)[0].body
    {'change': 'Fix it (ticket CV-1).', 'work-item': 'Fix the bug (ticket CV-1).'}
    """
    return [intent_check(*(f"{side.rstrip('.')} (ticket CV-{n})." for side in pair)) for n in range(1, count + 1)]


async def fetch(session: aiohttp.ClientSession, url: str, call: Call) -> dict:
    method = "POST" if call.body is not None else "GET"
    async with session.request(method, f"{url}api/v1/{call.path}", params=call.params, json=call.body) as response:
        answer = await response.json(content_type=None)
    if response.status != 200:
        raise RuntimeError(f"{method} {call.path}: HTTP {response.status}: {json.dumps(answer)[:300]}")
    return answer


async def timed(session: aiohttp.ClientSession, url: str, data: str, label: str, calls: Sequence[Call],
                warm: Sequence[Call], budget: float) -> Row:
    """(data, route, n, p50 ms, p95 ms, mean answer size, aim) over `calls` after `warm`; a route past
    `budget` seconds stops early (after at least 3), and says how many it timed."""
    for call in warm:
        await fetch(session, url, call)
    latencies, sizes = [], []
    began = time.perf_counter()
    for call in calls:
        if len(latencies) >= 3 and time.perf_counter() - began > budget:
            break
        started = time.perf_counter()
        answer = await fetch(session, url, call)
        latencies.append(time.perf_counter() - started)
        sizes.append(call.size(answer))
    aim = AIMS[calls[0].route]
    p50, p95 = pct(latencies, 0.5), pct(latencies, 0.95)
    verdict = "met" if p95 < aim else "p50 only" if p50 < aim else "missed"
    row = (data, label, f"{len(latencies)}", f"{p50 * 1e3:,.1f}", f"{p95 * 1e3:,.1f}",
           f"{sum(sizes) / len(sizes):,.1f}", f"< {aim * 1e3:,.0f} ms: {verdict}")
    progress(f"{data}: {label}: p50 {row[3]} ms, p95 {row[4]} ms over {row[2]}")
    return row


@contextlib.asynccontextmanager
async def running_stack(data_dir: Path) -> AsyncIterator[str]:
    """Every processor on an inproc bus, stores under `data_dir`, no LLM; yields the gateway's URL."""
    backend = InprocBackend()
    settings = RuntimeSettings(data_dir=data_dir, gateway_port=0, request_timeout=300, llm_url=None,
                               log_level="WARNING")
    try:
        async with Stack(backend, settings, list(PROCESSORS)) as stack:
            await ensure_flow(backend, "default", "default")
            await stack.joined("default")
            yield f"http://127.0.0.1:{stack['gateway'].port}/"
    finally:
        await backend.aclose()


# ---------------------------------------------------------------- the sample corpus


async def load_sample(url: str, entity: str, timeout: float = 600) -> float:
    """Add and process every corpus file; wait for extraction, then for the entity's CODEOWNERS match."""
    api, started, ids = Api(url), time.perf_counter(), []
    for path in sample_corpus():
        meta = await add_document(api, path, collection="default")
        await process(api, meta["id"], "default", "default")
        ids.append(meta["id"])
    await wait_for_extraction(api, "default", ids, "default", timeout)
    deadline = time.monotonic() + timeout
    while not (await api.get(f"ownership/{entity}", {}))["ownership"]["codeowners"]:
        if time.monotonic() > deadline:
            raise RuntimeError(f"no CODEOWNERS match for {entity} after {timeout:g} s")
        await asyncio.sleep(0.3)
    return time.perf_counter() - started


async def sample_rows(requests: int, budget: float) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="tg-bench-architecture-") as data:
        async with running_stack(Path(data)) as url:
            progress(f"sample corpus: {len(sample_corpus())} files loading")
            seconds = await load_sample(url, ARCHITECTURE_ENTITY)
            progress(f"sample corpus: loaded and extracted in {seconds:.1f} s")
            skyline = ARCHITECTURE_ENTITY
            calls = [(f"ownership {e}", [owners_of(e)] * (requests + 3)) for e in SAMPLE_ENTITIES]
            calls += [(f"dependencies {skyline} depth {d} out", [dependencies_of(skyline, d)] * (requests + 3))
                      for d in (1, 2, 3)]
            calls += [(f"dependencies {skyline} depth 3 in", [dependencies_of(skyline, 3, "in")] * (requests + 3)),
                      (f"memory {skyline} (repeated: its items' vectors cached)", [memory_of(skyline)] * (requests + 3)),
                      (f"memory {skyline} q=a new why-question each time",
                       [memory_of(skyline, f"{SAMPLE_QUESTION[:-1]}, asked {n}th?") for n in range(requests + 3)])]
            calls += [(f"intent-check, {kind} pair (new ticket each time)", ticketed(pair, requests + 3))
                      for kind, pair in zip(("matching", "mismatching"), INTENT_PAIRS)]
            async with aiohttp.ClientSession() as session:
                return [await timed(session, url, "sample corpus", label, made[3:], made[:3], budget)
                        for label, made in calls]


# ---------------------------------------------------------------- the generated graph


async def load_generated(data_dir: Path, org: architecture_data.Organisation, facts: int) -> list[Row]:
    """Bulk-load the organisation and filler into the store the triples processor serves from `data_dir`."""
    store = OxigraphTripleStore(data_dir / "triples")
    began, writing, stated, quads = time.perf_counter(), 0.0, 0, 0
    buffer: list = []

    async def write() -> None:
        nonlocal writing, quads
        started = time.perf_counter()
        quads += await store.add_nquads(REF, architecture_data.nquads(buffer))
        writing += time.perf_counter() - started
        buffer.clear()
        progress(f"generated: {stated:,}/{facts:,} facts, {quads:,} quads loaded, {time.perf_counter() - began:,.0f} s")

    for triples in architecture_data.documents(org, facts):
        buffer += triples
        stated += architecture_data.counted_facts(triples)
        if len(buffer) >= LOAD_BATCH:
            await write()
    await write()
    total = time.perf_counter() - began
    query = f"SELECT (COUNT(*) AS ?n) WHERE {{ ?s ?p ?o FILTER(?p != <{RDFS.label.iri}>) }}"
    held = int((await store.query(REF, query, timeout=600)).rows[0]["n"].value)
    stored = await store.count(REF)
    await store.aclose()
    return [("facts in the store (default graph, less labels)", f"{held:,} (asked {facts:,})"),
            ("quads in the store (all graphs: facts, labels, provenance)", f"{stored:,}"),
            ("history", ("none for the bulk-loaded facts (as with TG_HISTORY=false); the stack then serves with "
                        "history on, as by default")),
            ("generate + bulk load (N-Quads, no history records)",
             f"{total:,.0f} s, of which bulk writes {writing:,.0f} s ({quads / max(writing, 1e-9):,.0f} quads/s)")]


async def prepared(args: argparse.Namespace, org: architecture_data.Organisation, work: Path) -> list[Row]:
    """The generated store under `work`: loaded now, or reused when a kept one holds the same data."""
    wanted = {"facts": args.facts, "seed": args.seed, "services": args.services}
    marker = work / MARKER
    if marker.exists() and json.loads(marker.read_text())["wanted"] == wanted:
        progress(f"generated: reusing the store kept in {work}")
        return json.loads(marker.read_text())["rows"] + [("store", f"reused from {work}")]
    shutil.rmtree(work / "triples", ignore_errors=True)
    rows = await load_generated(work, org, args.facts)
    marker.write_text(json.dumps({"wanted": wanted, "rows": rows}))
    return rows


WHOLE_TREE = 5_000  # edges: more than a hub's whole depth-3 tree in the generated organisation


def hub_calls(org: architecture_data.Organisation, count: int, max_edges: int | None = None) -> list[Call]:
    return [dependencies_of(org.hubs[i % len(org.hubs)], 3, "in", max_edges) for i in range(count)]


async def generated_rows(url: str, data: str, org: architecture_data.Organisation, requests: int, seed: int,
                         budget: float) -> list[Row]:
    rng = random.Random(seed)
    picked = [s.label for s in rng.sample(org.services, min(len(org.services), requests + 3))]
    warm, timed_ = picked[:3], picked[3:]
    remembered = list(dict.fromkeys(name for r in org.memories for rel in ("why", "affected")
                                    for name in r.relations.get(rel, ())))
    asked = rng.sample(remembered, min(len(remembered), requests + 3))
    question = "What went wrong with {} and why was it built this way?"
    shapes: list[tuple[str, Callable[[str], Call], Sequence[str], Sequence[str]]] = [
        ("ownership, random services", owners_of, timed_, warm),
        *((f"dependencies depth {d} out, random services", lambda e, d=d: dependencies_of(e, d), timed_, warm)
          for d in (1, 2, 3)),
        ("dependencies depth 3 in, random services", lambda e: dependencies_of(e, 3, "in"), timed_, warm),
        ("memory, random services", memory_of, timed_, warm),
        ("memory q=…, services with records", lambda e: memory_of(e, question.format(e)), asked[3:], asked[:3]),
    ]
    rows = []
    async with aiohttp.ClientSession() as session:
        for label, make, entities, warming in shapes:
            rows.append(await timed(session, url, data, label, [make(e) for e in entities],
                                    [make(e) for e in warming], budget))
        dependants = "/".join(map(str, org.dependants(org.hubs)))
        for cap, shown in ((None, "default max-edges"), (WHOLE_TREE, f"max-edges={WHOLE_TREE:,}: the whole tree")):
            hubs = hub_calls(org, requests, cap)
            rows.append(await timed(session, url, data, f"dependencies depth 3 in, the {len(org.hubs)} hub services "
                                    f"({dependants} dependants), {shown}", hubs, hubs[:3], budget))
        for kind, pair in zip(("matching", "mismatching"), INTENT_PAIRS):
            made = ticketed(pair, requests + 3)
            rows.append(await timed(session, url, data, f"intent-check, {kind} pair (new ticket each time)",
                                    made[3:], made[:3], budget))
    return rows


# ---------------------------------------------------------------- ownership against the truth


@dataclass
class Tally:
    """Precision and recall over (service, item) pairs, with a few misses kept to show."""

    name: str
    found: int = 0
    right: int = 0
    expected: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, got: set[str], wanted: set[str], service: str, why: Callable[[], str]) -> None:
        self.found += len(got)
        self.right += len(got & wanted)
        self.expected += len(wanted)
        if got != wanted and len(self.misses) < 3:
            self.misses.append(f"{service}: got {sorted(got) or '-'}, expected {sorted(wanted) or '-'}; {why()}")

    def row(self) -> Row:
        precision = self.right / self.found if self.found else 1.0
        recall = self.right / self.expected if self.expected else 1.0
        return (self.name, (f"precision {precision:.3f} ({self.right:,}/{self.found:,}), "
                           f"recall {recall:.3f} ({self.right:,}/{self.expected:,})"))


def explain(org: architecture_data.Organisation, service: architecture_data.Service,
            truth: architecture_data.Expected, got: OwnershipResponse) -> str:
    """What the truth and the answer rest on, so a miss can be read: the deciding line and path on both sides."""
    deciding = truth.deciding
    wanted = (f"truth: line {org.line_number(deciding)} `{deciding.pattern}` ({deciding.kind}) decides "
              f"{truth.path} ({truth.path_origin})" if deciding else f"truth: no path known for {service.directory}")
    answered = "; ".join(f"answer: `{m.pattern}` line {m.source.line} for {m.path} ({m.path_origin})"
                         for m in got.codeowners) or "answer: no CODEOWNERS match"
    mail = [o.handle for o in (deciding.owners if deciding else ()) if not o.handle.startswith("@")]
    hint = f"; e-mail handle {mail[0]} is not linked to the graph's person" if mail else ""
    if truth.path_origin == "name" and deciding and "/" not in deciding.pattern.rstrip("/") and deciding.pattern != "*":
        hint += f"; `{deciding.pattern}` matches a directory of that name anywhere, so its name alone gives no parent"
    return f"{wanted}; {answered}; own line: {service.rule}{hint}"


async def score_ownership(data_dir: Path, org: architecture_data.Organisation, limit: int | None) -> list[Row]:
    store = OxigraphTripleStore(data_dir / "triples")
    rows_of, shelf = store_rows(store, REF), CodeOwnersShelf(max_age=1e9)
    services = org.services[:limit] if limit else org.services
    tallies = {name: Tally(name) for name in (
        "CODEOWNERS owners (handles of the deciding rule)", "graph owners (owns / is owned by / maintains / leads)",
        "discrepancy flag 'disagree'", "stale rules flagged 'disagree' (recall)", "path from a code-path fact",
        "path fallback (a rule's directory named like the service)")}
    codeowners_, graph_, flag, stale, path_fact, fallback = tallies.values()
    labels, latencies = Tally("agreement label, exact"), []
    for number, service in enumerate(services, start=1):
        truth = org.expected(service)
        started = time.perf_counter()
        got = (await ownership(rows_of, await graph.resolve(rows_of, service.label), shelf, SCOPE)).response
        latencies.append(time.perf_counter() - started)

        def why(service=service, truth=truth, got=got) -> str:
            return explain(org, service, truth, got)

        key = service.label
        codeowners_.add({h for m in got.codeowners for h in m.owners},
                        {o.handle for o in truth.deciding.owners} if truth.deciding else set(), key, why)
        graph_.add({o.entity for o in got.owners if "graph" in o.origins}, set(truth.graph_owners), key, why)
        flag.add({"disagree"} & {got.agreement}, {"disagree"} & {truth.agreement}, key, why)
        if truth.stale:
            stale.add({"disagree"} & {got.agreement}, {"disagree"}, key, why)
        labels.add({got.agreement}, {truth.agreement}, key, why)
        for tally, origin in ((path_fact, "graph"), (fallback, "name")):
            tally.add({m.path for m in got.codeowners if m.path_origin == origin},
                      {truth.path} if truth.path_origin == origin and truth.path else set(), key, why)
        if number % max(1, len(services) // 10) == 0:
            progress(f"ownership vs truth: {number:,}/{len(services):,} services")
    await store.aclose()
    rows = [t.row() for t in (*tallies.values(), labels)]
    rows.append(("ownership() called directly (no HTTP), per service",
                 f"p50 {pct(latencies, .5) * 1e3:,.1f} ms  p95 {pct(latencies, .95) * 1e3:,.1f} ms"))
    for tally in (*tallies.values(), labels):
        rows += [(f"  miss: {tally.name}", miss) for miss in tally.misses]
    return rows


# ---------------------------------------------------------------- main


async def main_async(args: argparse.Namespace) -> tuple[list[Row], list[Row]]:
    timings: list[Row] = []
    figures: list[Row] = []
    if not args.skip_sample:
        timings += await sample_rows(args.requests, args.budget)
    if not args.skip_generated:
        started = time.perf_counter()
        org = architecture_data.build(args.services, args.seed)
        figures.append(((f"organisation: {len(org.services):,} services, {len(org.teams):,} teams, "
                        f"{len(org.people):,} people (seed {args.seed})"),
                        (f"{len(org.lines):,} CODEOWNERS lines, {len(org.dependencies):,} dependency edges, "
                        f"{len(org.memories):,} memory records; built in {time.perf_counter() - started:.1f} s")))
        work = args.keep or Path(tempfile.mkdtemp(prefix="tg-bench-architecture-"))
        work.mkdir(parents=True, exist_ok=True)
        try:
            figures += await prepared(args, org, work)
            async with running_stack(work) as url:
                timings += await generated_rows(url, f"generated, {args.facts:,} facts", org, args.requests,
                                                args.seed, args.budget)
            figures += await score_ownership(work, org, args.precision_sample)
        finally:
            if not args.keep:
                shutil.rmtree(work, ignore_errors=True)
        if args.keep:
            figures.append(("generated data dir kept in", str(work)))
    return timings, figures


HEADER = ("data", "route", "n", "p50 ms", "p95 ms", "answer size", "aim (p95)")


def table(rows: Sequence[Row], header: Row | None = None) -> str:
    shown = [header, *rows] if header else list(rows)
    widths = [max(len(r[i]) for r in shown) for i in range(len(shown[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in shown)


def markdown(rows: Sequence[Row], header: Row) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--facts", type=int, default=1_000_000, help="facts in the generated graph [1000000]")
    p.add_argument("--services", type=int, default=2000, help="services in the generated organisation [2000]")
    p.add_argument("--seed", type=int, default=7, help="seed of the generated organisation and of the samples [7]")
    p.add_argument("--requests", type=int, default=50, help="timed requests per route, after 3 warm-ups [50]")
    p.add_argument("--budget", type=float, default=180.0,
                   help="seconds per route: past it, a route stops after 3 timed requests [180]")
    p.add_argument("--precision-sample", type=int, default=None,
                   help="score ownership for the first N services only [all]")
    p.add_argument("--skip-sample", action="store_true", help="skip the sample corpus")
    p.add_argument("--skip-generated", action="store_true", help="skip the generated graph (and precision)")
    p.add_argument("--keep", type=Path, default=None,
                   help="build the generated data dir here and keep it; a later run with the same --facts, "
                        "--seed and --services reuses its store")
    p.add_argument("--markdown", type=Path, default=None, help="also append the figures as markdown tables here")
    args = p.parse_args()
    load = os.getloadavg()
    began = time.perf_counter()
    timings, figures = asyncio.run(main_async(args))
    figures += [("peak resident memory of this process",
                 f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB"),
                ("total run time", f"{time.perf_counter() - began:,.0f} s"),
                ("load average (1 min) at start / end, on 2 cores", f"{load[0]:.2f} / {os.getloadavg()[0]:.2f}")]
    if timings:
        print(table(timings, HEADER) + "\n")
    print(table(figures))
    if args.markdown:
        command = ".venv/bin/python bench/architecture_routes.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        with args.markdown.open("a", encoding="utf-8") as out:
            out.write(f"\n`{command}`\n\n")
            if timings:
                out.write(markdown(timings, HEADER) + "\n")
            out.write(markdown(figures, ("measure", "figure")))


if __name__ == "__main__":
    main()
