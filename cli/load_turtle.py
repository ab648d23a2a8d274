"""`tg-load-turtle`: import an existing RDF graph (Turtle, N-Triples, N-Quads, TriG) into a collection."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tqdm import tqdm

from tracegraph.base.errors import ConfigError
from tracegraph.cli._client import add_collection_arguments, command_parser, run
from tracegraph.cli.api import Api

FORMATS = {".ttl": "text/turtle", ".nt": "application/n-triples", ".nq": "application/n-quads",
           ".trig": "application/trig"}


def to_nquads_batches(path: Path, batch: int) -> list[tuple[str, int]]:
    """Parse with pyoxigraph (RDF 1.2) and re-serialise as N-Quads batches of `batch` quads."""
    import pyoxigraph

    fmt = pyoxigraph.RdfFormat.from_media_type(FORMATS.get(path.suffix.lower(), "text/turtle"))
    try:
        quads = list(pyoxigraph.parse(path=str(path), format=fmt))
    except (SyntaxError, ValueError, OSError) as exc:
        raise ConfigError(f"cannot parse {path}: {exc}") from None
    out = []
    for start in range(0, len(quads), batch):
        part = quads[start:start + batch]
        text = pyoxigraph.serialize(part, format=pyoxigraph.RdfFormat.N_QUADS).decode()
        out.append((text, len(part)))
    return out


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-load-turtle", "Import RDF (Turtle .ttl, N-Triples .nt, N-Quads .nq, TriG .trig) "
                       "into a collection's graph, in batches.")
    p.add_argument("file", type=Path, help="the RDF file; its format from the extension (others read as Turtle)")
    add_collection_arguments(p)
    p.add_argument("--batch", type=int, default=5000, help="quads per message [5000]")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        batches = await asyncio.to_thread(to_nquads_batches, args.file, args.batch)
        total = sum(n for _, n in batches)
        with tqdm(total=total, unit="quad", desc="importing", disable=None) as bar:
            for nquads, count in batches:
                await api.request(f"flow/{args.flow_id}/import/triples-bulk", {
                    "metadata": {"id": str(args.file), "root": str(args.file), "collection": args.collection},
                    "nquads": nquads, "count": count})
                bar.update(count)
        print(f"sent {total:,} quads from {args.file} to collection {args.collection!r}")

    return run("tg-load-turtle", args, body)
