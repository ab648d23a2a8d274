"""`tg-query-triples` and `tg-show-graph`: pattern queries over a collection's graphs."""

from __future__ import annotations

from tracegraph.cli._client import add_collection_arguments, command_parser, run, show_triple, term_json
from tracegraph.cli.api import Api

GRAPHS = {"default": None, "source": "urn:graph:source", "retrieval": "urn:graph:retrieval", "all": "*"}


async def _print_matches(api: Api, flow: str, body: dict) -> None:
    response = await api.flow_service(flow, "triples", body)
    for triple in response.get("response", []):
        print(show_triple(triple))


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-query-triples", "Triples matching a pattern; any of -s/-p/-o may be left out. "
                       "IRIs start with http://, https:// or urn: (or are written <like-this>).")
    p.add_argument("-s", "--subject", help="subject IRI")
    p.add_argument("-p", "--predicate", help="predicate IRI")
    p.add_argument("-o", "--object", help="object: an IRI, or else a literal")
    p.add_argument("-g", "--graph", default="default",
                   help="default, source, retrieval, all, or a graph IRI [default]")
    p.add_argument("-l", "--limit", type=int, default=100, help="most triples to print [100]")
    add_collection_arguments(p)
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        request = {"limit": args.limit, "collection": args.collection}
        for key, value in (("s", args.subject), ("p", args.predicate), ("o", args.object)):
            if value:
                request[key] = term_json(value)
        graph = GRAPHS.get(args.graph, args.graph)
        if graph is not None:
            request["g"] = graph
        await _print_matches(api, args.flow_id, request)

    return run("tg-query-triples", args, body)


def main_show_graph(argv: list[str] | None = None) -> int:
    p = command_parser("tg-show-graph", "Print a collection's triples (N-Triples-like, quoted triples as << >>).")
    p.add_argument("-g", "--graph", default="default", help="default, source, retrieval, all, or an IRI [default]")
    p.add_argument("-l", "--limit", type=int, default=10_000, help="most triples to print [10000]")
    add_collection_arguments(p)
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        request = {"limit": args.limit, "collection": args.collection}
        graph = GRAPHS.get(args.graph, args.graph)
        if graph is not None:
            request["g"] = graph
        await _print_matches(api, args.flow_id, request)

    return run("tg-show-graph", args, body)
