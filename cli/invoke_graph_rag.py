"""`tg-invoke-graph-rag`: ask a question of the knowledge graph; `--explainable` prints the trace
(question, grounding, exploration, the selected edges with their reasons and sources, synthesis)."""

from __future__ import annotations

from tracegraph.cli._client import add_collection_arguments, command_parser, run
from tracegraph.cli.api import Api
from tracegraph.cli.rag_output import add_answer_arguments, print_answer


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-invoke-graph-rag", "Answer a question with GraphRAG over a collection's graph.")
    add_answer_arguments(p)
    add_collection_arguments(p)
    p.add_argument("-e", "--entity-limit", type=int, help="seed entities found by vector search [50]")
    p.add_argument("-t", "--triple-limit", type=int, help="facts read from each entity or passage [30]")
    p.add_argument("-a", "--max-path-length", type=int, help="hops the graph walk takes from the seeds [2]")
    p.add_argument("--edge-limit", type=int, help="selected edges that ground the answer [25]")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        limits = {key.replace("_", "-"): getattr(args, key) for key in
                  ("entity_limit", "triple_limit", "max_path_length", "edge_limit") if getattr(args, key) is not None}
        await print_answer(api, args, "graph-rag", limits)

    return run("tg-invoke-graph-rag", args, body)
