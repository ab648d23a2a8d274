"""`tg-show-processing`: what a flow still has to do, for a user who loaded documents and wants to know
whether answers already reflect them."""

from __future__ import annotations

import argparse
import json
import os
import textwrap

from tracegraph.cli._client import command_parser, run
from tracegraph.cli.api import Api
from tracegraph.cli.processing_status import read_processing, render

EPILOG = """\
The stage table counts the messages waiting in each queue of the flow, as the bus counts them
(chunk-load: chunks for kg-extract and document-embeddings; triples-store: facts for the store;
entity-contexts: entities for graph-embeddings; graph-updates: changes for the derived structures,
such as communities and the RAPTOR tree). Queues are shared by every collection, so they are counted
for the flow as a whole. A bus that cannot count them (Pulsar when its admin API does not answer) shows "unknown";
nothing is guessed.

The collection table counts the documents sent into the flow (their processing records) against
those whose chunks all have their facts extracted: the same reads tg-load-text --wait makes.
"gave up" counts documents a processor recorded giving up on before any chunk existed.

examples:
  tg-show-processing                  # the default flow, every collection
  tg-show-processing -C notes --json  # one collection, for scripts
"""


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-show-processing", textwrap.fill(
        "Show what is still pending in a flow: the messages waiting at each stage queue, and per collection "
        "the documents submitted against those whose chunks are all extracted. The last line says "
        "\"nothing pending\" once everything has settled.", 100))
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    p.add_argument("-f", "--flow-id", default=os.environ.get("TG_FLOW", "default"), help="flow [TG_FLOW, default]")
    p.add_argument("-C", "--collection", help="only this collection (default: every collection with documents "
                   "submitted to the flow)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object (\"pending\": "
                   "true, false, or null when only uncountable queues could tell)")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        report = await read_processing(api, args.flow_id, args.collection)
        print(json.dumps(report.as_json(), indent=2) if args.json else render(report))

    return run("tg-show-processing", args, body)
