"""What the search service adds to the GraphRAG chain it shares (Question → Grounding → Exploration
→ Focus → Synthesis, same URIs, so every trace tool reads it): the router's decision on Grounding,
one tg:StrategyRun per retrieval strategy on Exploration (with HyDE's and NL→SPARQL's details),
the fusion and reranker on Focus, and RSN-11's confidence block on Synthesis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tracegraph.base.provenance.query import known_values, retrieval_triple
from tracegraph.base.provenance.vocab import RDF, RDFS, TG
from tracegraph.schemas.rdf import Triple, iri, literal


def strategy_run_uri(sid: str, strategy: str) -> str:
    return f"urn:trustgraph:prov:strategy:{sid}:{strategy}"


@dataclass(frozen=True, slots=True)
class StrategyRecord:
    """One strategy's run as the trace tells it."""

    strategy: str
    candidates: int
    duration_ms: int
    cache_hit: bool
    notes: Sequence[str] = ()
    details: Mapping[str, object] = field(default_factory=dict)  # HyDE similarities, the generated query…


# Detail names a strategy may report -> the property that records it.
DETAIL_PROPERTIES = {
    "raw_similarity": TG.rawSimilarity, "hyde_similarity": TG.hydeSimilarity, "hyde_applied": TG.hydeApplied,
    "hypothetical_document": TG.hypotheticalDocument, "generated_query": TG.generatedQuery,
    "query_status": TG.queryStatus,
}


def routing_triples(grounding: str, query_type: str, strategies: Sequence[str]) -> list[Triple]:
    return [retrieval_triple(grounding, TG.queryType, literal(query_type)),
            *[retrieval_triple(grounding, TG.retrievalStrategy, literal(s)) for s in strategies]]


def strategy_triples(exploration: str, sid: str, runs: Sequence[StrategyRecord]) -> list[Triple]:
    out: list[Triple] = []
    for run in runs:
        node = strategy_run_uri(sid, run.strategy)
        out += [retrieval_triple(exploration, TG.strategyRun, iri(node)),
                retrieval_triple(node, RDF.type, TG.StrategyRun),
                retrieval_triple(node, RDFS.label, literal(f"{run.strategy} retrieval")),
                *known_values(node, {TG.strategy: run.strategy, TG.candidateCount: run.candidates,
                                     TG.durationMs: run.duration_ms, TG.cacheHit: str(run.cache_hit).lower()}),
                *known_values(node, {DETAIL_PROPERTIES[k]: _text(v) for k, v in run.details.items()
                                     if k in DETAIL_PROPERTIES}),
                *[retrieval_triple(node, RDFS.comment, literal(note)) for note in run.notes]]
    return out


def fusion_triples(focus: str, rrf_k: int, reranker: str) -> list[Triple]:
    return known_values(focus, {TG.rrfK: rrf_k, TG.reranker: reranker})


def selection_detail_triples(selection: str, rrf: float, strategies: Sequence[str]) -> list[Triple]:
    return [retrieval_triple(selection, TG.rrfScore, literal(f"{rrf:.5f}")),
            *[retrieval_triple(selection, TG.strategy, literal(s)) for s in strategies]]


def confidence_triples(synthesis: str, confidence: float, evidence_nodes: Sequence[str], source_density: int,
                       strategies: Sequence[str], warning: bool, reasons: Sequence[str] = ()) -> list[Triple]:
    """RSN-11's block as statements about the Synthesis, so a stored trace keeps what the caller saw."""
    return [retrieval_triple(synthesis, TG.confidence, literal(f"{confidence:.2f}")),
            retrieval_triple(synthesis, TG.sourceDensity, literal(source_density)),
            retrieval_triple(synthesis, TG.lowConfidenceWarning, literal(str(warning).lower())),
            *[retrieval_triple(synthesis, TG.lowConfidenceReason, literal(r)) for r in reasons],
            *[retrieval_triple(synthesis, TG.retrievalStrategyUsed, literal(s)) for s in strategies],
            *[retrieval_triple(synthesis, TG.evidenceNode, iri(n)) for n in evidence_nodes]]


def search_question_triples(question: str) -> list[Triple]:
    """Marks a Question the search service answered (it is a GraphRAG Question too)."""
    return [retrieval_triple(question, RDF.type, TG.SearchQuestion)]


def _text(value: object) -> object:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4f}"
    return value
