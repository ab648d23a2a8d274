"""Where a trace's facts were read, as a person checks them: each edge or chunk a trace used traced through
`urn:graph:source` to its document, and for an answer, the lines of each source document its edges came
from ("services/billing/README.md — lines 12–14, 30"). Shared by `tg-show-explain-trace --sources` and the
`--sources` of the answering commands."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import TypeAdapter

from tracegraph.base.temporal.query import sparql_term
from tracegraph.cli._client import show_term
from tracegraph.cli.api import Api
from tracegraph.cli.explain_render import TG, TraceRenderer, line_span
from tracegraph.schemas.rdf import Term

# From the trace's Questions (the root and its sub-traces), through their steps, to the edges or chunks
# they used, and from there through `urn:graph:source` to the documents.
SOURCES = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
SELECT DISTINCT ?via ?chunk ?chunkLabel ?document ?title ?first ?last WHERE {
  VALUES ?question { %s }
  {
    GRAPH <urn:graph:retrieval> { ?step prov:wasDerivedFrom* ?question ; tg:selectedEdge/tg:edge ?via }
    GRAPH <urn:graph:source> { ?subgraph tg:contains ?via ; prov:wasDerivedFrom ?chunk
                               OPTIONAL { ?subgraph tg:firstLine ?first ; tg:lastLine ?last } }
  } UNION {
    GRAPH <urn:graph:retrieval> { ?step prov:wasDerivedFrom* ?question ; tg:selectedChunk ?chunk }
    BIND(?chunk AS ?via)
  }
  GRAPH <urn:graph:source> { ?chunk a tg:Chunk ; rdfs:label ?chunkLabel ; prov:wasDerivedFrom+ ?document }
  ?document a tg:Document ; dc:title ?title .
} ORDER BY ?title ?chunkLabel"""

# The lines of each document the given facts were read from (subgraphs placed on lines).
EDGE_LINES = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT DISTINCT ?document ?first ?last WHERE {
  VALUES ?edge { %s }
  GRAPH <urn:graph:source> { ?subgraph tg:contains ?edge ; tg:firstLine ?first ; tg:lastLine ?last ;
                                       prov:wasDerivedFrom+ ?document }
  ?document a tg:Document .
}"""

_TERM = TypeAdapter(Term)


async def print_trace_sources(api: Api, flow: str, collection: str, questions: list[str]) -> None:
    """Each edge or chunk with every chunk it came from, told as the plain view tells it (Lines → Chunk → Page →
    Document)."""
    query = SOURCES % " ".join(f"<{q}>" for q in questions)
    rows = await api.flow_service(flow, "sparql", {"query": query, "collection": collection})
    if not rows.get("bindings"):
        print("no edge or chunk this trace used has extraction provenance")
    renderer = TraceRenderer(api, flow, collection)
    for row in rows.get("bindings", []):
        lines = line_span(row.get("first"), row.get("last"))
        print(f"{await used_item(renderer, row['via'], row['chunkLabel'])}\n    Source: {lines + ' → ' if lines else ''}"
              f"{await renderer.chunk_chain(row['chunk'])}  <{row['document']['i']}>")


async def used_item(renderer: TraceRenderer, via: dict[str, Any], chunk_label: dict[str, Any]) -> str:
    """An edge by its labels, `(Helios Grid, depends on, Corvid Analytics)` as the plain view shows it (the
    IRI where a term has no label); a chunk as `Chunk: Chunk 2`."""
    if via.get("t") == "t":
        return f"({', '.join([await renderer.label(via['tr'][k]) for k in ('s', 'p', 'o')])})"
    return f"Chunk: {chunk_label.get('v') or show_term(via)}"


def used_edges(explain_triples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The quoted edges an answer's explain events selected (tg:edge values)."""
    return list({show_term(t["o"]): t["o"] for t in explain_triples
                 if t.get("p", {}).get("i") == TG + "edge" and t.get("o", {}).get("t") == "t"}.values())


async def lines_by_document(api: Api, flow: str, collection: str, edges: list[dict[str, Any]]) -> dict[str, str]:
    """document IRI → "lines 12–14, 30" for the facts an answer used (documents with no placed fact absent)."""
    if not edges:
        return {}
    values = " ".join(sparql_term(_TERM.validate_python(edge)) for edge in edges)
    rows = await api.flow_service(flow, "sparql", {"query": EDGE_LINES % values, "collection": collection})
    spans: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for row in rows.get("bindings", []):
        spans[row["document"]["i"]].add((int(row["first"]["v"]), int(row["last"]["v"])))
    return {doc: "lines " + ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in sorted(found))
            for doc, found in spans.items()}
