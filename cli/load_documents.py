"""`tg-load-text` and `tg-load-pdf`: add files to the library and process them in a flow, with a
progress bar; `--wait` follows extraction until every chunk has its subgraph."""

from __future__ import annotations

from pathlib import Path

from tqdm import tqdm

from tracegraph.base.documents import TEXT_KINDS
from tracegraph.base.errors import ConfigError
from tracegraph.cli._client import add_collection_arguments, command_parser, run
from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import (
    DATE_HELP, add_document, failed_chunks, kind_of, process, wait_for_extraction,
)


def _main(prog: str, kinds: set[str], argv: list[str] | None) -> int:
    p = command_parser(prog, f"Load {' / '.join(sorted(kinds))} files: add each to the library, then send it "
                       "into a flow (chunking, extraction, embeddings).")
    p.add_argument("files", nargs="+", type=Path, help="the files to load")
    add_collection_arguments(p)
    p.add_argument("--wait", action="store_true", help="follow extraction until every chunk is done")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds --wait may take [600]")
    p.add_argument("--author", default="", help="who wrote the documents (recorded with each)")
    p.add_argument("--date", default="", help=f"{DATE_HELP}; the same for every file")
    p.add_argument("--tag", action="append", default=[], help="a tag for every document; repeat for several")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        for path in args.files:
            if kind_of(path, None) not in kinds:
                raise ConfigError(f"{path}: {prog} takes {', '.join(sorted(kinds))} files")
        ids = []
        with tqdm(total=len(args.files), unit="doc", desc="loading", disable=None) as bar:
            for path in args.files:
                meta = await add_document(api, path, collection=args.collection, author=args.author, tags=args.tag,
                                          date=args.date)
                await process(api, meta["id"], args.flow_id, args.collection)
                ids.append(meta["id"])
                bar.write(f"{path}: {meta['id']} ({meta['size']:,} bytes) → flow {args.flow_id}")
                bar.update()
        if args.wait:
            with tqdm(total=1, unit="chunk", desc="extracting", disable=None) as bar:
                def show(done: int, chunks: int) -> None:
                    bar.total, bar.n = max(chunks, 1), done
                    bar.refresh()
                chunks = await wait_for_extraction(api, args.flow_id, ids, args.collection, args.timeout, show)
            failed = await failed_chunks(api, args.flow_id, ids, args.collection)
            if failed:
                for chunk, error in failed:
                    print(f"failed: {chunk}: {error}")
                raise ConfigError(f"{len(failed)} of {chunks} chunk(s) could not be fully processed (listed above); "
                                  "load the document again once the cause is fixed")
            print(f"extraction finished for {len(ids)} document(s)")

    return run(prog, args, body)


def main_text(argv: list[str] | None = None) -> int:
    return _main("tg-load-text", TEXT_KINDS, argv)


def main_pdf(argv: list[str] | None = None) -> int:
    return _main("tg-load-pdf", {"application/pdf"}, argv)
