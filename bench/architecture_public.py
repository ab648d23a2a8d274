"""Extraction and answers on real architecture documents: the public corpus of 72 files from 7 open-source
projects (service READMEs, CODEOWNERS, ADRs, post-mortems, release notes) with gold written by a person,
read in place from ../shared/data/architecture (never copied into the project; README.md and gold.json there).

Every file (not README.md at the corpus root, gold.json or licences) is loaded through the default flow of
the whole in-process stack as `tg-load-text` would (librarian add-document with kind, title = path and
`path`, then add-processing), one collection per gold system. Then, read from the stored graph with SPARQL
through the gateway and scored against gold.json (rules in bench/architecture_scoring.py and
bench/architecture_gold.py): dependency pairs (precision directed and undirected, recall), ownership facts
and CODEOWNERS rule owners (with former owners as a trap), ADR decisions (found, status, why, date),
post-mortems (found, root cause, date) and dated changes (found, date). Then the 30 gold questions are asked
of `search`, `graph-rag` and `document-rag` (and, for ownership, dependency and why questions, the
architecture route of an entity the question names) in the collection of the question's first support
file (q09 compares two systems; only the first one's documents are there to answer from), and judged
automatically: "right" when the answer plus its cited sources holds at least half of the gold answer's key
terms AND a returned source is a gold support file, "partly" when one holds, else "wrong". That judge is a
proxy for a person reading the answer, no more: it cannot tell a right name in a wrong sentence.
`--junk-sample N` prints N random knowledge facts (is_knowledge, rdf:type left out) with the document and
lines they came from, for a person to judge. Figures are printed (and written with --json), never asserted.

    .venv/bin/python bench/architecture_public.py --data-dir /tmp/arch --verbose --junk-sample 40
    .venv/bin/python bench/architecture_public.py --data-dir /tmp/arch --reuse --systems govuk --questions q14,q15
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))

import architecture_gold as gold_rules  # noqa: E402
import architecture_scoring as scoring  # noqa: E402
from architecture_report import print_report  # noqa: E402
from multihop_public import code_version  # noqa: E402

from tracegraph.base.bus.inproc import InprocBackend  # noqa: E402
from tracegraph.base.errors import TraceGraphError  # noqa: E402
from tracegraph.base.provenance.vocab import RDF, is_knowledge  # noqa: E402
from tracegraph.base.settings import RuntimeSettings  # noqa: E402
from tracegraph.cli.api import Api  # noqa: E402
from tracegraph.cli.library_upload import process, wait_for_extraction  # noqa: E402
from tracegraph.launch.registry import PROCESSORS  # noqa: E402
from tracegraph.launch.stack import Stack, ensure_flow  # noqa: E402
from tracegraph.schemas.rdf import Triple  # noqa: E402

FLOW = "default"
IN_FLIGHT = 8
SERVICES = ("search", "graph-rag", "document-rag")
ROUTES = {"ownership": "ownership", "dependency": "dependencies", "why": "memory"}
ROUTE_TEXT_KEYS = {"label", "handles", "owners", "pattern", "path", "title", "text", "predicate-label", "status"}
PREFIXES = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX tg: <https://trustgraph.ai/ns/>
"""
DEFAULT_ROWS = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
HISTORY_ROWS = PREFIXES + """SELECT ?r ?t ?from ?by ?doc WHERE { GRAPH <urn:graph:history> {
  ?r rdf:reifies ?t . OPTIONAL { ?r tg:validFrom ?from } OPTIONAL { ?r tg:supersededBy ?by }
  OPTIONAL { ?r tg:statedIn ?doc } FILTER NOT EXISTS { ?r tg:retractedAt ?gone } } }"""
SOURCE_ROWS = PREFIXES + """SELECT ?t ?first ?last ?line ?doc WHERE { GRAPH <urn:graph:source> {
  ?sg tg:contains ?t . OPTIONAL { ?sg tg:firstLine ?first } OPTIONAL { ?sg tg:lastLine ?last }
  OPTIONAL { ?sg prov:wasDerivedFrom ?at . ?at tg:lineNumber ?line }
  OPTIONAL { ?sg prov:wasDerivedFrom+ ?doc . FILTER NOT EXISTS { ?doc prov:wasDerivedFrom ?up } } } }"""
COUNT_ALL = "SELECT (COUNT(*) AS ?n) WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }"
ANCESTORS = PREFIXES + "SELECT DISTINCT ?doc WHERE { GRAPH <urn:graph:source> { <%s> prov:wasDerivedFrom+ ?doc } }"


async def sparql(api: Api, collection: str, query: str) -> list[dict[str, Any]]:
    reply = await api.flow_service(FLOW, "sparql", {"query": query, "collection": collection, "limit": 1_000_000,
                                                    "timeout": 300})
    if reply.get("truncated"):
        print(f"  note: SPARQL result truncated in '{collection}'", flush=True)
    return reply.get("bindings") or []


# ---------------------------------------------------------------- ingest

async def ingest(api: Api, files: list[gold_rules.CorpusFile]) -> tuple[dict[str, dict[str, str]], dict[str, Any]]:
    """Every file into its system's collection, then wait for extraction; (system → {path: document id}, timings)."""
    began, gate = time.perf_counter(), asyncio.Semaphore(IN_FLIGHT)
    ids: dict[str, dict[str, str]] = {f.system: {} for f in files}

    async def submit(f: gold_rules.CorpusFile) -> None:
        collection = gold_rules.collection_of(f.system)
        async with gate:
            reply = await api.request("librarian", {
                "operation": "add-document", "collection": collection,
                "document-metadata": {"id": "", "kind": f.kind, "title": f.path, "path": f.path,
                                      "collection": collection},
                "content": base64.b64encode(f.file.read_bytes()).decode()})
            ids[f.system][f.path] = reply["document-metadata"]["id"]
            await process(api, ids[f.system][f.path], FLOW, collection)

    await asyncio.gather(*(submit(f) for f in files))
    print(f"  submitted {len(files)} files ({time.perf_counter() - began:.0f} s)", flush=True)
    chunks, settling = 0, 0.0
    for system, docs in ids.items():
        collection = gold_rules.collection_of(system)
        chunks += await wait_for_extraction(api, FLOW, list(docs.values()), collection, timeout=3600)
        extracted = time.perf_counter()
        await settle(api, collection)
        settling += time.perf_counter() - extracted
        print(f"  {system}: {len(docs)} files extracted ({time.perf_counter() - began:.0f} s)", flush=True)
    seconds = time.perf_counter() - began
    return ids, {"seconds": seconds, "files": len(files), "chunks": chunks, "files_per_second": len(files) / seconds,
                 "settle_seconds": settling}


async def settle(api: Api, collection: str, timeout: float = 300.0) -> None:
    """Whole-document extraction (architecture-extract) and the indexes trail the chunks' subgraphs: wait
    until the collection's quad count, its BM25 hits and its chunk vectors stay the same twice, 3 s apart."""
    probe = (await api.flow_service(FLOW, "embeddings", {"texts": ["who owns it and what does it depend on"]}))
    previous, steady, deadline = None, 0, time.monotonic() + timeout
    while steady < 2 and time.monotonic() < deadline:
        await asyncio.sleep(3)
        count = (await sparql(api, collection, COUNT_ALL))[0]["n"]["v"]
        bm25 = await api.flow_service(FLOW, "keyword-query", {"query": "service owner depends", "limit": 20,
                                                              "collection": collection})
        chunks = await api.flow_service(FLOW, "document-embeddings", {"vector": probe["vectors"][0], "limit": 1000,
                                                                      "collection": collection})
        state = (count, [m["text"] for m in bm25.get("matches", [])], len(chunks.get("matches", [])))
        steady, previous = (steady + 1 if state == previous else 0), state


# ---------------------------------------------------------------- graph figures

async def read_view(api: Api, collection: str) -> tuple[scoring.GraphView, list[dict[str, Any]]]:
    rows = await sparql(api, collection, DEFAULT_ROWS)
    return scoring.GraphView(rows, await sparql(api, collection, HISTORY_ROWS)), rows


def extraction_figures(view: scoring.GraphView, gold: dict[str, Any], system: str) -> dict[str, Any]:
    def mine(kind: str) -> list[dict[str, Any]]:
        return [item for item in gold[kind] if item["system"] == system]

    return {"dependencies": scoring.score_dependencies(view, mine("dependencies")),
            "ownership": scoring.score_ownership(view, mine("ownership")),
            "decisions": scoring.score_decisions(view, mine("decisions")),
            "incidents": scoring.score_incidents(view, mine("incidents")),
            "dated_changes": scoring.score_changes(view, mine("dated_changes"))}


def total_figures(per_system: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Counts summed over systems, ratios recomputed from the sums."""
    def summed(feature: str, key: str) -> int:
        return sum(f[feature][key] for f in per_system.values())

    def ratio(n: int, d: int) -> float | None:
        return n / d if d else None

    deps = {k: summed("dependencies", k) for k in ("ours", "gold", "matched_directed", "matched_undirected",
                                                    "recalled_undirected", "recalled_directed")}
    deps |= {"precision_directed": ratio(deps["matched_directed"], deps["ours"]),
             "precision_undirected": ratio(deps["matched_undirected"], deps["ours"]),
             "recall_undirected": ratio(deps["recalled_undirected"], deps["gold"]),
             "recall_directed": ratio(deps["recalled_directed"], deps["gold"])}
    own = {k: summed("ownership", k) for k in ("facts", "rule_owner_pairs", "gold", "right", "recalled",
                                                "emeritus_errors")}
    own |= {"precision": ratio(own["right"], own["facts"] + own["rule_owner_pairs"]),
            "recall": ratio(own["recalled"], own["gold"])}
    return {"dependencies": deps, "ownership": own,
            "decisions": {k: summed("decisions", k) for k in ("gold", "found", "status", "why", "date", "with_why")},
            "incidents": {k: summed("incidents", k) for k in ("gold", "found", "root_cause", "date")},
            "dated_changes": {k: summed("dated_changes", k) for k in ("gold", "found", "with_iso_date", "date")}}


# ---------------------------------------------------------------- questions

class SourcePaths:
    """A returned source (document, chunk or subgraph IRI, or a title) → corpus path, when it has one."""

    def __init__(self, api: Api, collection: str, ids: dict[str, str]) -> None:
        self.api, self.collection = api, collection
        self.by_id = {doc: path for path, doc in ids.items()}
        self.known: dict[str, str | None] = {}

    async def path(self, uri: str, title: str = "") -> str | None:
        if title in self.by_id.values():
            return title
        if uri in self.by_id:
            return self.by_id[uri]
        if uri and uri not in self.known:
            rows = await sparql(self.api, self.collection, ANCESTORS % uri) if uri.startswith(("urn:", "http")) else []
            self.known[uri] = next((self.by_id[r["doc"]["i"]] for r in rows if r["doc"].get("i") in self.by_id), None)
        return self.known.get(uri)


async def ask(api: Api, paths: SourcePaths, question: str, service: str) -> dict[str, Any]:
    body = {"query": question, "collection": paths.collection, "streaming": False, "explain": False}
    if service == "search":
        body["use-cache"] = False
    began = time.perf_counter()
    try:
        reply = await api.flow_service(FLOW, service, body)
    except TraceGraphError as exc:
        return {"error": f"{type(exc).__name__}: {exc}", "answer": "", "sources": []}
    found = [await paths.path(s.get("uri", ""), s.get("title", "")) for s in reply.get("sources") or []]
    return {"answer": reply.get("response") or "", "sources": list(dict.fromkeys(p for p in found if p)),
            "ms": (time.perf_counter() - began) * 1000}


def named_entities(question: str, view: scoring.GraphView) -> list[str]:
    """Labels of the collection's entities the question names, earliest first, then longest."""
    lowered, found = gold_rules.fold(question), {}
    for labels in (ps.get("http://www.w3.org/2000/01/rdf-schema#label", []) for ps in view.out.values()):
        for label in labels:
            key = gold_rules.fold(label)
            if (len(key) < 2 or " ".join(gold_rules.words(key)) in gold_rules.SYSTEM_NAMES
                    or not set(gold_rules.words(key)) - gold_rules.STOP_WORDS - gold_rules.GENERIC):
                continue
            at = re.search(rf"(?<!\w){re.escape(key)}(?!\w)", lowered)
            if at and (label not in found or at.start() < found[label]):
                found[label] = at.start()
    return sorted(found, key=lambda label: (found[label], -len(label)))


async def ask_route(api: Api, paths: SourcePaths, question: dict[str, Any], view: scoring.GraphView) -> dict[str, Any]:
    """The architecture route of the question's type about the first of the (at most 3) entities the question
    names, system names aside, for which it has owners, rules, edges or memory items."""
    route, first = ROUTES[question["type"]], None
    for name in named_entities(question["question"], view)[:3]:
        params = {"flow": FLOW, "collection": paths.collection}
        if route == "memory":
            params["q"] = question["question"]
        try:
            reply = await api.get(f"{route}/{quote(name, safe='')}", params)
        except TraceGraphError:
            continue
        texts, sources = [], []
        await _route_texts(reply, paths, texts, sources, False)
        result = {"entity": name, "answer": " ".join(texts), "sources": list(dict.fromkeys(sources))}
        answer = next((v for v in reply.values() if isinstance(v, dict)), {})
        if any(answer.get(k) for k in ("owners", "codeowners", "edges", "items")):
            return result
        first = first or result
    return first or {"entity": None, "answer": "", "sources": [], "note": "no entity the question names answered"}


async def _route_texts(node: Any, paths: SourcePaths, texts: list[str], sources: list[str], in_source: bool) -> None:
    """The route's readable strings (labels, handles, patterns, titles, texts) and its sources' paths."""
    if isinstance(node, list):
        for item in node:
            await _route_texts(item, paths, texts, sources, in_source)
    elif isinstance(node, dict) and in_source:
        found = await paths.path(node.get("document", ""), node.get("title", ""))
        sources.extend([found] if found else [])
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in ROUTE_TEXT_KEYS:
                texts.extend(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str))
            await _route_texts(value, paths, texts, sources, key in ("source", "sources"))


async def ask_questions(api: Api, gold: dict[str, Any], chosen: list[dict[str, Any]], services: list[str],
                        views: dict[str, scoring.GraphView], ids: dict[str, dict[str, str]],
                        lower: bool = False) -> list[dict[str, Any]]:
    rows, began = [], time.perf_counter()
    for n, q in enumerate(chosen, 1):
        q = {**q, "question": q["question"].lower()} if lower else q
        system = gold_rules.system_of_path(q["support"][0]["file"])
        paths = SourcePaths(api, gold_rules.collection_of(system), ids[system])
        support, names = sorted({s["file"] for s in q["support"]}), gold_rules.gold_names(gold, system)
        row = {"id": q["id"], "type": q["type"], "system": system, "question": q["question"],
               "terms": gold_rules.key_terms(q["answer"], names), "support": support, "services": {}}
        asked = {s: await ask(api, paths, q["question"], s) for s in services}
        if q["type"] in ROUTES:
            began_route = time.perf_counter()
            asked["route"] = await ask_route(api, paths, q, views[system])
            asked["route"]["ms"] = (time.perf_counter() - began_route) * 1000
        for service, out in asked.items():
            verdict = gold_rules.judge(out["answer"], out["sources"], q["answer"], support, names)
            row["services"][service] = {**out, "answer": out["answer"][:600], "verdict": verdict.verdict,
                                        "found_terms": verdict.found_terms, "gold_sources": verdict.gold_sources}
        rows.append(row)
        if n % 5 == 0 or n == len(chosen):
            print(f"  asked {n}/{len(chosen)} ({time.perf_counter() - began:.0f} s)", flush=True)
    return rows


# ---------------------------------------------------------------- junk sample

async def junk_sample(api: Api, n: int, collections: dict[str, tuple[scoring.GraphView, list[dict[str, Any]]]]
                      ) -> list[dict[str, Any]]:
    """N knowledge facts drawn at random (seed 7) from every collection's default graph, with their sources."""
    pool = []
    for collection, (view, rows) in collections.items():
        for row in rows:
            fact = Triple.model_validate({"s": row["s"], "p": row["p"], "o": row["o"]})
            if fact.p.iri != RDF.type.iri and is_knowledge(fact):
                pool.append((collection, *(scoring.term_text(row[k]) for k in "spo")))
    picked = random.Random(7).sample(sorted(set(pool)), min(n, len(pool)))
    where: dict[str, dict[tuple[str, str, str], list[str]]] = {}
    for collection in {c for c, *_ in picked}:
        view, table = collections[collection][0], {}
        for r in await sparql(api, collection, SOURCE_ROWS):
            key = tuple(scoring.term_text(r["t"]["tr"][k]) for k in "spo")
            first, last = scoring.term_text(r.get("first")), scoring.term_text(r.get("last"))
            span = f"line {scoring.term_text(r['line'])}" if r.get("line") else f"lines {first}-{last}" if first else ""
            table.setdefault(key, []).append(f"{view.paths.get(scoring.term_text(r.get('doc')), '?')} {span}".strip())
        where[collection] = table
    out = []
    for collection, s, p, o in picked:
        view = collections[collection][0]
        out.append({"collection": collection, "subject": view.label(s), "predicate": re.split(r"[/#]", p)[-1],
                    "object": view.label(o)[:160] if o in view.out or o in view.iris else o[:160],
                    "sources": sorted(set(where[collection].get((s, p, o), [])))})
    return out


# ---------------------------------------------------------------- run

async def main_async(args: argparse.Namespace) -> None:
    gold = gold_rules.load_gold(args.data)
    held = {s for s in args.systems if args.data_dir and (args.data_dir / f"architecture-{s}.json").exists()}
    if held and not args.reuse:
        raise SystemExit(f"{args.data_dir} already holds {', '.join(sorted(held))}; pass --reuse, "
                         "or give another --data-dir")
    chosen = [q for q in gold["questions"] if gold_rules.system_of_path(q["support"][0]["file"]) in args.systems]
    if args.questions and args.questions[0].isdigit():
        chosen = chosen[:int(args.questions[0])]
    elif args.questions:
        chosen = [q for q in chosen if q["id"] in args.questions]
    keep = contextlib.nullcontext(args.data_dir) if args.data_dir else tempfile.TemporaryDirectory(prefix="tg-arch-")
    report: dict[str, Any] = {"code": code_version(), "data": str(args.data), "systems": args.systems}
    with keep as where:
        data_dir = Path(where)
        data_dir.mkdir(parents=True, exist_ok=True)
        backend = InprocBackend()
        settings = RuntimeSettings(data_dir=data_dir, gateway_port=0, request_timeout=args.timeout, log_level="WARNING")
        try:
            async with Stack(backend, settings, list(PROCESSORS)) as stack:
                await ensure_flow(backend, FLOW, "default")
                api = Api(f"http://127.0.0.1:{stack['gateway'].port}/", timeout=args.timeout + 30)
                ids = {s: json.loads((data_dir / f"architecture-{s}.json").read_text())["documents"] for s in held}
                for s in held:
                    print(f"{s}: reusing {len(ids[s])} ingested files from {data_dir}", flush=True)
                files = [f for s in args.systems if s not in held for f in gold_rules.corpus_files(args.data, s)]
                if files:
                    print(f"ingesting {len(files)} files into {len(args.systems) - len(held)} collection(s)…",
                          flush=True)
                    fresh, timings = await ingest(api, files)
                    report["ingest"] = timings
                    for s, docs in fresh.items():
                        (data_dir / f"architecture-{s}.json").write_text(json.dumps(
                            {"system": s, "code": report["code"], "ingest": timings, "documents": docs}, indent=1))
                    ids |= fresh
                print("reading the stored graphs…", flush=True)
                views = {s: await read_view(api, gold_rules.collection_of(s)) for s in args.systems}
                report["extraction"] = {s: extraction_figures(views[s][0], gold, s) for s in args.systems}
                report["extraction_total"] = total_figures(report["extraction"])
                print(f"asking {len(chosen)} questions of {', '.join(args.services)} (and the routes)…", flush=True)
                report["questions"] = await ask_questions(api, gold, chosen, args.services,
                                                          {s: v for s, (v, _) in views.items()}, ids)
                if args.lower_case:  # the same questions as people type them in a hurry
                    print("asking them again, lower-cased…", flush=True)
                    report["questions_lower_case"] = await ask_questions(
                        api, gold, chosen, args.services, {s: v for s, (v, _) in views.items()}, ids, lower=True)
                if args.junk_sample:
                    report["junk_sample"] = await junk_sample(
                        api, args.junk_sample, {gold_rules.collection_of(s): views[s] for s in args.systems})
        finally:
            await backend.aclose()
    print_report(report, args.verbose)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
        print(f"\nfigures written to {args.json}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=gold_rules.DEFAULT_DATA,
                   help=f"the corpus folder [{gold_rules.DEFAULT_DATA}]")
    p.add_argument("--systems", type=lambda s: s.split(","), default=list(gold_rules.SYSTEMS),
                   help=f"comma list of gold systems [{','.join(gold_rules.SYSTEMS)}]")
    p.add_argument("--services", type=lambda s: s.split(","), default=list(SERVICES),
                   help=f"comma list of answering services [{','.join(SERVICES)}]")
    p.add_argument("--questions", type=lambda s: s.split(","), metavar="N|IDS",
                   help="ask only the first N questions, or these ids (q01,q14) [all of the chosen systems]")
    p.add_argument("--data-dir", type=Path, metavar="DIR", help="keep the stores (and architecture-<system>.json "
                   "document maps) in DIR [a temporary folder, removed at the end]")
    p.add_argument("--reuse", action="store_true", help="with --data-dir: ask against the systems DIR already holds "
                   "instead of ingesting them again")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="a service's response time limit [120]")
    p.add_argument("--junk-sample", type=int, default=0, metavar="N", help="print N random facts with their sources")
    p.add_argument("--lower-case", action="store_true", help="also ask every question lower-cased, and score it")
    p.add_argument("--verbose", action="store_true", help="false positives/negatives, items and per-question verdicts")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write every figure to FILE")
    args = p.parse_args(argv)
    unknown = [s for s in args.systems if s not in gold_rules.SYSTEMS] + [s for s in args.services if s not in SERVICES]
    if unknown:
        p.error(f"unknown system(s) or service(s): {', '.join(unknown)}")
    if args.reuse and not args.data_dir:
        p.error("--reuse needs --data-dir")
    return args


if __name__ == "__main__":
    asyncio.run(main_async(parse_args()))
