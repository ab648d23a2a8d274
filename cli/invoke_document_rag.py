"""`tg-invoke-document-rag`: answer a question from the document chunks most similar to it;
`--explainable` prints the trace (question, grounding, the chunks retrieved and their documents, synthesis)."""

from __future__ import annotations

from tracegraph.cli._client import add_collection_arguments, command_parser, run
from tracegraph.cli.api import Api
from tracegraph.cli.rag_output import add_answer_arguments, print_answer


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-invoke-document-rag", "Answer a question with Document RAG over a collection's documents.")
    add_answer_arguments(p)
    add_collection_arguments(p)
    p.add_argument("-d", "--doc-limit", type=int, help="chunks that ground the answer [10]")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        await print_answer(api, args, "document-rag", {} if args.doc_limit is None else {"doc-limit": args.doc_limit})

    return run("tg-invoke-document-rag", args, body)
