"""Edge weights for the graph walk (RSN-04): how much to trust a fact, from how it was extracted and
how often. One SPARQL query per batch of edges counts the subgraphs that contain each fact and
reads their extractor; a store without SPARQL falls back to the predicate alone."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from tracegraph.base.errors import RemoteError
from tracegraph.base.stores.protocol import SOURCE_GRAPH
from tracegraph.base.stores.terms import nt, to_ox
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Triple

CO_OCCURRENCE = "mentioned with"
EXTRACTOR_CONFIDENCE = {"llm": 0.9, "offline": 0.7}
ASSERTED = 0.8  # a fact with no extraction record was loaded as is (Turtle, bulk): curated, not guessed
CO_OCCURRENCE_FACTOR = 0.5
BATCH = 200
CONCURRENT_QUERIES = 4  # batches asked at once: the triples service runs queries on 4 threads


def weight(extractors: Sequence[str], mentions: int, predicate_label: str) -> float:
    """confidence × (1 − 0.5^mentions): one mention gives half the extractor's confidence, each
    further one halves the distance to it; mere co-occurrence counts half.

    >>> weight(["offline"], 1, "depends on"), weight(["offline"], 3, "depends on")
    (0.35, 0.6125)
    >>> weight([], 0, "mentioned with")
    0.4
    """
    if mentions == 0:
        base = ASSERTED
    else:
        base = max(EXTRACTOR_CONFIDENCE.get(e, 0.5) for e in extractors) if extractors else 0.5
        base *= 1 - 0.5 ** mentions
    if predicate_label == CO_OCCURRENCE:
        base *= CO_OCCURRENCE_FACTOR
    return round(base, 4)


def weights_query(edges: Sequence[Triple]) -> str:
    rows = " ".join(f"({nt(to_ox(e.s))} {nt(to_ox(e.p))} {nt(to_ox(e.o))})" for e in edges)
    return ("SELECT ?s ?p ?o (COUNT(DISTINCT ?sg) AS ?n) (GROUP_CONCAT(DISTINCT ?x) AS ?ex) WHERE { "
            f"VALUES (?s ?p ?o) {{ {rows} }} GRAPH <{SOURCE_GRAPH}> {{ ?sg <https://trustgraph.ai/ns/contains> "
            "<<( ?s ?p ?o )>> . OPTIONAL { ?sg <https://trustgraph.ai/ns/extractor> ?x } } } GROUP BY ?s ?p ?o")


async def edge_weights(tools, edges: Sequence[Triple], labels: dict[str, str]) -> tuple[dict[Triple, float], str]:
    """Weight of each edge, and how they were found (for the trace)."""
    plain = [e.model_copy(update={"g": None}) for e in edges]
    found: dict[Triple, tuple[list[str], int]] = {}
    gate = asyncio.Semaphore(CONCURRENT_QUERIES)

    async def counted(batch: Sequence[Triple]):
        async with gate:
            return await tools.sparql(weights_query(batch), limit=BATCH * 2, timeout=10)

    try:
        replies = await asyncio.gather(*(counted(plain[start:start + BATCH]) for start in range(0, len(plain), BATCH)))
        for row in (row for reply in replies for row in reply.bindings):
            s, p, o, n = row.get("s"), row.get("p"), row.get("o"), row.get("n")
            if isinstance(p, IriTerm) and s is not None and o is not None:
                extractors = row["ex"].value.split() if isinstance(row.get("ex"), LiteralTerm) else []
                found[Triple(s=s, p=p, o=o)] = (extractors, int(n.value) if isinstance(n, LiteralTerm) else 0)
        method = "edge weights from extraction confidence and mention count"
    except RemoteError as exc:
        method = f"edge weights from the predicate only (no SPARQL: {exc.message[:80]})"
    result = {}
    for edge in plain:
        extractors, mentions = found.get(edge, ([], 0))
        result[edge] = weight(extractors, mentions, labels.get(edge.p.iri, ""))
    return result, method
