"""What `tg-invoke-graph-rag` and `tg-invoke-document-rag` share: the answer options, and one loop that
streams a RAG service's messages, prints each explain event as it arrives (-x), then the answer,
its sources (--sources) and its token use (stderr)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tracegraph.cli.api import Api
from tracegraph.cli.explain_render import TraceRenderer


def add_answer_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", "--question", required=True, help="the question to answer")
    parser.add_argument("-x", "--explainable", action="store_true", help="print each explain event as it arrives")
    parser.add_argument("-s", "--streaming", action="store_true", help="print the answer as it is generated")
    parser.add_argument("--sources", action="store_true", help="list the source documents after the answer")


async def print_answer(api: Api, args: argparse.Namespace, service: str, limits: dict[str, Any]) -> dict[str, Any]:
    """Ask `service` the question; `limits` are the request's extra (kebab-case) fields. Returns the
    last message (the answer's metadata: sources, tokens, and for search the confidence block)."""
    request = {"query": args.question, "collection": args.collection, "streaming": args.streaming, **limits}
    renderer = TraceRenderer(api, args.flow_id, args.collection)
    answer, final = [], {}
    async for message in api.stream(args.flow_id, service, request):
        if message.get("message_type") == "explain":
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
        print("\nSources:")
        for source in final["sources"]:
            print(f"  {source['title']}  <{source['uri']}>")
    if final.get("in_token") is not None:
        print(f"(tokens: in {final['in_token']}, out {final.get('out_token')}, model {final.get('model')})",
              file=sys.stderr)
    return final
