"""`tg-demo`: the README's main job. Start the embedded stack, load the sample corpus through the
gateway as a user would, wait for extraction, trace facts back to their source documents, and answer a
question with GraphRAG (its explanation streamed step by step), Document RAG and the ReAct agent, a
strategic one from community reports (global search), a point-in-time answer, the architecture routes
(ownership, dependencies, memory, intent check), then list the stored traces. No server, broker or API key needed; with TG_LLM_URL set, extraction and
answering use the LLM."""

from __future__ import annotations

import argparse
import asyncio
import re
import textwrap
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from tracegraph.base.bus.protocol import Backend
from tracegraph.base.settings import RuntimeSettings, add_runtime_arguments, settings_from
from tracegraph.base.usage import ArgumentParser
from tracegraph.cli.api import Api
from tracegraph.cli.architecture_text import dated_source_text, headline
from tracegraph.cli.explain_render import TraceRenderer
from tracegraph.cli.library_upload import add_document, process, wait_for_extraction
from tracegraph.cli.plurals import counted
from tracegraph.cli.trace_store import list_traces
from tracegraph.flow.gateway.app import check_port_free
from tracegraph.launch.process import configure_logging, run_main, serve
from tracegraph.launch.registry import PROCESSORS
from tracegraph.launch.stack import Stack, ensure_flow
from tracegraph.launch.tour_text import agent_event, columns, step_header, trace_pointer

COUNTS = """
PREFIX tg: <https://trustgraph.ai/ns/>
SELECT (COUNT(DISTINCT ?chunk) AS ?chunks) (COUNT(DISTINCT ?fact) AS ?facts) (COUNT(DISTINCT ?sg) AS ?subgraphs)
WHERE { GRAPH <urn:graph:source> { ?chunk a tg:Chunk . OPTIONAL { ?sg a tg:Subgraph ; tg:contains ?fact } } }"""

TRACE = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
SELECT ?s ?p ?o ?chunk ?chunkLabel ?title ?extractor ?lines WHERE {
  ?es rdfs:label ?s . ?ep rdfs:label ?p . ?eo rdfs:label ?o .
  FILTER(?ep = <https://trustgraph.ai/r/depends-on>)
  ?es ?ep ?eo .
  GRAPH <urn:graph:source> {
    ?sg tg:contains <<( ?es ?ep ?eo )>> ; tg:extractor ?extractor ; prov:wasDerivedFrom ?chunk ; rdfs:label ?lines .
    ?chunk rdfs:label ?chunkLabel ; prov:wasDerivedFrom+ ?document .
  }
  ?document a tg:Document ; dc:title ?title .
} ORDER BY ?s ?o LIMIT 3"""


STRATEGIC = "What are the top risks across the platform?"
POINT_IN_TIME = "Who owns Skyline?"  # the two dated Skyline reviews disagree: 2024 and 2025 owners
AS_OF = "2024-06-01"
ARCHITECTURE_ENTITY = "Skyline"
OWNERSHIP_QUESTION = "Who owns Skyline?"
INTENT_PAIRS = (  # (change summary, work item): one that matches, one that does not
    ("Skyline now writes each day's forecast through the Storage Gateway and retries when the gateway is busy.",
     "Route Skyline's forecast writes through the Storage Gateway instead of writing to the Orbis Cloud directly."),
    ("Rename the billing page's buttons and fix the colour of the invoice table header.",
     "Route Skyline's forecast writes through the Storage Gateway instead of writing to the Orbis Cloud directly."),
)
OFFLINE_ANSWER = "Offline answer (no LLM configured)"  # how every offline answer begins
WIDTH = 110
LOG_NAME = "tg-demo.log"  # in the data directory


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="tg-demo", formatter_class=argparse.RawDescriptionHelpFormatter, description=(
        "A guided tour of TraceGraph on a sample corpus, in one process: no server, broker\n"
        "or API key needed (with TG_LLM_URL set, extraction and answers use the LLM). It\n"
        "  1. starts every processor on the embedded defaults, the gateway on a free port;\n"
        "  2. loads the bundled sample corpus (or --corpus) through the gateway and waits\n"
        "     for knowledge extraction;\n"
        "  3. prints the graph's size and traces a few facts to their source documents;\n"
        "  4. answers --question with explained GraphRAG, Document RAG and the agent;\n"
        "  5. answers --strategic from the community reports (global search);\n"
        "  6. answers --point-in-time as of --as-of and today, and lists what changed;\n"
        "  7. shows the architecture routes on Skyline: ownership, dependencies,\n"
        "     institutional memory, an intent check of a matching and a mismatching\n"
        "     change, and ownership asked through search;\n"
        "  8. lists the stored explain traces, then stops and exits.\n"
        "The data stays in --data-dir (./tg-data) for tg-launch and the tg-* commands."))
    add_runtime_arguments(p)
    p.add_argument("--gateway-port", type=int, help="port the gateway listens on, on 127.0.0.1 [a free port]")
    p.add_argument("--corpus", type=Path, help="a folder of .md/.txt/.pdf files to load instead of the sample")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for extraction [300]")
    p.add_argument("-q", "--question", default="What does Helios Grid depend on?",
                   help="the question asked at the end [What does Helios Grid depend on?]")
    p.add_argument("--strategic", default=STRATEGIC,
                   help=f"the corpus-wide question answered from community reports [{STRATEGIC}]")
    p.add_argument("--point-in-time", default=POINT_IN_TIME,
                   help=f"the question answered as of --as-of and today, from the graph's history [{POINT_IN_TIME}]")
    p.add_argument("--as-of", default=AS_OF, help=f"the earlier date of that question, YYYY-MM-DD [{AS_OF}]")
    return p


def sample_corpus() -> list[Path]:
    folder = resources.files("tracegraph.launch") / "corpus"
    return sorted(Path(str(entry)) for entry in folder.iterdir() if is_document(Path(entry.name)))


def is_document(path: Path) -> bool:
    """What the demo loads from a corpus folder: text, Markdown, PDF and CODEOWNERS files."""
    return path.suffix in {".md", ".txt", ".pdf"} or path.name == "CODEOWNERS"


def value(row: dict, name: str) -> str:
    term = row.get(name, {})
    return term.get("v") or term.get("i") or ""


def answer_text(text: str) -> str:
    """An answer under its `Answer:` label. An offline answer's header ("Offline answer (no LLM
    configured), quoting …:") joins the label as "Answer: offline (no LLM configured), quoting …:",
    after the "As of DATE:" line of an answer from an earlier graph."""
    text = text.strip()
    as_of = re.match(r"As of [^\n]*:\n", text)
    if as_of:
        text = text[as_of.end():]
    if text.startswith(OFFLINE_ANSWER):
        text = "offline" + text[len("Offline answer"):]
    if as_of:
        text = as_of.group(0) + text
    first, *rest = text.splitlines() or [""]
    return "\n".join([f"  Answer: {first}", *(f"    {line}" for line in rest)])


def step_text(kind: str, content: str) -> str:
    """An agent step in full, wrapped at word boundaries; an observation (a tool's whole answer, which
    the agent's answer quotes) by its first line of substance."""
    if kind == "observation":  # an offline answer's label left out, the statement after it kept
        lines = [re.sub(r"^Offline answer \([^)]*\)[:,]?\s*", "", line) for line in content.splitlines()]
        lines = [line for line in lines if line.strip() and not line.startswith(OFFLINE_ANSWER)]
        more = f" (+{len(lines) - 1} more lines)" if len(lines) > 1 else ""
        content = textwrap.shorten(lines[0] if lines else content, WIDTH - 20 - len(more), placeholder=" …") + more
    return textwrap.fill(f"{kind}: {content}", WIDTH, initial_indent="  ", subsequent_indent="      ")


def at_most(shown: int, marker: str, more: str) -> Callable[[list[str]], list[str]]:
    """A trim for a rendered step: the first `shown` of the items it lists (lines starting with
    `marker`), then how many more there are and where to see them."""
    def trim(lines: list[str]) -> list[str]:
        items = [i for i, line in enumerate(lines) if line.startswith(marker)]
        if len(items) <= shown:
            return lines
        indent = marker[:len(marker) - len(marker.lstrip())]
        return lines[:items[shown]] + [f"{indent}… {len(items) - shown} more ({more})"]
    return trim


async def explained(api: Api, service: str, request: dict, trim: Callable[[list[str]], list[str]] = list,
                    steps: tuple[str, ...] | None = None) -> dict:
    """Ask a flow service, printing each explain event (of `steps`, when given) as it streams in, rendered
    and trimmed; returns the answer's last message. A step's own `Answer:` line is left out: the whole
    answer is printed after the trace."""
    renderer = TraceRenderer(api, "default", "default")
    final: dict = {}
    trace = ""  # the first event's IRI names the trace
    async for message in api.stream("default", service, request):
        if message.get("message_type") == "explain":
            trace = trace or message["explain_id"]
            lines = await renderer.render(message["explain_id"], message["explain_triples"])
            step = re.match(r"\[(\w+)\]", lines[0] if lines else "")
            if steps is None or (step and step.group(1) in steps):
                shown = [step_header(line) for line in lines if not line.lstrip().startswith("Answer: ")]
                print("  " + "\n  ".join(trim(shown)))
        elif message.get("end_of_session"):
            final = message
    if trace:
        print(trace_pointer(trace))
    return final


async def demo(api: Api, files: list[Path], timeout: float, question: str, strategic: str,
               point_in_time: str = POINT_IN_TIME, as_of: str = AS_OF) -> None:
    started = time.perf_counter()
    ids = []
    name_width = max((len(path.name) for path in files), default=0)
    for path in files:
        meta = await add_document(api, path, collection="default")
        await process(api, meta["id"], "default", "default")
        ids.append(meta["id"])
        print(f"  loaded {path.name:<{name_width}}  {meta['size']:>7,} bytes  → {meta['id']}")
    last: list[tuple[int, int]] = []

    def show(done: int, chunks: int) -> None:
        if [(done, chunks)] != last:
            print(f"  extraction: {done}/{chunks} chunks")
            last[:] = [(done, chunks)]

    await wait_for_extraction(api, "default", ids, "default", timeout, show)
    row = (await api.flow_service("default", "sparql", {"query": COUNTS}))["bindings"][0]
    print(f"knowledge graph: {value(row, 'chunks')} chunks, {value(row, 'facts')} facts in "
          f"{value(row, 'subgraphs')} subgraphs, in {time.perf_counter() - started:.1f}s")
    print("facts traced to their sources (one SPARQL query over urn:graph:source):")
    for r in (await api.flow_service("default", "sparql", {"query": TRACE}))["bindings"]:
        print(f"  ({value(r, 's')}, {value(r, 'p')}, {value(r, 'o')})   [{value(r, 'extractor')} extractor]")
        print(f"      Source: {value(r, 'lines')} → {value(r, 'chunkLabel')} → {value(r, 'title')}")
    await ask(api, question)
    await ask_documents(api, question)
    await ask_agent(api, question)
    await ask_globally(api, strategic)
    await ask_as_of(api, point_in_time, as_of)
    await ask_architecture(api)
    print("\nstored explain traces (tg-list-explain-traces):")
    for trace in await list_traces(api, "default", "default", sub_traces_too=True):
        part = f"  (part of {trace.parent})" if trace.parent else ""
        print(f"  {trace.kind:<8} {trace.id}{part}")


async def ask(api: Api, question: str) -> None:
    """One GraphRAG question, its explain events printed as they stream in, then the answer."""
    print(f"\nGraphRAG, explained: {question!r}")
    final = await explained(api, "graph-rag", {"query": question},
                            at_most(3, "      Edge:", "tg-show-explain-trace shows them all"))
    print(answer_text(final.get("response", "")))
    print("  Sources: " + ", ".join(s["title"] for s in final.get("sources") or []))


async def ask_documents(api: Api, question: str) -> None:
    """The same question with Document RAG: its whole trace (the chunks it used, each traced to its
    document), then the answer."""
    print(f"\nDocument RAG, explained: {question!r}")
    final = await explained(api, "document-rag", {"query": question})
    print(answer_text(final.get("response", "")))


async def ask_agent(api: Api, question: str) -> None:
    """The same question to the ReAct agent: each think / act / observe step as it happens."""
    print(f"\nAgent: {question!r}")
    answer: list[str] = []
    trace = ""
    async for message in api.stream("default", "agent", {"question": question, "streaming": True}):
        kind, content = message.get("message_type"), message.get("content", "")
        if kind in ("thought", "action", "observation") and content:
            print(step_text(kind, content))
        elif kind == "explain" and (recorded := agent_event(message["explain_id"])):
            trace = trace or message["explain_id"]
            print(f"  [explain] recorded {recorded}")
        elif kind == "answer":
            answer.append(content)
            if message.get("end_of_message") and "".join(answer).strip():
                print(answer_text("".join(answer)))
                answer.clear()
    if "".join(answer).strip():
        print(answer_text("".join(answer)))
    if trace:
        print(trace_pointer(trace))


async def ask_globally(api: Api, question: str, wait: float = 60.0) -> None:
    """A strategic question, which the search router answers globally: a question about risks from the
    risks computed over the graph's architecture, any other by map-reduce over the community reports the
    community processor wrote while the corpus was ingested."""
    print(f"\nGlobal search (community reports), explained: {question!r}")
    deadline = time.monotonic() + wait
    while not (await api.flow_service("default", "community", {"operation": "status"}))["counts"].get("reports"):
        if time.monotonic() > deadline:
            print("  no community reports yet (tg-rebuild-communities builds them)")
            return
        await asyncio.sleep(0.5)
    scores, edges = at_most(3, "      #", "tg-show-explain-trace"), at_most(3, "      Edge:", "tg-show-explain-trace")
    final = await explained(api, "search", {"query": question}, lambda lines: edges(scores(lines)),
                            steps=("exploration", "focus"))
    print(answer_text(final.get("response", "")))
    block = final.get("confidence") or {}
    print(f"  query type {final.get('query_type')}; confidence {block.get('confidence')}; "
          f"{counted(block.get('source_density'), 'source document')}")


async def ask_as_of(api: Api, question: str, as_of: str) -> None:
    """One question answered from the graph as it held on an earlier date, then as it holds today:
    the 2025 Skyline review superseded the 2024 one's owner, and the graph keeps both in its history."""
    for when in (as_of, None):
        print(f"\nGraphRAG, {'as of ' + when if when else 'today'}: {question!r}")
        final = await explained(api, "graph-rag", {"query": question, **({"as-of": when} if when else {})},
                                at_most(2, "      Edge:", "tg-show-explain-trace shows them all"),
                                steps=("question", "focus"))
        print(answer_text(final.get("response", "")))
    changes = (await api.flow_service("default", "temporal", {"operation": "diff", "from": as_of,
                                                              "to": time.strftime("%Y-%m-%d")}))
    changed = [c for c in changes.get("changes", []) if c["change"] == "changed"]
    labels = changes.get("labels", {})
    print(f"\nchanged since {as_of} (tg-graph-diff): {counted(len(changed), 'value')} replaced")
    for change in changed[:3]:
        (s, p, new), old = (_named(change["fact"][k], labels) for k in "spo"), _named(change["previous"]["o"], labels)
        print(f"  {s} {p}: {old} → {new}")


async def ask_architecture(api: Api, entity: str = ARCHITECTURE_ENTITY, wait: float = 30.0) -> None:
    """The architecture routes on the sample services: who owns Skyline (the graph and a stale CODEOWNERS
    line disagree), its dependency tree (with the cycle the ADR describes), the decisions and incidents
    behind it, an intent check of a matching and a mismatching change, and ownership asked through search."""
    deadline = time.monotonic() + wait
    while not (owned := await api.get(f"ownership/{entity}", {}))["ownership"]["codeowners"]:
        if time.monotonic() > deadline:
            break  # the architecture extractor reads whole documents beside the chunker; show what there is
        await asyncio.sleep(0.5)
    print(f"\nOwnership (GET /api/v1/ownership/{entity}, tg-show-ownership):")
    owners = owned["ownership"]["owners"]
    if owners:
        print(textwrap.fill(headline(entity, owners[0]), WIDTH, initial_indent="  ", subsequent_indent="    ",
                            break_on_hyphens=False))
    rows = [(owner.get("standing", "current"), " ".join([owner["label"], *owner["handles"]]),
             f"[{', '.join(owner['relations'])}]",
             "from " + "; ".join(dict.fromkeys(dated_source_text(s) for s in owner["sources"])))
            for owner in owners]  # the current owners first, then the earlier ones, each source dated
    for row in columns(rows):
        print(f"  {row}")
    if owned["ownership"]["discrepancy"]:
        print(textwrap.fill(owned["ownership"]["discrepancy"], WIDTH, initial_indent="  ! ", subsequent_indent="    "))
    tree = (await api.get(f"dependencies/{entity}", {"depth": "3"}))["dependencies"]
    print(f"\nDependencies, depth 3 (GET /api/v1/dependencies/{entity}?depth=3, tg-show-dependencies):")
    for edge in tree["edges"]:
        print(f"  {'  ' * (edge['depth'] - 1)}{edge['source-label']} {edge['predicate-label']} "
              f"{edge['target-label']}  (weight {edge['weight']})")
    for cycle in tree["cycles"]:
        print(f"  cycle: {' → '.join(cycle)}")
    remembered = (await api.get(f"memory/{entity}", {"limit": "3"}))["memory"]
    print(f"\nInstitutional memory (GET /api/v1/memory/{entity}, tg-show-memory):")
    for item in remembered["items"]:
        print(f"  {item['score']:.3f}  {item['kind']:<15} {item['title']}  "
              f"({item['source']['author'] or 'no author'}, {item['source']['date'] or 'undated'})")
    for change, work_item in INTENT_PAIRS:
        checked = (await api.request("intent-check", {"change": change, "work-item": work_item}))["intent"]
        verdict = "MISMATCH" if checked["mismatch"] else "ok"
        print(f"\nIntent check (POST /api/v1/intent-check): similarity {checked['similarity']:.3f} → {verdict}")
        print(f"  change: {change}\n  work item: {work_item}")
        if checked["advisory"]:
            print(f"  advisory: {checked['advisory']}")
    print(f"\nSearch, explained: {OWNERSHIP_QUESTION!r}")
    final = await explained(api, "search", {"query": OWNERSHIP_QUESTION},
                            at_most(3, "      Edge:", "tg-show-explain-trace"), steps=("focus",))
    print(answer_text(final.get("response", "")))


def _named(term: dict, labels: dict[str, str]) -> str:
    return labels.get(term.get("i", ""), term.get("v") or term.get("i", ""))


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    base = settings_from(args, p)
    port = args.gateway_port if args.gateway_port is not None else 0  # not TG_GATEWAY_PORT: a tg-launch may hold it
    settings = RuntimeSettings(**{**base.model_dump(), "gateway_port": port, "gateway_host": "127.0.0.1",
                                  "log_level": base.log_level if args.log_level else "WARNING"})
    log_file = settings.data_dir / LOG_NAME

    async def run(backend: Backend) -> None:
        files = await asyncio.to_thread(
            lambda: sorted(p for p in args.corpus.iterdir() if is_document(p))
            if args.corpus else sample_corpus())
        async with Stack(backend, settings, list(PROCESSORS)) as stack:
            await ensure_flow(backend, "default", "default")
            await stack.joined("default")
            port = stack["gateway"].port
            print(f"TraceGraph stack up: {len(stack.processors)} processors on the {settings.pubsub} bus; "
                  f"gateway http://127.0.0.1:{port}/; data in {settings.data_dir}")
            extraction = "LLM at " + settings.llm_url if settings.llm_url else "offline extractor (no LLM configured)"
            print(f"loading {counted(len(files), 'document')}; knowledge extraction: {extraction}")
            await demo(Api(f"http://127.0.0.1:{port}/"), files, args.timeout, args.question, args.strategic,
                       args.point_in_time, args.as_of)
        print(f"\nthe processors' log (warnings and errors of this run): {log_file}")
        print("done")

    async def body() -> int:
        await asyncio.to_thread(check_port_free, settings.gateway_host, settings.gateway_port)
        # Only once the port is known free is the data folder touched: the processors' warnings go to its log,
        # not between the tour's lines.
        await asyncio.to_thread(configure_logging, settings, log_file)
        return await serve(settings, run)

    return run_main("tg-demo", body)


if __name__ == "__main__":
    raise SystemExit(main())
