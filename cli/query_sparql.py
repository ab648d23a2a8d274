"""`tg-query-sparql`: a read-only SPARQL query over one collection (updates are refused)."""

from __future__ import annotations

import sys
from pathlib import Path

from tracegraph.cli._client import add_collection_arguments, command_parser, run, show_term, show_triple, table
from tracegraph.cli.api import Api


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-query-sparql", "Run a read-only SPARQL 1.1 query (RDF 1.2 triple terms as <<( s p o )>>) "
                       "on a collection. Named graphs: urn:graph:source, urn:graph:retrieval.")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("-q", "--query", help="the query text")
    source.add_argument("--file", type=Path, help="read the query from a file ('-' for stdin)")
    p.add_argument("-l", "--limit", type=int, default=1000, help="most rows to return [1000]")
    add_collection_arguments(p)
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        query = args.query
        if query is None:
            query = sys.stdin.read() if str(args.file) == "-" else args.file.read_text()
        r = await api.flow_service(args.flow_id, "sparql", {"query": query, "limit": args.limit,
                                                            "collection": args.collection})
        if r.get("kind") == "boolean":
            print("true" if r.get("boolean") else "false")
        elif r.get("kind") == "triples":
            for triple in r.get("triples", []):
                print(show_triple(triple))
        else:
            names = r.get("variables", [])
            rows = [[show_term(b[n]) if n in b else "" for n in names] for b in r.get("bindings", [])]
            print(table(rows, names) if rows else "no results")
        if r.get("truncated"):
            print(f"(more rows than --limit {args.limit}; results truncated)", file=sys.stderr)

    return run("tg-query-sparql", args, body)
