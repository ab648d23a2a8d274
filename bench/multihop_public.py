"""Passage retrieval of the query services on public multi-hop QA text (MuSiQue, HotpotQA samples).

Every passage of a sample is ingested as one text/plain document through the default flow of the
whole in-process stack (chunker, extraction, embeddings, keyword index), one collection per set.
Each question is then asked through the gateway's REST API in every mode: dense-baseline (the documents of
the chunks nearest the question's embedding, the plain vector baseline), document-rag (doc-limit 8),
graph-rag (defaults), search (the router chooses) and search:<strategy> for each strategy in
tracegraph.schemas.search.STRATEGIES, and search:raptor (the RAPTOR tree's answer). The sources of each answer, in the order the service returns
them, are mapped back to corpus passages and scored against the gold supporting passages:
recall@2/5/8, perfect@8, whether the answer text contains the gold answer, latency p50/p95, errors,
and for answers with a confidence block its calibration (gold rate with and without the warning,
AUROC of `confidence`). Figures are printed (and written with --json), never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import importlib.util
import inspect
import json
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import multihop_metrics as metrics  # noqa: E402

from tracegraph.base.bus.inproc import InprocBackend  # noqa: E402
from tracegraph.base.errors import TraceGraphError  # noqa: E402
from tracegraph.base.settings import RuntimeSettings  # noqa: E402
from tracegraph.cli.api import Api  # noqa: E402
from tracegraph.cli.library_upload import process, wait_for_extraction  # noqa: E402
from tracegraph.launch.registry import PROCESSORS  # noqa: E402
from tracegraph.launch.stack import Stack, ensure_flow  # noqa: E402
from tracegraph.schemas.search import STRATEGIES  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "multihop"
SETS = {"musique": "musique-train-100.json", "hotpotqa": "hotpotqa-train-100.json"}
FLOW = "default"
DENSE = "dense"  # not a service: embeddings + document-embeddings, the plain vector baseline
BLUEPRINT = "default"
KS = (2, 5, 8)
IN_FLIGHT = 8  # documents submitted at once: enough to keep the pipeline busy on 2 cores
ROUTER_BENCH = Path(__file__).resolve().parent / "router_accuracy.py"

# Collection-wide extraction progress: documents (roots of the derivation chains) that have chunks,
# chunks, and chunks with their extracted subgraph. One query per poll instead of one per document.
COLLECTION_PROGRESS = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX tg: <https://trustgraph.ai/ns/>
SELECT (COUNT(DISTINCT ?doc) AS ?docs) (COUNT(DISTINCT ?chunk) AS ?chunks) (COUNT(DISTINCT ?extracted) AS ?done)
WHERE { GRAPH <urn:graph:source> {
  ?chunk a tg:Chunk ; prov:wasDerivedFrom+ ?doc . FILTER NOT EXISTS { ?doc prov:wasDerivedFrom ?parent }
  OPTIONAL { ?subgraph a tg:Subgraph ; prov:wasDerivedFrom ?chunk BIND(?chunk AS ?extracted) }
} }"""
ANCESTORS = """
PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT DISTINCT ?doc WHERE { GRAPH <urn:graph:source> { <%s> prov:wasDerivedFrom+ ?doc } }"""


@dataclass
class Dataset:
    name: str
    corpus: list[dict[str, str]]
    questions: list[dict[str, Any]]


@dataclass
class Outcome:
    """One question asked in one mode."""

    ranked: list[int] = field(default_factory=list)  # corpus indices, first occurrence order
    evidence_ranked: list[int] | None = None  # search only: passages in the evidence's order
    gold: bool = False
    latency_ms: float | None = None
    error: str | None = None
    sources: int = 0
    unmapped: int = 0
    duplicates: int = 0
    iri_sorted: bool | None = None  # None: fewer than 3 sources
    confidence: float | None = None
    warning: bool | None = None


def load(data: Path, name: str, questions: int | None) -> Dataset:
    raw = json.loads((data / SETS[name]).read_text(encoding="utf-8"))
    return Dataset(name, raw["corpus"], raw["questions"][:questions])


def map_path(data_dir: Path, name: str) -> Path:
    return data_dir / f"multihop-{name}.json"


def chosen_passages(dataset: Dataset, limit: int | None) -> list[int]:
    """All passages, or (smoke runs) the supporting ones of the chosen questions plus `limit` others."""
    if limit is None:
        return list(range(len(dataset.corpus)))
    needed = {i for q in dataset.questions for i in q["supporting"]}
    others = [i for i in range(len(dataset.corpus)) if i not in needed]
    return sorted(needed | set(random.Random(7).sample(others, min(limit, len(others)))))


# ---------------------------------------------------------------- ingest

async def ingest(api: Api, dataset: Dataset, passages: list[int]) -> tuple[dict[str, int], dict[str, float]]:
    """Every chosen passage into collection `dataset.name`; returns (document id → corpus index, timings)."""
    began = time.perf_counter()
    gate = asyncio.Semaphore(IN_FLIGHT)
    ids: dict[str, int] = {}

    async def submit(index: int) -> None:
        passage = dataset.corpus[index]
        async with gate:
            reply = await api.request("librarian", {
                "operation": "add-document", "collection": dataset.name,
                "document-metadata": {"id": "", "kind": "text/plain", "title": passage["title"],
                                      "collection": dataset.name},
                "content": base64.b64encode(passage["text"].encode()).decode()})
            document = reply["document-metadata"]["id"]
            await process(api, document, FLOW, dataset.name)
        ids[document] = index
        if len(ids) % 200 == 0 or len(ids) == len(passages):
            print(f"    submitted {len(ids)}/{len(passages)} ({time.perf_counter() - began:.0f} s)", flush=True)

    await asyncio.gather(*(submit(i) for i in passages))
    submitted = time.perf_counter()
    await wait_collection(api, dataset.name, len(ids), began)
    chunks = await wait_for_extraction(api, FLOW, list(ids), dataset.name, timeout=1800)
    extracted = time.perf_counter()
    await wait_indexes(api, dataset)
    settled = time.perf_counter()
    return ids, {"seconds": settled - began, "submit_seconds": submitted - began,
                 "extraction_seconds": extracted - submitted, "settle_seconds": settled - extracted,
                 "passages": len(ids), "chunks": chunks, "passages_per_second": len(ids) / (settled - began)}


async def wait_collection(api: Api, collection: str, documents: int, began: float, timeout: float = 3600) -> None:
    """Poll the collection's progress until every document is chunked and every chunk extracted,
    twice in a row; wait_for_extraction then confirms per document (it polls one query per document,
    too slow to run while 2,000 documents are still being extracted)."""
    steady, last_print, deadline = 0, 0.0, time.monotonic() + timeout
    while steady < 2:
        if time.monotonic() > deadline:
            raise SystemExit(f"extraction of '{collection}' not finished after {timeout:.0f} s")
        await asyncio.sleep(3)
        reply = await api.flow_service(FLOW, "sparql", {"query": COLLECTION_PROGRESS, "collection": collection,
                                                        "timeout": 120})
        row = (reply.get("bindings") or [{}])[0]
        docs, chunks, done = (int(row.get(k, {}).get("v", 0)) for k in ("docs", "chunks", "done"))
        steady = steady + 1 if docs >= documents and done >= chunks else 0
        if time.perf_counter() - last_print > 20:
            last_print = time.perf_counter()
            print(f"    extraction: {docs}/{documents} documents chunked, {done}/{chunks} chunks extracted "
                  f"({last_print - began:.0f} s)", flush=True)


async def wait_indexes(api: Api, dataset: Dataset, timeout: float = 300.0) -> None:
    """The keyword index follows the triples writer's graph-update events and the vector stores
    their own topics, so they may lag behind the extraction provenance. Probe each with the first
    questions (BM25 top 20, chunk-vector top 20, entity-vector top 20) every 3 s until two
    consecutive probes return the same ids: a heuristic, but an index still growing changes its
    top hits for questions about this very text."""
    questions = [q["question"] for q in dataset.questions[:3]]
    vectors = (await api.flow_service(FLOW, "embeddings", {"texts": questions}))["vectors"]
    previous, deadline = None, time.monotonic() + timeout
    while time.monotonic() < deadline:
        await asyncio.sleep(3)
        probe = []
        for question, vector in zip(questions, vectors):
            bm25 = await api.flow_service(FLOW, "keyword-query", {"query": question, "limit": 20,
                                                                  "collection": dataset.name})
            probe.append([m["text"] for m in bm25.get("matches", [])])
            for kind in ("document-embeddings", "graph-embeddings"):
                found = await api.flow_service(FLOW, kind, {"vector": vector, "limit": 20, "collection": dataset.name})
                probe.append([m["id"] for m in found.get("matches", [])])
        if probe == previous:
            return
        previous = probe
    print(f"    indexes still changing after {timeout:.0f} s; measuring anyway", flush=True)


def code_version() -> str | None:
    """The checkout's commit (with "+changes" when the tree differs from it), to tell which code ingested."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parent, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=Path(__file__).resolve().parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+changes" if dirty else "")


# ---------------------------------------------------------------- ask

def modes(selected: list[str] | None) -> dict[str, tuple[str, dict[str, Any]]]:
    """mode name → (flow service, extra request fields)."""
    table: dict[str, tuple[str, dict[str, Any]]] = {
        "dense-baseline": (DENSE, {}), "document-rag": ("document-rag", {"doc-limit": 8}),
        "graph-rag": ("graph-rag", {}), "search": ("search", {})}
    table |= {f"search:{s}": ("search", {"strategies": [s]}) for s in (*STRATEGIES, "raptor")}
    if selected is None:
        return table
    table |= {m: ("search", {"fusion-weights": fusion_weights(m)}) for m in selected if m.startswith("search@")}
    unknown = [m for m in selected if m not in table]
    if unknown:
        raise SystemExit(f"unknown mode(s) {', '.join(unknown)}; known: {', '.join(table)}")
    return {m: table[m] for m in selected}


def fusion_weights(mode: str) -> dict[str, float]:
    """{"ppr": 6.0, "graph": 3.0} of the mode "search@ppr=6+graph=3": search fused with those RRF weights."""
    try:
        pairs = [part.split("=") for part in mode.removeprefix("search@").split("+")]
        return {name: float(weight) for name, weight in pairs}
    except ValueError:
        raise SystemExit(f"mode {mode!r}: write fusion weights as search@ppr=6+graph=3") from None


class SourceMap:
    """Source IRI → corpus index: the document id itself, an IRI containing it, or (say a chunk
    IRI) the document it derives from, found once through the SPARQL service and remembered."""

    def __init__(self, api: Api, collection: str, ids: dict[str, int]) -> None:
        self.api, self.collection, self.ids = api, collection, ids
        self.known: dict[str, int | None] = {}

    async def index(self, uri: str) -> int | None:
        if uri in self.ids:
            return self.ids[uri]
        if uri not in self.known:
            found = next((i for d, i in self.ids.items() if d in uri), None)
            if found is None:
                reply = await self.api.flow_service(FLOW, "sparql", {"query": ANCESTORS % uri,
                                                                     "collection": self.collection})
                found = next((self.ids[b["doc"]["i"]] for b in reply.get("bindings", [])
                              if b.get("doc", {}).get("i") in self.ids), None)
            self.known[uri] = found
        return self.known[uri]


async def ask(api: Api, sources: SourceMap, question: dict[str, Any], service: str,
              extra: dict[str, Any]) -> Outcome:
    # explain off: asking then writes nothing into the collection, so every mode and every rerun
    # with --reuse sees the same stores; cache off: a cached subgraph would flatter later modes.
    body = {"query": question["question"], "collection": sources.collection, "streaming": False,
            "explain": False, **extra}
    if service == "search":
        body["use-cache"] = False
    began = time.perf_counter()
    try:
        reply = await (dense_sources(api, body) if service == DENSE else api.flow_service(FLOW, service, body))
    except TraceGraphError as exc:
        return Outcome(error=f"{type(exc).__name__}: {exc}")
    out = Outcome(latency_ms=(time.perf_counter() - began) * 1000)
    uris = [s["uri"] for s in reply.get("sources") or []]
    out.sources = len(uris)
    if len(uris) >= 3:
        out.iri_sorted = uris == sorted(uris)
    for uri in uris:
        index = await sources.index(uri)
        if index is None:
            out.unmapped += 1
        elif index in out.ranked:
            out.duplicates += 1
        else:
            out.ranked.append(index)
    if reply.get("evidence") is not None:
        out.evidence_ranked = []
        for item in reply["evidence"]:
            for uri in item.get("sources", []):
                index = await sources.index(uri)
                if index is not None and index not in out.evidence_ranked:
                    out.evidence_ranked.append(index)
    out.gold = metrics.contains_gold(reply.get("response", ""), [question["answer"], *question.get("aliases", [])])
    if reply.get("confidence"):
        out.confidence = reply["confidence"].get("confidence")
        out.warning = reply["confidence"].get("low_confidence_warning")
    return out


async def dense_sources(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    """The baseline every graph mode must beat: the documents of the chunks nearest the question's
    embedding, nearest first (what Document RAG returned before passage retrieval)."""
    vector = (await api.flow_service(FLOW, "embeddings", {"texts": [body["query"]]}))["vectors"][0]
    hits = (await api.flow_service(FLOW, "document-embeddings", {"vector": vector, "limit": 30,
                                                                 "collection": body["collection"]}))["matches"]
    documents = list(dict.fromkeys(h["document"] for h in hits if h.get("document")))
    return {"sources": [{"uri": d, "title": ""} for d in documents]}


# ---------------------------------------------------------------- figures

def ranking_figures(rankings: list[list[int]], questions: list[dict[str, Any]]) -> dict[str, float | None]:
    figures = {f"recall@{k}": metrics.mean([metrics.recall_at_k(r, q["supporting"], k)
                                            for r, q in zip(rankings, questions)]) for k in KS}
    figures["perfect@8"] = metrics.mean([float(metrics.perfect_at_k(r, q["supporting"], 8))
                                         for r, q in zip(rankings, questions)])
    return figures


def summarise(outcomes: list[Outcome], questions: list[dict[str, Any]]) -> dict[str, Any]:
    """A mode's figures; a question that errored counts as retrieving nothing and answering wrong."""
    answered = [o for o in outcomes if o.error is None]
    latencies = [o.latency_ms for o in answered]
    figures: dict[str, Any] = {
        "questions": len(outcomes), **ranking_figures([o.ranked for o in outcomes], questions),
        "answer_contains_gold": metrics.mean([float(o.gold) for o in outcomes]),
        "p50_ms": metrics.percentile(latencies, 50), "p95_ms": metrics.percentile(latencies, 95),
        "errors": len(outcomes) - len(answered),
        "first_error": next((o.error for o in outcomes if o.error), None),
        "sources_mean": metrics.mean([o.sources for o in answered]),
        "sources_unmapped": sum(o.unmapped for o in answered),
        "sources_duplicate": sum(o.duplicates for o in answered),
        "iri_sorted": [sum(1 for o in answered if o.iri_sorted), sum(1 for o in answered if o.iri_sorted is not None)],
    }
    if any(o.evidence_ranked is not None for o in answered):
        figures["evidence_order"] = ranking_figures([o.evidence_ranked or [] for o in outcomes], questions)
    rated = [o for o in answered if o.confidence is not None]
    if rated:
        warned = [o for o in rated if o.warning]
        calm = [o for o in rated if not o.warning]
        figures["calibration"] = {
            "warned": len(warned), "warned_gold_rate": metrics.mean([float(o.gold) for o in warned]),
            "unwarned": len(calm), "unwarned_gold_rate": metrics.mean([float(o.gold) for o in calm]),
            "auroc": metrics.auroc([o.confidence for o in rated], [o.gold for o in rated])}
    return figures


def cell(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_table(name: str, result: dict[str, Any]) -> None:
    print(f"\n{name}: {result['questions']} questions, {result['passages']} passages"
          f"{'  [SMOKE: not comparable]' if result['smoke'] else ''}")
    print(f"  {'mode':<22}{'R@2':>7}{'R@5':>7}{'R@8':>7}{'P@8':>7}{'gold':>7}{'p50 ms':>9}{'p95 ms':>9}"
          f"{'err':>5}{'srcs':>6}")
    notes = []
    for mode, f in result["modes"].items():
        print(f"  {mode:<22}{cell(f['recall@2']):>7}{cell(f['recall@5']):>7}{cell(f['recall@8']):>7}"
              f"{cell(f['perfect@8']):>7}{cell(f['answer_contains_gold']):>7}{cell(f['p50_ms'], 0):>9}"
              f"{cell(f['p95_ms'], 0):>9}{f['errors']:>5}{cell(f['sources_mean'], 1):>6}")
        if "evidence_order" in f:
            e = f["evidence_order"]
            print(f"  {'  (evidence order)':<22}{cell(e['recall@2']):>7}{cell(e['recall@5']):>7}"
                  f"{cell(e['recall@8']):>7}{cell(e['perfect@8']):>7}")
        sorted_, of = f["iri_sorted"]
        if of and sorted_ / of > 0.5:
            notes.append(f"{mode}: sources in IRI order in {sorted_}/{of} answers with 3+ sources")
        if f["sources_unmapped"] or f["sources_duplicate"]:
            notes.append(f"{mode}: {f['sources_unmapped']} unmapped, {f['sources_duplicate']} duplicate sources")
        if f["first_error"]:
            notes.append(f"{mode}: first error: {f['first_error'][:160]}")
    calibrated = {m: f["calibration"] for m, f in result["modes"].items() if "calibration" in f}
    if calibrated:
        print(f"  {'calibration':<22}{'warned':>8}{'gold':>7}{'unwarned':>10}{'gold':>7}{'AUROC':>8}")
        for mode, c in calibrated.items():
            print(f"  {mode:<22}{c['warned']:>8}{cell(c['warned_gold_rate']):>7}{c['unwarned']:>10}"
                  f"{cell(c['unwarned_gold_rate']):>7}{cell(c['auroc']):>8}")
    for note in notes:
        print(f"  note: {note}")


# ---------------------------------------------------------------- run

async def measure_set(api: Api, dataset: Dataset, data_dir: Path, args: argparse.Namespace,
                      table: dict[str, tuple[str, dict[str, Any]]], code: str | None) -> dict[str, Any]:
    """Ingest (or reuse) one set, ask its questions in every mode, and print its table. `code` is the
    checkout's version when the stack imported it."""
    saved_at = map_path(data_dir, dataset.name)
    if saved_at.exists():
        saved = json.loads(saved_at.read_text())
        missing = {i for q in dataset.questions for i in q["supporting"]} - set(saved["documents"].values())
        if missing:
            raise SystemExit(f"{data_dir} holds a smoke ingest of '{dataset.name}' without {len(missing)} supporting "
                             "passages the chosen questions need; give another --data-dir")
        print(f"{dataset.name}: reusing {saved['passages']} ingested passages from {saved_at}"
              f"{' (smoke ingest)' if saved['smoke'] else ''}", flush=True)
        if saved.get("code") != code:
            print(f"  note: ingested by code {saved.get('code') or '(unknown)'}, running {code}; figures "
                  "reflect the older ingest", flush=True)
        ids, timings, smoke = saved["documents"], dict(saved["ingest"], reused=True), saved["smoke"]
    else:
        passages = chosen_passages(dataset, args.limit_passages)
        smoke = len(passages) < len(dataset.corpus)
        print(f"{dataset.name}: ingesting {len(passages)} passages into collection '{dataset.name}'"
              f"{' (SMOKE subset)' if smoke else ''}…", flush=True)
        ids, timings = await ingest(api, dataset, passages)
        saved_at.write_text(json.dumps({"set": dataset.name, "smoke": smoke, "passages": len(ids),
                                        "code": code, "ingest": timings, "documents": ids}, indent=1))
        print(f"  ingest of '{dataset.name}': {timings['seconds']:.0f} s for {len(ids)} passages "
              f"({timings['chunks']} chunks), {timings['passages_per_second']:.2f} passages/s "
              f"(submit {timings['submit_seconds']:.0f} s, extraction {timings['extraction_seconds']:.0f} s, "
              f"index settle {timings['settle_seconds']:.0f} s)", flush=True)
    sources = SourceMap(api, dataset.name, ids)
    outcomes: dict[str, list[Outcome]] = {m: [] for m in table}
    began = time.perf_counter()
    # Questions outer, modes inner: background load on the shared machine falls on every mode alike.
    for n, question in enumerate(dataset.questions, 1):
        for mode, (service, extra) in table.items():
            outcomes[mode].append(await ask(api, sources, question, service, extra))
        if n % 10 == 0 or n == len(dataset.questions):
            print(f"  asked {n}/{len(dataset.questions)} questions in {len(table)} modes "
                  f"({time.perf_counter() - began:.0f} s)", flush=True)
    result = {"questions": len(dataset.questions), "passages": len(ids), "smoke": smoke, "ingest": timings,
              "modes": {m: summarise(o, dataset.questions) for m, o in outcomes.items()}}
    print_table(dataset.name, result)
    return result


async def router_figure() -> Any:
    """bench/router_accuracy.py's `router_accuracy()`, when that benchmark exists; else None."""
    if not ROUTER_BENCH.exists():
        return None
    spec = importlib.util.spec_from_file_location("router_accuracy", ROUTER_BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.router_accuracy()
    return await result if inspect.isawaitable(result) else result


async def main_async(args: argparse.Namespace) -> None:
    table = modes(args.modes)
    datasets = [load(args.data, name, args.questions) for name in args.sets]
    held = [d.name for d in datasets if args.data_dir and map_path(args.data_dir, d.name).exists()]
    if held and not args.reuse:  # refuse before the stack starts: nothing is ingested twice
        raise SystemExit(f"{args.data_dir} already holds {', '.join(held)}; pass --reuse to measure again, "
                         "or give another --data-dir")
    keep = contextlib.nullcontext(args.data_dir) if args.data_dir else tempfile.TemporaryDirectory(
        prefix="tg-bench-multihop-")
    with keep as where:
        data_dir = Path(where)
        data_dir.mkdir(parents=True, exist_ok=True)
        backend = InprocBackend()
        settings = RuntimeSettings(data_dir=data_dir, gateway_port=0, request_timeout=args.timeout,
                                   log_level="WARNING")
        results: dict[str, Any] = {}
        code = code_version()  # before the stack imports the processors: files may change while it runs
        try:
            async with Stack(backend, settings, list(PROCESSORS)) as stack:
                await ensure_flow(backend, FLOW, BLUEPRINT)
                # A reused data dir from older code had its packaged blueprint upgraded by the config service.
                api = Api(f"http://127.0.0.1:{stack['gateway'].port}/", timeout=args.timeout + 30)
                for dataset in datasets:
                    results[dataset.name] = await measure_set(api, dataset, data_dir, args, table, code)
        finally:
            await backend.aclose()
    report: dict[str, Any] = {"code": code, "data": str(args.data), "modes": list(table), "sets": results,
                              "data_dir": str(args.data_dir) if args.data_dir else None}
    try:
        accuracy = await router_figure()
    except Exception as exc:  # another benchmark's failure must not lose these figures
        accuracy = f"failed: {type(exc).__name__}: {exc}"
    if isinstance(accuracy, tuple):  # (share routed right, one row per question)
        accuracy, report["router_rows"] = accuracy[0], (accuracy[1] if len(accuracy) > 1 else None)
    if accuracy is not None:
        report["router_accuracy"] = accuracy
        shown = f"{accuracy:.3f}" if isinstance(accuracy, float) else accuracy
        print(f"\nrouter accuracy (bench/router_accuracy.py, rules only): {shown}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
        print(f"\nfigures written to {args.json}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help=f"folder holding the samples ({', '.join(SETS.values())}) [{DEFAULT_DATA}]")
    parser.add_argument("--sets", type=lambda s: s.split(","), default=list(SETS),
                        help=f"comma list of sets to measure [{','.join(SETS)}]")
    parser.add_argument("--modes", type=lambda s: s.split(","),
                        help="comma list of modes; search@ppr=6+graph=3 is search fused with those weights "
                             "[all: document-rag,graph-rag,search,"
                             + ",".join(f"search:{s}" for s in STRATEGIES) + "]")
    parser.add_argument("--questions", type=int, metavar="N", help="ask only the first N questions of each set [all]")
    parser.add_argument("--data-dir", type=Path, metavar="DIR",
                        help="keep the stack's stores (and the document id maps, multihop-<set>.json) in DIR "
                             "[a temporary folder, removed at the end]")
    parser.add_argument("--reuse", action="store_true",
                        help="with --data-dir: skip ingest of every set DIR already holds and ask against it "
                             "(without --reuse such a DIR is refused, so nothing is ingested twice); the flow is "
                             "restarted from the packaged blueprint if DIR's copy is older, and a note says when "
                             "the stores were written by other code than the one running")
    parser.add_argument("--limit-passages", type=int, metavar="N",
                        help="SMOKE RUNS ONLY: ingest just the supporting passages of the chosen questions plus N "
                             "others (a fixed random pick); retrieval is then far easier and the figures are NOT "
                             "comparable with full runs (tables are labelled SMOKE)")
    parser.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                        help="how long the stack waits for a service's response; a question that takes longer "
                             "counts as an error [120]")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write every figure to FILE as JSON")
    args = parser.parse_args(argv)
    unknown = [s for s in args.sets if s not in SETS]
    if unknown:
        parser.error(f"unknown set(s) {', '.join(unknown)}; known: {', '.join(SETS)}")
    if args.reuse and not args.data_dir:
        parser.error("--reuse needs --data-dir")
    return args


def main() -> None:
    asyncio.run(main_async(parse_args()))


if __name__ == "__main__":
    main()
