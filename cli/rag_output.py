"""What `tg-invoke-graph-rag`, `tg-invoke-document-rag` and `tg-search` share: the answer options (the
question, the trace, streaming, sources, and when the answer stands: --as-of), and one loop that
streams a RAG service's messages, prints each explain event as it arrives (-x), then the answer,
its sources (--sources, each with the lines its facts came from) and its token use (stderr)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tracegraph.cli.api import Api
from tracegraph.cli.explain_render import TraceRenderer
from tracegraph.cli.trace_sources import lines_by_document, used_edges


def add_answer_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", "--question", required=True, help="the question to answer")
    parser.add_argument("-x", "--explainable", action="store_true", help="print each explain event as it arrives")
    parser.add_argument("-s", "--streaming", action="store_true", help="print the answer as it is generated")
    parser.add_argument("--sources", action="store_true", help="list the source documents after the answer")
    parser.add_argument("--as-of", metavar="DATE",
                        help="answer from the graph as it held at DATE (YYYY-MM-DD, YYYY-MM or an ISO 8601 "
                             "date-time): facts superseded since count, and documents dated later are left out "
                             "[now]")
    parser.add_argument("--half-life-days", type=float, metavar="DAYS",
                        help="how fast older evidence weighs less when ranked: weight 0.5 + 0.5·2^(−age/DAYS), "
                             "so 0.75 at DAYS old and never below 0.5 for age alone "
                             "[the service's TG_STALENESS_HALF_LIFE_DAYS, 365]")


def time_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The request's `as-of` and `half-life-days`, when given."""
    fields = {"as-of": args.as_of, "half-life-days": args.half_life_days}
    return {k: v for k, v in fields.items() if v is not None}


async def print_answer(api: Api, args: argparse.Namespace, service: str, limits: dict[str, Any]) -> dict[str, Any]:
    """Ask `service` the question; `limits` are the request's extra (kebab-case) fields. Returns the
    last message (the answer's metadata: sources, tokens, and for search the confidence block)."""
    request = {"query": args.question, "collection": args.collection, "streaming": args.streaming,
               **time_fields(args), **limits}
    renderer = TraceRenderer(api, args.flow_id, args.collection)
    answer, final, explained = [], {}, []
    async for message in api.stream(args.flow_id, service, request):
        if message.get("message_type") == "explain":
            explained += message.get("explain_triples", [])
            if args.explainable:
                print("\n".join(await renderer.render(message["explain_id"], message["explain_triples"])))
                print()
            continue
        if args.streaming and message.get("response"):
            print(message["response"], end="", flush=True)
        answer.append(message.get("response", ""))
        if message.get("end_of_session"):
            final = message
    print("" if args.streaming else "".join(answer))
    if args.sources and final.get("sources"):
        lines = await lines_by_document(api, args.flow_id, args.collection, used_edges(explained))
        print("\nSources:")
        for source in final["sources"]:
            where = f"  ({lines[source['uri']]})" if source["uri"] in lines else ""
            print(f"  {source['title']}  <{source['uri']}>{where}")
    if final.get("in_token") is not None:
        print(f"(tokens: in {final['in_token']}, out {final.get('out_token')}, model {final.get('model')})",
              file=sys.stderr)
    return final
