"""`tg-add-library-document`: store a file in the library (without processing it), under its path."""

from __future__ import annotations

from pathlib import Path

from tracegraph.cli._client import command_parser, run
from tracegraph.cli.api import Api
from tracegraph.cli.document_files import given_path, path_of
from tracegraph.cli.library_upload import DATE_HELP, store_document


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-add-library-document", "Add a text, Markdown or PDF file to the library, under its "
                       "path: the file's path as given when it is relative, else its name, or --path. A document "
                       "already stored at that path with other content is replaced (removed from every flow "
                       "that processed it; the history keeps its facts). Example: tg-add-library-document "
                       "/tmp/README.md --path services/billing/README.md")
    p.add_argument("file", type=Path, help="the .txt, .md or .pdf file to store")
    p.add_argument("--path", help="the path to store it under, relative to the folder it comes from "
                   "(default: the file's path as given, or its name when given as an absolute path)")
    p.add_argument("--id", help="document id (default: derived from the path and the content)")
    p.add_argument("--title", help="title (default: the path)")
    p.add_argument("--kind", help="text/plain, text/markdown, application/pdf, text/x-codeowners, text/x-adr, "
                   "text/x-postmortem or text/x-review-comments (default: from the name: any .md suffix is "
                   "Markdown, .txt, .yaml and other text suffixes are text/plain; a file named CODEOWNERS is "
                   "text/x-codeowners; Markdown ADRs and post-mortems are also recognised by their headings)")
    p.add_argument("--author", default="", help="who wrote the document")
    p.add_argument("--date", default="", help=DATE_HELP)
    p.add_argument("--source-url", default="", help="where the document came from (default: the file's URI)")
    p.add_argument("--tag", action="append", default=[], help="a tag; repeat for several")
    p.add_argument("-C", "--collection", default="default", help="collection to store it in [default]")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        path = given_path(args.path) if args.path is not None else path_of(args.file)
        stored = await store_document(api, args.file, collection=args.collection, path=path, kind=args.kind,
                                      title=args.title, document_id=args.id, author=args.author,
                                      source=args.source_url, tags=args.tag, date=args.date)
        meta = stored.meta
        print(f"{meta['id']}  {meta['kind']}  {meta['size']:,} bytes  {meta.get('path', '')}  \"{meta['title']}\""
              + "".join(f"; replaced {old}" for old in stored.replaced))

    return run("tg-add-library-document", args, body)
