"""The trace tools on a store holding all three kinds of trace — GraphRAG, Document RAG and an agent
session whose tool ran GraphRAG — over a Markdown file and a PDF (whose chunks come from pages): SHACL
validation of every kind as stored, stored traces shown in the order they streamed, and exports that
audit on their own (shapes and source documents checked over the export alone). A global answer's
export carries its community reports and the facts and documents behind them."""

from __future__ import annotations

import asyncio
import json
import re

import pyoxigraph
import pytest

from tracegraph.base.provenance.shacl import validate_nquads, validate_trace
from tracegraph.base.stores.terms import quad_from_ox
from tracegraph.cli.explain_render import TraceRenderer
from tracegraph.cli.socket_client import SocketClient
from tracegraph.schemas.rdf import Triple

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.pdf import make_pdf
from support.procs import tg_async
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(300)

QUESTION = "What does Helios Grid depend on?"
PAGED = ["Orbis Systems builds turbines.", "Helios Grid depends on Corvid Analytics."]  # the fact on page 2

# What a trace uses — the edges its selections quote, the chunks it kept — that the export alone does not
# resolve: to a chunk of the source graph derived from a titled tg:Document and, for an edge, to the fact.
UNRESOLVED = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
SELECT ?used (COUNT(?document) AS ?documents) WHERE {
  { GRAPH <urn:graph:retrieval> { ?selection tg:edge ?used }
    OPTIONAL { GRAPH <urn:graph:source> { ?subgraph tg:contains ?used ; prov:wasDerivedFrom ?chunk .
                                          ?chunk a tg:Chunk ; prov:wasDerivedFrom+ ?document }
               ?document a tg:Document ; dc:title ?title .
               ?s ?p ?o FILTER(TRIPLE(?s, ?p, ?o) = ?used) }
  } UNION {
    GRAPH <urn:graph:retrieval> { { ?step tg:selectedChunk ?used } UNION { ?selection tg:chunk ?used } }
    OPTIONAL { GRAPH <urn:graph:source> { ?used a tg:Chunk ; prov:wasDerivedFrom+ ?document }
               ?document a tg:Document ; dc:title ?title }
  }
} GROUP BY ?used"""

# A global answer's kept reports, each through the facts it summarises to the documents they came from.
REPORT_SOURCES = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
SELECT DISTINCT ?report ?title WHERE {
  GRAPH <urn:graph:retrieval> { ?focus tg:selectedReport ?selection . ?selection tg:report ?report }
  GRAPH <urn:graph:community> { ?report a tg:CommunityReport ; tg:reportOf ?community ; prov:wasDerivedFrom ?fact .
                                ?community a tg:Community }
  GRAPH <urn:graph:source> { ?subgraph tg:contains ?fact ; prov:wasDerivedFrom ?chunk .
                             ?chunk prov:wasDerivedFrom+ ?document }
  ?document a tg:Document ; dc:title ?title .
}"""


async def ask_all_three(url: str) -> dict[str, list[dict]]:
    """The explain events of each kind as they streamed, each asked offline (no LLM configured)."""
    events = {}
    async with SocketClient(url) as socket:
        for kind, service, body in (("GraphRAG", "graph-rag", {"query": QUESTION}),
                                    ("DocRAG", "document-rag", {"query": QUESTION}),
                                    ("Agent", "agent", {"question": QUESTION})):
            frames = [f async for f in socket.stream(service, {**body, "streaming": True}, flow="default")]
            events[kind] = [f for f in frames if f.get("message_type") == "explain"]
    return events


def audit(export: bytes, format: pyoxigraph.RdfFormat) -> tuple[int, list[str], list[str]]:
    """Over the export alone: (edges and chunks the trace used, those that resolve to no document,
    SHACL violations)."""
    store = pyoxigraph.Store()
    store.load(export, format=format)
    rows = list(store.query(UNRESOLVED))
    triples = [quad_from_ox(q) for q in pyoxigraph.parse(export, format=format)]
    report = validate_nquads(export.decode()) if format == pyoxigraph.RdfFormat.N_QUADS else validate_trace(triples)
    return len(rows), [str(r["used"]) for r in rows if int(r["documents"].value) == 0], report.messages


async def export(url: str, uri: str, *options: str) -> bytes:
    status, out, err = await tg_async("tg-export-explain-trace", "-u", url, uri, *options)
    assert status == 0, err
    return out.encode()


def lines(text: str, start: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith(start)]


async def test_list_show_export_and_validate_every_trace_kind(tmp_path):
    async with ingest_stack(tmp_path) as (api, stack):
        url = f"http://127.0.0.1:{stack['gateway'].port}/"
        u = ("-u", url)
        await load_and_wait(api, CORPUS / "helios-grid.md")
        pdf = tmp_path / "helios-pages.pdf"
        pdf.write_bytes(make_pdf(PAGED))
        await load_and_wait(api, pdf)
        live = await ask_all_three(url)
        asked = {kind: events[0]["explain_id"] for kind, events in live.items()}

        async def listed(*extra: str) -> list[dict]:
            status, out, err = await tg_async("tg-list-explain-traces", *u, "--json", *extra)
            assert status == 0, err
            return json.loads(out)

        top = await wait_until_async(lambda: _when(listed(), lambda r: len(r) == 3), what="three stored traces")
        assert {t["kind"]: t["id"] for t in top} == asked
        assert all(t["question"] == QUESTION and t["parent"] is None for t in top)
        everything = await listed("--all")
        sub = [t for t in everything if t["parent"]]
        assert len(everything) == 4 and len(sub) == 1 and sub[0]["kind"] == "GraphRAG"
        assert sub[0]["parent"].startswith(asked["Agent"] + "/i")
        assert [t["kind"] for t in await listed("--type", "agent")] == ["Agent"]
        assert await listed("--since", "2999-01-01") == []
        status, _, err = await tg_async("tg-list-explain-traces", *u, "--since", "yesterday")
        assert status == 1 and "ISO date" in err
        status, table, _ = await tg_async("tg-list-explain-traces", *u)
        assert "DocRAG" in table and "Agent" in table and QUESTION in table

        status, shown, err = await tg_async("tg-show-explain-trace", *u, asked["Agent"])
        assert status == 0, err
        steps = [line.strip().split("]")[0] + "]" for line in shown.splitlines() if line.strip().startswith("[")]
        assert steps[0] == "[question]" and steps[1] == "[analysis]" and steps[-1] == "[conclusion]"
        assert "↳ sub-trace" in shown and "[focus]" in shown  # the GraphRAG run the tool made, nested
        assert re.search(r"Source: (Lines? [0-9–]+ → )?Chunk", shown) and "helios-grid" in shown

        status, sources, err = await tg_async("tg-show-explain-trace", *u, asked["Agent"], "--sources")
        assert status == 0 and "→ helios-grid" in sources, (sources, err)
        assert re.search(r"Source: (Lines? [0-9–]+ → )?Chunk \d+ → Page 2 → helios-pages  <", sources), "the page step, as in the plain view"
        status, docrag, err = await tg_async("tg-show-explain-trace", *u, asked["DocRAG"] + "/exploration")
        assert status == 0 and "[exploration]" in docrag and "Chunk: Chunk" in docrag and "helios-grid" in docrag

        # Stored order = live order: the same renderer over the events as they streamed lists the same
        # chunks and edges in the same order — chunks by rank, edges best score first.
        renderer = TraceRenderer(api, "default", "default")
        streamed = {kind: "\n".join([line for e in events for line in await renderer.render(e["explain_id"],
                                                                                          e["explain_triples"])])
                    for kind, events in live.items()}
        assert len(lines(docrag, "Chunk:")) > 1 and lines(docrag, "Chunk:") == lines(streamed["DocRAG"], "Chunk:")
        status, graph_rag, err = await tg_async("tg-show-explain-trace", *u, asked["GraphRAG"])
        assert status == 0, err
        assert len(lines(graph_rag, "Edge:")) > 1 and lines(graph_rag, "Edge:") == lines(streamed["GraphRAG"], "Edge:")
        scores = [float(score) for score in re.findall(r"Reason: .*, score ([0-9.]+)$", graph_rag, re.M)]
        assert len(scores) == len(lines(graph_rag, "Edge:")) and scores == sorted(scores, reverse=True)

        status, trig, err = await tg_async("tg-export-explain-trace", *u, asked["Agent"], "--format", "trig")
        assert status == 0, err
        quads = list(pyoxigraph.parse(trig.encode(), format=pyoxigraph.RdfFormat.TRIG))
        subjects = {q.subject.value for q in quads if isinstance(q.subject, pyoxigraph.NamedNode)}
        assert any(s.startswith("urn:trustgraph:question:") for s in subjects), "the sub-trace is exported too"
        status, prov_json, err = await tg_async("tg-export-explain-trace", *u, asked["Agent"], "--format",
                                                "prov-json")
        assert status == 0, err
        statements = [e for e in json.loads(prov_json)["entity"].values()
                      if e.get("prov:type") == {"$": "rdf:Statement", "type": "xsd:QName"}]
        assert statements and all({"rdf:subject", "rdf:predicate", "rdf:object"} <= set(e) for e in statements)

        # An export audits on its own: it passes the shapes, and every edge and chunk the trace used
        # resolves to a document (and every edge to its fact) over the export alone. --trace-only does not.
        for kind, fmt, option in (("Agent", pyoxigraph.RdfFormat.N_QUADS, "nquads"),
                                  ("DocRAG", pyoxigraph.RdfFormat.N_QUADS, "nquads"),
                                  ("GraphRAG", pyoxigraph.RdfFormat.TRIG, "trig")):
            used, unresolved, violations = await asyncio.to_thread(audit, await export(url, asked[kind], "--format", option),
                                                                   fmt)
            assert used and not unresolved and not violations, (kind, unresolved, violations)
            alone = await export(url, asked[kind], "--format", option, "--trace-only")
            used, unresolved, violations = await asyncio.to_thread(audit, alone, fmt)
            assert used and len(unresolved) == used, kind
            assert bool(violations) == (kind == "DocRAG"), "a DocRAG trace alone names chunks it does not describe"

        # Every kind of trace, as stored, with the source graph its chunks and edges resolve to.
        stored = await api.flow_service("default", "triples", {"g": "*", "limit": 1_000_000})
        report = await asyncio.to_thread(validate_trace, [Triple.model_validate(t) for t in stored["response"]])
        assert report.conforms, report.messages


async def test_a_global_answer_exports_with_its_reports_and_the_documents_behind_them(tmp_path):
    async with ingest_stack(tmp_path, derived_settle=0.1) as (api, _):
        await load_and_wait(api, CORPUS / "helios-grid.md")

        async def reports_built():
            found = await api.flow_service("default", "community", {"operation": "status"})
            return found["counts"].get("reports", 0) >= 1
        await wait_until_async(reports_built, timeout=30, what="community reports")
        explain = [m async for m in api.stream("default", "search", {"query": "What are the top risks across the "
                                                                             "platform?", "strategies": ["global"]})
                   if m.get("message_type") == "explain"]
        question = explain[0]["explain_id"]

        whole = await export(api.url, question, "--format", "nquads")
        _, unresolved, violations = await asyncio.to_thread(audit, whole, pyoxigraph.RdfFormat.N_QUADS)
        assert not unresolved and not violations, (unresolved, violations)
        store = pyoxigraph.Store()
        store.load(whole, format=pyoxigraph.RdfFormat.N_QUADS)
        kept = {str(t["o"]["i"]) for e in explain for t in e["explain_triples"] if t["p"].get("i", "").endswith("/report")
                and any(x["p"].get("i", "").endswith("/selectedReport") and x["o"] == t["s"] for x in e["explain_triples"])}
        traced = {r["report"].value for r in store.query(REPORT_SOURCES)}
        assert kept and traced == kept, "every kept report resolves, over the export alone, to a document"

        store = pyoxigraph.Store()
        store.load(await export(api.url, question, "--format", "nquads", "--trace-only"),
                   format=pyoxigraph.RdfFormat.N_QUADS)
        assert not list(store.query(REPORT_SOURCES))


async def _when(result, accept):
    value = await result
    return value if accept(value) else None
