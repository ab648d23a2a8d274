"""`tg-remove-library-document`: delete a document and everything derived from it."""

from __future__ import annotations

from tracegraph.cli._client import command_parser, run
from tracegraph.cli.api import Api


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-remove-library-document", "Remove a document: its bytes, and in every flow that "
                       "processed it, its chunks, vectors, provenance and the facts only it supported.")
    p.add_argument("--id", required=True, help="document id (see tg-show-library-documents)")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        response = await api.request("librarian", {"operation": "remove-document", "document-id": args.id})
        r = response.get("removed", {})
        if response.get("already-removed"):
            print(f"already removed {args.id}; swept what late work left: {r.get('chunks', 0)} chunks, "
                  f"{r.get('vectors', 0)} vectors, {r.get('triples', 0)} triples "
                  f"(flows: {', '.join(r.get('flows', [])) or 'none'})")
            return
        print(f"removed {args.id}: {r.get('chunks', 0)} chunks, {r.get('vectors', 0)} vectors, "
              f"{r.get('triples', 0)} triples (flows: {', '.join(r.get('flows', [])) or 'none'})")

    return run("tg-remove-library-document", args, body)
