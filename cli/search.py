"""`tg-search`: ask the hardened retrieval service (routing, vector + BM25 + graph walk + NL→SPARQL
fused by RRF, reranked; or, for corpus-wide questions, map-reduce over community reports or a walk
down the RAPTOR tree) and print the answer with its confidence block and the evidence under it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tracegraph.cli._client import add_collection_arguments, command_parser, run
from tracegraph.cli.api import Api
from tracegraph.cli.rag_output import add_answer_arguments, print_answer, time_fields
from tracegraph.schemas.search import STRATEGIES, WHOLE_ANSWER_STRATEGIES


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-search", "Answer a question with hybrid retrieval over a collection's graph, "
                       "with a confidence score and the evidence behind it.")
    add_answer_arguments(p)
    add_collection_arguments(p)
    p.add_argument("--strategy", dest="strategies", action="append", choices=[*STRATEGIES, *WHOLE_ANSWER_STRATEGIES],
                   help="run only these strategies (repeat the option); default: the query router chooses. "
                        "'global' answers from community reports (map-reduce) and 'raptor' by walking the "
                        "RAPTOR summary tree; each of those answers on its own")
    p.add_argument("--global", dest="global_search", action=argparse.BooleanOptionalAction, default=None,
                   help="answer from community reports (--global), or never (--no-global) [default: for "
                        "strategic questions, when the collection has community reports]")
    p.add_argument("-k", "--top-k", type=int, help="facts the answer rests on [10]")
    p.add_argument("--hops", type=int, choices=[1, 2, 3], help="graph walk depth [by query type]")
    p.add_argument("--rrf-k", type=int, help="Reciprocal Rank Fusion constant [60]")
    p.add_argument("--fusion-weight", dest="fusion_weights", action="append", type=_weight, metavar="STRATEGY=W",
                   help="how much a strategy's ranks count in the fusion, 0-100 (repeat the option; e.g. ppr=30) "
                        "[by query type]")
    hyde = p.add_mutually_exclusive_group()
    hyde.add_argument("--hyde", dest="hyde", action="store_true", default=None,
                      help="always search with a hypothetical answer (HyDE)")
    hyde.add_argument("--no-hyde", dest="hyde", action="store_false",
                      help="never use HyDE [default: when the best similarity is below 0.55]")
    p.add_argument("--no-cache", action="store_true", help="recompute every strategy, bypassing the cache")
    p.add_argument("--json", action="store_true", help="print the answer, confidence and evidence as JSON")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        fields = {"strategies": args.strategies, "top-k": args.top_k, "hops": args.hops, "rrf-k": args.rrf_k,
                  "fusion-weights": dict(args.fusion_weights) if args.fusion_weights else None, "hyde": args.hyde, "use-cache": False if args.no_cache else None, "global": args.global_search}
        fields = {k: v for k, v in fields.items() if v is not None}
        if args.json:
            print(json.dumps(await ask_json(api, args, fields), indent=2))
            return
        final = await print_answer(api, args, "search", fields)
        print_confidence(final)

    return run("tg-search", args, body)


def _weight(text: str) -> tuple[str, float]:
    """("ppr", 30.0) of "ppr=30"."""
    name, _, weight = text.partition("=")
    if name not in STRATEGIES:
        raise argparse.ArgumentTypeError(f"{name!r} is not a fused strategy ({', '.join(STRATEGIES)})")
    try:
        return name, float(weight)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: write STRATEGY=WEIGHT, e.g. ppr=30") from None


async def ask_json(api: Api, args: argparse.Namespace, fields: dict[str, Any]) -> dict[str, Any]:
    request = {"query": args.question, "collection": args.collection, "explain": args.explainable,
               **time_fields(args), **fields}
    answer, final = [], {}
    async for message in api.stream(args.flow_id, "search", request):
        if message.get("message_type") != "explain":
            answer.append(message.get("response", ""))
        if message.get("end_of_session"):
            final = message
    return {"answer": "".join(answer), "query_type": final.get("query_type"), "confidence": final.get("confidence"),
            "evidence": final.get("evidence"), "sources": final.get("sources")}


def print_confidence(final: dict[str, Any]) -> None:
    block = final.get("confidence")
    if not block:
        return
    print(f"\nConfidence: {block['confidence']:.2f}  (query type {final.get('query_type')}; "
          f"{block['source_density']} source document(s); strategies: "
          f"{', '.join(block['retrieval_strategies_used']) or 'none'})")
    if block["low_confidence_warning"]:
        print(f"WARNING: low confidence: {'; '.join(block.get('warning_reasons') or ['the service flagged it'])}.")
    # Best score first, the score printed beside each: what reads as the top fact is the top fact.
    evidence = sorted(final.get("evidence") or [], key=lambda item: -item["score"])
    for number, item in enumerate(evidence, start=1):
        ranks = ", ".join(f"{name} #{rank}" for name, rank in item["ranks"].items())
        print(f"  {number:>2}. {item['text']}   [score {item['score']:.2f}; {ranks}]")
