"""`tg-add-library-document`: store a file in the library (without processing it)."""

from __future__ import annotations

from pathlib import Path

from tracegraph.cli._client import command_parser, run
from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import DATE_HELP, add_document


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-add-library-document", "Add a text, Markdown or PDF file to the library.")
    p.add_argument("file", type=Path, help="the .txt, .md or .pdf file to store")
    p.add_argument("--id", help="document id (default: derived from the content)")
    p.add_argument("--title", help="title (default: the file name)")
    p.add_argument("--kind", help="text/plain, text/markdown, application/pdf, text/x-codeowners, text/x-adr, "
                   "text/x-postmortem or text/x-review-comments (default: from the extension; a file named "
                   "CODEOWNERS is text/x-codeowners; Markdown ADRs and post-mortems are also recognised by their headings)")
    p.add_argument("--author", default="", help="who wrote the document")
    p.add_argument("--date", default="", help=DATE_HELP)
    p.add_argument("--source-url", default="", help="where the document came from (default: the file's URI)")
    p.add_argument("--tag", action="append", default=[], help="a tag; repeat for several")
    p.add_argument("-C", "--collection", default="default", help="collection to store it in [default]")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        meta = await add_document(api, args.file, collection=args.collection, kind=args.kind, title=args.title,
                                  document_id=args.id, author=args.author, source=args.source_url, tags=args.tag,
                                  date=args.date)
        print(f"{meta['id']}  {meta['kind']}  {meta['size']:,} bytes  \"{meta['title']}\"")

    return run("tg-add-library-document", args, body)
