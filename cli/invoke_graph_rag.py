"""`tg-invoke-graph-rag`: ask a question of the knowledge graph; `--explainable` prints the trace
(question, grounding, exploration, the selected edges with their reasons and sources, synthesis)."""

from __future__ import annotations

import sys

from tracegraph.cli._client import add_collection_arguments, command_parser, run
from tracegraph.cli.api import Api
from tracegraph.cli.explain_render import TraceRenderer


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-invoke-graph-rag", "Answer a question with GraphRAG over a collection's graph.")
    p.add_argument("-q", "--question", required=True)
    add_collection_arguments(p)
    p.add_argument("-x", "--explainable", action="store_true", help="print each explain event as it arrives")
    p.add_argument("-s", "--streaming", action="store_true", help="print the answer as it is generated")
    p.add_argument("-e", "--entity-limit", type=int)
    p.add_argument("-t", "--triple-limit", type=int)
    p.add_argument("-a", "--max-path-length", type=int)
    p.add_argument("--edge-limit", type=int)
    p.add_argument("--sources", action="store_true", help="list the source documents after the answer")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        request = {"query": args.question, "collection": args.collection, "streaming": args.streaming}
        for key in ("entity_limit", "triple_limit", "max_path_length", "edge_limit"):
            if getattr(args, key) is not None:
                request[key.replace("_", "-")] = getattr(args, key)
        renderer = TraceRenderer(api, args.flow_id, args.collection)
        answer, final = [], {}
        async for message in api.stream(args.flow_id, "graph-rag", request):
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
        if not args.streaming:
            print("".join(answer))
        else:
            print()
        if args.sources and final.get("sources"):
            print("\nSources:")
            for source in final["sources"]:
                print(f"  {source['title']}  <{source['uri']}>")
        if final.get("in_token") is not None:
            print(f"(tokens: in {final['in_token']}, out {final.get('out_token')}, model {final.get('model')})",
                  file=sys.stderr)

    return run("tg-invoke-graph-rag", args, body)
