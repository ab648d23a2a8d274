"""`tg-invoke-agent`: ask the ReAct agent, which thinks, uses the configured tools and answers.
`--verbose` prints its thoughts, actions and observations as they come; `--explainable` each explain
event as it arrives (the agent's steps and the traces of the tools it used)."""

from __future__ import annotations

import sys

from tracegraph.cli._client import add_collection_arguments, command_parser, run
from tracegraph.cli.agent_output import STEP_LABELS, AgentOutput
from tracegraph.cli.api import Api
from tracegraph.cli.explain_render import TraceRenderer


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-invoke-agent", "Answer a question with the ReAct agent and its configured tools.")
    p.add_argument("-q", "--question", required=True, help="the question to answer")
    add_collection_arguments(p)
    p.add_argument("-x", "--explainable", action="store_true", help="print each explain event as it arrives")
    p.add_argument("-v", "--verbose", action="store_true", help="print thoughts, actions and observations as they come")
    p.add_argument("--max-iterations", type=int, help="think / act / observe cycles before giving up [6]")
    p.add_argument("-g", "--group", nargs="+", help="use only the tools of these groups (* = every tool)")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        request: dict = {"question": args.question, "collection": args.collection, "streaming": True}
        if args.max_iterations is not None:
            request["max-iterations"] = args.max_iterations
        if args.group:
            request["group"] = args.group
        renderer = TraceRenderer(api, args.flow_id, args.collection)
        final: dict = {}
        output = AgentOutput(args.verbose, lambda text: print(text, end="", flush=True))
        async for message in api.stream(args.flow_id, "agent", request):
            kind, content = message.get("message_type"), message.get("content") or ""
            if kind == "explain":
                if args.explainable:
                    print("\n".join(await renderer.render(message["explain_id"], message.get("explain_triples", []))))
                    print(flush=True)
            elif kind in STEP_LABELS:
                output.step(kind, content)
            elif kind == "answer":
                output.answer_chunk(content, bool(message.get("end_of_message")))
            if message.get("end_of_dialog"):
                final = message
        output.finish()
        sys.stdout.flush()  # the answer first, then the token note, even when both go to one terminal
        if final.get("in_token") is not None:
            print(f"(tokens: in {final['in_token']}, out {final.get('out_token')}, model {final.get('model')})",
                  file=sys.stderr)

    return run("tg-invoke-agent", args, body)
