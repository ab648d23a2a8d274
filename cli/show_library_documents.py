"""`tg-show-library-documents`: what the library holds for you."""

from __future__ import annotations

from tracegraph.cli._client import command_parser, run, table
from tracegraph.cli.api import Api


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-show-library-documents", "List library documents (id, kind, size, title, collection).")
    p.add_argument("-C", "--collection", help="only this collection")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        docs = (await api.request("librarian", {"operation": "list-documents", "collection": args.collection}))
        rows = [[d["id"], d["kind"], f"{d.get('size', 0):,}", d.get("title", ""), d.get("collection", ""),
                 d.get("document-type", "")] for d in docs.get("document-metadatas", [])]
        print(table(rows, ["id", "kind", "bytes", "title", "collection", "type"]) if rows else "no documents")

    return run("tg-show-library-documents", args, body)
