"""`tg-show-explain-trace` and `tg-export-explain-trace`: a stored GraphRAG trace, read back from the
collection's `urn:graph:retrieval` graph, rendered as text, traced to its sources with one SPARQL
query, or exported as TriG, N-Quads or PROV-JSON."""

from __future__ import annotations

import json
import sys

from tracegraph.base.errors import ConfigError
from tracegraph.cli._client import add_collection_arguments, command_parser, run, show_term
from tracegraph.cli.api import Api
from tracegraph.cli.explain_render import TraceRenderer, step_of

STEPS = ["question", "grounding", "exploration", "focus", "synthesis"]

TRACE = """SELECT ?s ?p ?o WHERE { GRAPH <urn:graph:retrieval> { ?s ?p ?o FILTER(CONTAINS(STR(?s), "%s")) } }"""

SOURCES = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
SELECT DISTINCT ?edge ?chunk ?chunkLabel ?document ?title WHERE {
  GRAPH <urn:graph:retrieval> {
    ?focus a tg:Focus ; tg:selectedEdge/tg:edge ?edge .
    FILTER(CONTAINS(STR(?focus), "%s"))
  }
  GRAPH <urn:graph:source> {
    ?subgraph tg:contains ?edge ; prov:wasDerivedFrom ?chunk .
    ?chunk a tg:Chunk ; rdfs:label ?chunkLabel ; prov:wasDerivedFrom+ ?document .
  }
  ?document a tg:Document ; dc:title ?title .
} ORDER BY ?title ?chunkLabel"""


def session_of(uri: str) -> str:
    """The session id every URI of one trace shares.

    >>> session_of("urn:trustgraph:prov:synthesis:6f1c")
    '6f1c'
    >>> session_of("urn:trustgraph:question:6f1c")
    '6f1c'
    """
    if not uri.startswith("urn:trustgraph:"):
        raise ConfigError(f"{uri!r} is not an explain URI (urn:trustgraph:question:… or urn:trustgraph:prov:…)")
    return uri.rsplit(":", 1)[-1]


async def fetch_trace(api: Api, flow: str, collection: str, uri: str) -> list[dict]:
    sid = session_of(uri)
    r = await api.flow_service(flow, "sparql", {"query": TRACE % sid, "collection": collection, "limit": 100_000})
    triples = [{"s": b["s"], "p": b["p"], "o": b["o"], "g": "urn:graph:retrieval"} for b in r.get("bindings", [])]
    if not triples:
        raise ConfigError(f"no stored trace for {uri} in collection {collection!r}")
    return triples


def _parser(prog: str, description: str):
    p = command_parser(prog, description)
    p.add_argument("uri", help="any URI of the trace: its question, or one of its steps")
    add_collection_arguments(p)
    return p


def main(argv: list[str] | None = None) -> int:
    p = _parser("tg-show-explain-trace", "Show a stored GraphRAG trace step by step; --sources lists the documents "
                "its selected edges came from (one SPARQL query across the retrieval and source graphs).")
    p.add_argument("--sources", action="store_true", help="only the answer → edge → chunk → document chains")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        if args.sources:
            r = await api.flow_service(args.flow_id, "sparql", {"query": SOURCES % session_of(args.uri),
                                                                "collection": args.collection})
            rows = r.get("bindings", [])
            if not rows:
                print("no selected edge of this trace has extraction provenance")
            for row in rows:
                print(f"{show_term(row['edge'])}\n    Source: {row['chunkLabel']['v']} → {row['title']['v']}"
                      f"  <{row['document']['i']}>")
            return
        triples = await fetch_trace(api, args.flow_id, args.collection, args.uri)
        renderer = TraceRenderer(api, args.flow_id, args.collection)
        subjects = {t["s"]["i"] for t in triples if t["s"].get("t") == "i"}
        for step in STEPS:
            for uri in sorted(s for s in subjects if _is_step(s, step)):
                print("\n".join(await renderer.render(uri, triples)))
                print()

    return run("tg-show-explain-trace", args, body)


def _is_step(uri: str, step: str) -> bool:
    try:
        return step_of(uri) == step and not uri.startswith("urn:trustgraph:prov:edge:")
    except IndexError:
        return False


def main_export(argv: list[str] | None = None) -> int:
    p = _parser("tg-export-explain-trace", "Export a stored trace as TriG, N-Quads or PROV-JSON (to stdout).")
    p.add_argument("--format", choices=["trig", "nquads", "prov-json"], default="trig")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        from tracegraph.schemas.rdf import Triple
        triples = [Triple.model_validate(t) for t in await fetch_trace(api, args.flow_id, args.collection, args.uri)]
        if args.format == "prov-json":
            from tracegraph.base.provenance.prov_json import to_prov_json
            json.dump(to_prov_json(triples), sys.stdout, indent=2)
            print()
            return
        import pyoxigraph as ox

        from tracegraph.base.stores.terms import quad_to_ox
        fmt = ox.RdfFormat.TRIG if args.format == "trig" else ox.RdfFormat.N_QUADS
        prefixes = {"tg": "https://trustgraph.ai/ns/", "prov": "http://www.w3.org/ns/prov#",
                    "rdfs": "http://www.w3.org/2000/01/rdf-schema#"} if args.format == "trig" else None
        data = ox.serialize([quad_to_ox(t) for t in triples], format=fmt, prefixes=prefixes)
        sys.stdout.write(data.decode())

    return run("tg-export-explain-trace", args, body)
