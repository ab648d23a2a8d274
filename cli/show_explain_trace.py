"""`tg-show-explain-trace` and `tg-export-explain-trace`: a stored trace — GraphRAG, Document RAG or
agent, with the sub-traces an agent's tools produced — read back from the collection's
`urn:graph:retrieval` graph, rendered step by step, traced to its source documents with one SPARQL
query, or exported as TriG, N-Quads or PROV-JSON with the provenance it points at (cli/trace_export.py)."""

from __future__ import annotations

import json
import sys

from tracegraph.cli._client import add_collection_arguments, command_parser, run
from tracegraph.cli.api import Api
from tracegraph.cli.explain_render import PROV, TraceRenderer, natural_key, step_kind
from tracegraph.cli.trace_export import provenance_of
from tracegraph.cli.trace_sources import print_trace_sources
from tracegraph.cli.trace_store import fetch_trace, sub_traces

TRIG_PREFIXES = {"tg": "https://trustgraph.ai/ns/", "prov": "http://www.w3.org/ns/prov#",
                 "rdfs": "http://www.w3.org/2000/01/rdf-schema#", "dc": "http://purl.org/dc/elements/1.1/"}


def derived_steps(triples: list[dict], uri: str) -> list[str]:
    """The steps derived from `uri`, in order."""
    found = {t["s"]["i"] for t in triples
             if t["p"].get("i") == PROV + "wasDerivedFrom" and t["o"].get("i") == uri and t["s"].get("t") == "i"}
    return sorted((s for s in found if step_kind(s, triples)), key=natural_key)


async def render_tree(renderer: TraceRenderer, uri: str, triples: list[dict], depth: int = 0,
                      seen: set[str] | None = None) -> list[str]:
    """A step, the sub-traces started from it (indented), then the steps that follow it."""
    seen = seen if seen is not None else set()
    if uri in seen:
        return []
    seen.add(uri)
    pad = "    " * depth
    lines = [pad + line for line in await renderer.render(uri, triples)]
    following = derived_steps(triples, uri)
    for sub in (s for s in following if step_kind(s, triples) == "question"):
        lines += ["", f"{pad}    ↳ sub-trace"] + await render_tree(renderer, sub, triples, depth + 1, seen)
    for step in (s for s in following if step_kind(s, triples) != "question"):
        lines += [""] + await render_tree(renderer, step, triples, depth, seen)
    return lines


def _parser(prog: str, description: str):
    p = command_parser(prog, description)
    p.add_argument("uri", help="any URI of the trace: its question, or one of its steps")
    add_collection_arguments(p)
    return p


def main(argv: list[str] | None = None) -> int:
    p = _parser("tg-show-explain-trace", "Show a stored trace (GraphRAG, Document RAG or agent) step by step, "
                "with the sub-traces an agent's tools produced and each edge or chunk traced to its source; "
                "--sources lists only the documents (one SPARQL query across the retrieval and source graphs).")
    p.add_argument("--sources", action="store_true", help="only the answer → edge/chunk → chunk → page → document chains")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        question, triples = await fetch_trace(api, args.flow_id, args.collection, args.uri)
        if args.sources:
            await print_trace_sources(api, args.flow_id, args.collection, [question, *sub_traces(triples)])
            return
        print("\n".join(await render_tree(TraceRenderer(api, args.flow_id, args.collection), question, triples)))

    return run("tg-show-explain-trace", args, body)


def main_export(argv: list[str] | None = None) -> int:
    p = _parser("tg-export-explain-trace", "Export a stored trace as TriG, N-Quads or PROV-JSON (to stdout), "
                "with the provenance it points at so that the export audits on its own: the facts its edges "
                "quote, their subgraph → chunk → page → document records, the chunks it used and the "
                "community reports it kept.")
    p.add_argument("--format", choices=["trig", "nquads", "prov-json"], default="trig",
                   help="output format (default trig; TriG and N-Quads keep edges as RDF 1.2 triple terms)")
    p.add_argument("--trace-only", action="store_true",
                   help="only the trace itself (graph urn:graph:retrieval), without the provenance it points at")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        from tracegraph.schemas.rdf import Triple
        _, found = await fetch_trace(api, args.flow_id, args.collection, args.uri)
        if not args.trace_only:
            found += await provenance_of(api, args.flow_id, args.collection, found)
        triples = list(dict.fromkeys(Triple.model_validate(t) for t in found))
        if args.format == "prov-json":
            from tracegraph.base.provenance.prov_json import to_prov_json
            json.dump(to_prov_json(triples), sys.stdout, indent=2)
            print()
            return
        import pyoxigraph as ox

        from tracegraph.base.stores.terms import quad_to_ox
        fmt = ox.RdfFormat.TRIG if args.format == "trig" else ox.RdfFormat.N_QUADS
        data = ox.serialize([quad_to_ox(t) for t in triples], format=fmt,
                            prefixes=TRIG_PREFIXES if args.format == "trig" else None)
        sys.stdout.write(data.decode())

    return run("tg-export-explain-trace", args, body)
