"""`tg-load-text` and `tg-load-pdf`: add files (named, or found in folders) to the library and process
them in a flow, at most --in-flight at once, with a progress bar; `--wait` follows each document until it
has settled (done or failed), on one progress line.
Each document is stored under its path, so loading a changed file again replaces the older version."""

from __future__ import annotations

import argparse
import asyncio
import sys
import textwrap
import time
from pathlib import Path

from tqdm import tqdm

from tracegraph.base.documents import TEXT_KINDS
from tracegraph.base.errors import ConfigError
from tracegraph.cli._client import add_collection_arguments, command_parser, run
from tracegraph.cli.api import Api
from tracegraph.cli.document_files import (
    MARKDOWN_SUFFIXES, TEXT_SUFFIXES, DocumentFile, declared_kind, select, short_kind,
)
from tracegraph.cli.library_upload import (
    DATE_HELP, Stored, document_failures, process, settle, store_document, wait_for_vectors,
)
from tracegraph.cli.submission import DEFAULT_IN_FLIGHT, in_flight_count, submit_bounded

PATHS_HELP = """\
Each document is identified by its path in the collection:
  - a file found in a DIR argument: its path relative to DIR (forward slashes);
  - a FILE argument: the path as given when it is relative, else the file's name;
  - --path P: P, for a single FILE.
The path is the document's title unless the document names one, so listings, traces and --sources
read services/billing/{file} rather than {stem}. Loading a file whose path is already stored with
other content replaces the older document: its facts are retracted in every flow (the history keeps
them), and the command prints "replaced <old id>". Loading the same content again changes nothing.

A DIR is walked recursively. Hidden files and folders (.git, .venv, ...) are skipped, except
.github/CODEOWNERS and .gitlab/CODEOWNERS; files of other kinds, and empty files, are skipped and named
in one summary line.

examples:
  cd repo && %(prog)s .      # repo/services/billing/{file} is stored as services/billing/{file}
  %(prog)s repo/services     # ... as billing/{file}
  %(prog)s /tmp/{notes} --path docs/{notes}
"""

TEXT_KINDS_HELP = textwrap.fill(
    f"Kinds: Markdown (any suffix .{' or .'.join(sorted(MARKDOWN_SUFFIXES))}, so x.html.md.erb is Markdown), "
    f"text (.{', .'.join(sorted(TEXT_SUFFIXES))}) and files named CODEOWNERS. --kind declares the kind "
    "instead, for a file whose name tells none or for ADRs and post-mortems whose headings are not the usual "
    "ones: %(prog)s docs/decisions --kind adr; %(prog)s outage.txt --kind postmortem.", 100) + "\n\n"


def _main(prog: str, kinds: set[str], argv: list[str] | None) -> int:
    what = "text, Markdown and CODEOWNERS" if kinds == TEXT_KINDS else "PDF"
    p = command_parser(prog, textwrap.fill(
        f"Load {what} files, named or found in folders: add each to the library under its path, then send "
        "it into a flow (chunking, extraction, embeddings).", 100))
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    example = ("README.md", "README", "notes.md") if kinds == TEXT_KINDS else ("design.pdf", "design", "notes.pdf")
    p.epilog = (TEXT_KINDS_HELP if kinds == TEXT_KINDS else "") + PATHS_HELP.format(
        file=example[0], stem=example[1], notes=example[2])
    p.add_argument("files", nargs="+", type=Path, metavar="FILE|DIR",
                   help="the files to load, and folders to load every file of")
    p.add_argument("--path", help="the path to store a single FILE under (default: as given, or its name "
                   "when given as an absolute path)")
    add_collection_arguments(p)
    p.add_argument("--wait", action="store_true", help="follow every document until it has settled: all its "
                   "chunks extracted and their vectors indexed, on one progress line (documents settled of "
                   "submitted, chunks extracted); tg-show-processing shows the same from another terminal")
    p.add_argument("--in-flight", type=in_flight_count, default=DEFAULT_IN_FLIGHT, metavar="N",
                   help=f"documents submitted at once (each an add and a process round trip); more round "
                   f"trips wait their turn, so a large folder never floods the gateway [{DEFAULT_IN_FLIGHT}]")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds --wait may take [600]")
    p.add_argument("--author", default="", help="who wrote the documents (recorded with each)")
    p.add_argument("--date", default="", help=f"{DATE_HELP}; the same for every file")
    p.add_argument("--tag", action="append", default=[], help="a tag for every document; repeat for several")
    if len(kinds) > 1:
        p.add_argument("--kind", metavar="KIND", help="the kind of every file loaded, whatever its name: "
                       f"{', '.join(sorted(short_kind(k) for k in kinds))} (or in full, such as text/x-adr); "
                       "adr and postmortem select their extraction rules (default: from each file's name)")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        declared = declared_kind(args.kind, kinds) if getattr(args, "kind", None) else None
        selection = await asyncio.to_thread(select, args.files, kinds, prog, args.path, declared)
        if selection.skipped:
            print(selection.skipped_line(prog))
        with tqdm(total=len(selection.files), unit="doc", desc="submitting", disable=None) as bar:
            async def submit(document: DocumentFile) -> Stored:
                stored = await store_document(api, document.file, collection=args.collection, path=document.path,
                                              kind=document.kind, author=args.author, tags=args.tag, date=args.date)
                await process(api, stored.meta["id"], args.flow_id, args.collection)
                return stored

            def submitted(document: DocumentFile, stored: Stored) -> None:
                meta = stored.meta
                replaced = "".join(f"; replaced {old}" for old in stored.replaced)
                bar.write(f"{document.path}: {meta['id']} ({meta['size']:,} bytes) → flow {args.flow_id}{replaced}")
                bar.update()

            results = await submit_bounded(selection.files, args.in_flight, submit, submitted)
        ids = [stored.meta["id"] for stored in results]
        names = {stored.meta["id"]: document.path for document, stored in zip(selection.files, results)}
        if args.wait:
            await follow(prog, api, args, ids, names)

    return run(prog, args, body)


async def follow(prog: str, api: Api, args: argparse.Namespace, ids: list[str], names: dict[str, str]) -> None:
    """--wait: follow every document until it is done or failed, say which, and fail (exit 1) when any
    document failed or did not finish within --timeout."""
    progress = (0, 0)
    deadline = time.monotonic() + args.timeout
    try:
        with tqdm(total=len(set(ids)), unit="doc", desc="settling", disable=None) as bar:
            def show(done: int, chunks: int) -> None:
                nonlocal progress
                progress = (done, chunks)
                bar.set_postfix_str(chunks_postfix(done, chunks), refresh=False)

            def settled(count: int, documents: int) -> None:
                bar.total, bar.n = documents, count
                bar.refresh()
            settlement = await settle(api, args.flow_id, ids, args.collection, args.timeout, show, settled)
            if not settlement.unsettled:
                bar.set_description("indexing vectors")
                bar.refresh()
                await wait_for_vectors(api, args.flow_id, args.collection, settlement.indexable_chunks,
                                       max(1.0, deadline - time.monotonic()))
    except asyncio.CancelledError:  # Ctrl-C: asyncio.run cancels, then raises KeyboardInterrupt (exit 130)
        print(still_extracting(prog, len(ids), args.flow_id, *progress), file=sys.stderr)
        raise
    for state in settlement.documents:  # an indexer's give-up may have been recorded while vectors were awaited
        if state.settled:
            state.failures = await document_failures(api, args.flow_id, state.document, args.collection)
    for state in settlement.documents:
        print(state.line(names))
        for chunk, error in state.failures:
            if chunk != state.document:
                print(f"  {chunk}: {error}")
    if not settlement.ok:
        failed, unsettled = len(settlement.failed), len(settlement.unsettled)
        parts = ([f"{failed} failed"] if failed else []) + (
            [f"{unsettled} not finished after {args.timeout:g}s"] if unsettled else [])
        raise ConfigError(f"{' and '.join(parts)} of {len(ids)} document(s) (listed above); load a failed "
                          "document again once the cause is fixed")
    print(f"extraction finished for {len(ids)} document(s)")


def chunks_postfix(done: int, chunks: int) -> str:
    """The chunk count shown after the documents on --wait's progress line.

    >>> chunks_postfix(3, 7)
    'chunks 3/7 extracted'
    >>> chunks_postfix(0, 0)
    'no chunk records yet'
    """
    return f"chunks {done}/{chunks} extracted" if chunks else "no chunk records yet"


def still_extracting(prog: str, documents: int, flow: str, done: int, chunks: int) -> str:
    """What Ctrl-C during --wait leaves behind: the server goes on, and how to follow it.

    >>> print(still_extracting("tg-load-text", 2, "default", 3, 7))
    tg-load-text: interrupted: 2 document(s) were submitted to flow default, and extraction goes on in the server \
(3 of 7 chunk(s) done so far); tg-show-library-documents lists them, and loading the same files again with --wait \
processes them again and follows it to the end
    """
    so_far = f" ({done} of {chunks} chunk(s) done so far)" if chunks else ""
    return (f"{prog}: interrupted: {documents} document(s) were submitted to flow {flow}, and extraction goes on in "
            f"the server{so_far}; tg-show-library-documents lists them, and loading the same files again with --wait "
            "processes them again and follows it to the end")


def main_text(argv: list[str] | None = None) -> int:
    return _main("tg-load-text", TEXT_KINDS, argv)


def main_pdf(argv: list[str] | None = None) -> int:
    return _main("tg-load-pdf", {"application/pdf"}, argv)
