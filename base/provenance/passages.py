"""What passage retrieval adds to a trace: the seeds personalised PageRank restarted at (each a
tg:PprSeed with the node and its weight) and, for Document RAG, each kept passage as a
tg:ChunkSelection with its rank, PPR score and reason. GraphRAG's edges carry their passage's
PPR score on their tg:EdgeSelection (query.focus_triples)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from tracegraph.base.provenance.query import known_values, retrieval_triple
from tracegraph.base.provenance.vocab import RDF, RDFS, TG
from tracegraph.schemas.rdf import Triple, iri


def seed_triples(exploration: str, seeds: Sequence, mint: Callable[[int], str]) -> list[Triple]:
    """`seeds` have .node, .weight and .reason (base/retrieval/ppr.Seed); `mint(i)` names the i-th."""
    out: list[Triple] = []
    for index, seed in enumerate(seeds):
        node = mint(index)
        out += [retrieval_triple(exploration, TG.pprSeed, iri(node)), retrieval_triple(node, RDF.type, TG.PprSeed),
                retrieval_triple(node, TG.seedNode, iri(seed.node)),
                *known_values(node, {TG.seedWeight: f"{seed.weight:.4f}", RDFS.comment: seed.reason})]
    return out


def chunk_selection_triples(exploration: str, passages: Sequence, mint: Callable[[int], str],
                            weights: Mapping[str, float] | None = None) -> list[Triple]:
    """`passages` have .uri, .score and .reason (base/retrieval/ppr.RankedPassage), best first;
    `weights` are their staleness weights by chunk, when they were weighed."""
    out: list[Triple] = []
    for index, passage in enumerate(passages):
        node = mint(index)
        weight = (weights or {}).get(passage.uri)
        out += [retrieval_triple(exploration, TG.chunkSelection, iri(node)),
                retrieval_triple(node, RDF.type, TG.ChunkSelection),
                retrieval_triple(node, TG.chunk, iri(passage.uri)),
                *known_values(node, {TG.rank: index + 1, TG.pprScore: f"{passage.score:.4f}",
                                     TG.reasoning: passage.reason,
                                     TG.stalenessWeight: None if weight is None else f"{weight:.4f}"})]
    return out
