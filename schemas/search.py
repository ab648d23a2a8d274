"""Hardened retrieval: the search service's request and answer (with its confidence block), the
keyword index's queries, and the graph-update events the triples writer sends after every change."""

from __future__ import annotations

from typing import ClassVar, Literal, get_args

from pydantic import Field, field_validator, model_validator

from tracegraph.schemas.base import Message, ServiceResponse
from tracegraph.schemas.fields import Name, Question
from tracegraph.schemas.ingest import Metadata
from tracegraph.schemas.retrieval import RagRequest, RagResponse
from tracegraph.schemas.rdf import Triple, TripleList

FusedStrategy = Literal["vector", "bm25", "graph", "sparql", "ppr"]
STRATEGIES: tuple[str, ...] = get_args(FusedStrategy)  # the hybrid ones, fused by RRF
WHOLE_ANSWER_STRATEGIES = ("global", "raptor")  # each answers on its own: community map-reduce, the RAPTOR tree
Strategy = Literal["vector", "bm25", "graph", "sparql", "ppr", "global", "raptor"]


class GraphUpdate(Message):
    """What a write or a removal changed in a collection's knowledge graph (default graph only), sent
    by the triples writer once the change is stored. `nodes` are the IRIs whose neighbourhood
    changed; `everything` stands for a change too large to list (every cached entry is stale).
    Derived graphs (communities, the RAPTOR tree) never cause one."""

    schema_name: ClassVar[str] = "graph-update"

    metadata: Metadata
    added: TripleList = []
    removed: TripleList = []
    nodes: list[str] = []
    everything: bool = False
    passages: list[str] = []  # chunks whose records were added or removed (the RAPTOR tree follows them)


class KeywordQueryRequest(Message):
    """BM25 search over a collection's facts, each indexed as the sentence its labels make."""

    schema_name: ClassVar[str] = "keyword-query-request"

    query: Question
    user: Name = "default"
    collection: Name = "default"
    limit: int = Field(20, ge=1, le=1000)


class KeywordMatch(Message):
    triple: Triple
    text: str
    score: float


class KeywordQueryResponse(ServiceResponse):
    schema_name: ClassVar[str] = "keyword-query-response"

    matches: list[KeywordMatch] = []
    end_of_stream: bool = True


class SearchRequest(RagRequest):
    """A question for the hardened pipeline. Unset fields take the processor's defaults; `strategies`
    unset lets the query router choose. `global` (or the strategy "global") answers by map-reduce
    over community reports, the strategy "raptor" by walking the RAPTOR summary tree."""

    schema_name: ClassVar[str] = "search-request"

    strategies: list[Strategy] | None = None
    global_search: bool | None = Field(None, alias="global")  # None: the router sends strategic questions there
    top_k: int | None = Field(None, alias="top-k", ge=1, le=100)
    hops: int | None = Field(None, ge=1, le=3)
    rrf_k: int | None = Field(None, alias="rrf-k", ge=1, le=10_000)
    # Each fused strategy's vote in RRF ({"ppr": 6}); unset: the router's weights for the query type.
    fusion_weights: dict[FusedStrategy, float] | None = Field(
        None, alias="fusion-weights")
    hyde: bool | None = None  # None: when the best raw similarity is below the threshold
    use_cache: bool = Field(True, alias="use-cache")

    @field_validator("fusion_weights")
    @classmethod
    def _weights_in_range(cls, weights: dict[str, float] | None) -> dict[str, float] | None:
        if weights and not all(0 <= w <= 100 for w in weights.values()):
            raise ValueError("fusion-weights: each weight must be between 0 and 100")
        return weights

    @model_validator(mode="after")
    def _whole_answers_alone(self) -> "SearchRequest":
        chosen = set(self.strategies or ())
        alone = chosen & set(WHOLE_ANSWER_STRATEGIES)
        if alone and len(chosen) > 1:
            raise ValueError(f"strategy {sorted(alone)[0]!r} answers on its own: do not combine it with other strategies")
        if self.global_search and chosen and chosen != {"global"}:
            raise ValueError("`global: true` answers from community reports: leave `strategies` unset")
        if self.as_of and (alone or self.global_search):
            # Community reports and the RAPTOR tree summarise the current graph: they have no past.
            raise ValueError(f"as-of: {sorted(alone)[0] if alone else 'global'} answers from summaries of the "
                             "current graph, which cannot be read as of a date; leave `as-of` unset")
        return self


class Confidence(Message):
    """RSN-11's block, on every answer: how well the evidence supports it."""

    confidence: float
    evidence_nodes: list[str] = []
    source_density: int = 0  # independent source documents behind the evidence
    retrieval_strategies_used: list[str] = []
    low_confidence_warning: bool = True
    warning_reasons: list[str] = []  # why the warning is raised (and the confidence held low)


class Evidence(Message):
    """One fact the answer rests on, with where each strategy ranked it and where it came from."""

    triple: Triple
    text: str
    score: float  # the reranker's
    rrf: float
    ranks: dict[str, int] = {}
    sources: list[str] = []  # document IRIs


class SearchResponse(RagResponse):
    """Answer chunks and explain events as GraphRAG frames them; the last message also carries the
    confidence block, the evidence and the query type the router chose."""

    schema_name: ClassVar[str] = "search-response"

    message_type: Literal["chunk", "explain", "end"] = "chunk"
    confidence: Confidence | None = None
    evidence: list[Evidence] | None = None
    query_type: str | None = None
