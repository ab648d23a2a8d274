"""What a search answer ends with, whichever way it was found (hybrid, global or RAPTOR): the
Synthesis step with the confidence block, and the last step carrying the block, the evidence and the
query type on top of GraphRAG's Finished; and what global and RAPTOR answers share."""

from __future__ import annotations

from dataclasses import dataclass

from tracegraph.base.provenance import query as prov
from tracegraph.base.provenance import search as trace
from tracegraph.base.retrieval.confidence import ConfidenceBlock
from tracegraph.flow.graph_rag.pipeline import Explain, Finished, Synthesised
from tracegraph.schemas.rdf import Triple

@dataclass(frozen=True, slots=True)
class EvidenceItem:
    triple: Triple
    text: str
    score: float
    rrf: float
    ranks: dict[str, int]
    sources: list[str]


@dataclass(frozen=True, slots=True)
class SearchFinished(Finished):
    confidence: ConfidenceBlock | None = None
    evidence: tuple[EvidenceItem, ...] = ()
    query_type: str = ""


async def synthesis_step(tools, sid: str, focus: str, title: str, done: Synthesised,
                         block: ConfidenceBlock) -> Explain:
    """The Synthesis: the answer kept in the librarian (titled `title`), how it was written and the
    confidence block, so a stored trace keeps what the caller saw."""
    document = prov.answer_document_uri(sid)
    saved = await tools.save_answer(document, title, done.answer)
    uri = prov.step_uri("synthesis", sid)
    return Explain(uri, [*prov.synthesis_triples(uri, focus, document if saved else None, done.usage, done.method),
                         *trace.confidence_triples(uri, block.confidence, block.evidence_nodes, block.source_density,
                                                   block.retrieval_strategies_used, block.low_confidence_warning,
                                                   block.warning_reasons)])


class WholeAnswer:
    """An answer that stands in for the hybrid strategies (global, RAPTOR), run by a search pipeline:
    its tools, LLM state, session and synthesis; `shelf` holds the structure it reads per collection."""

    def __init__(self, pipeline, shelf, limits) -> None:
        self.p, self.shelf, self.limits = pipeline, shelf, limits
