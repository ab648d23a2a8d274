"""`tg-show-library-documents`: what the library holds for you. The documents you added by default;
the answers the services stored there (each answer is a library document too) with --answers or --all."""

from __future__ import annotations

from tracegraph.cli._client import command_parser, run, table
from tracegraph.cli.api import Api


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-show-library-documents", "List library documents (id, kind, size, path, collection; "
                       "the title stands in the path column for a document stored without a path, such as a "
                       "stored answer): the source documents, or with --answers the stored answers, or with --all "
                       "both.")
    p.add_argument("-C", "--collection", help="only this collection")
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--answers", dest="types", action="store_const", const={"answer"}, default={"source"},
                       help="list the stored answers (GraphRAG, Document RAG, search and agent) instead")
    shown.add_argument("--all", dest="types", action="store_const", const={"source", "answer", "explain-text"},
                       help="list every library document, with a type column: sources, stored answers, and "
                            "the agent's step texts (explain-text: thoughts and observations its traces point at)")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        docs = (await api.request("librarian", {"operation": "list-documents", "collection": args.collection}))
        listed = sorted((d for d in docs.get("document-metadatas", [])
                         if d.get("document-type", "source") in args.types),
                        key=lambda d: (d.get("path") or d.get("title", ""), d["id"]))
        typed = len(args.types) > 1
        rows = [[d["id"], d["kind"], f"{d.get('size', 0):,}", d.get("path") or d.get("title", ""),
                 d.get("collection", ""), *([d.get("document-type", "source")] if typed else [])] for d in listed]
        named = "path" if any(d.get("path") for d in listed) else "title"
        headers = ["id", "kind", "bytes", named, "collection", *(["type"] if typed else [])]
        what = " or ".join(sorted({"source": "documents", "answer": "stored answers",
                                   "explain-text": "agent step texts"}[t] for t in args.types))
        print(table(rows, headers) if rows else f"no {what}")

    return run("tg-show-library-documents", args, body)
