"""The trace of a global (community map-reduce) or RAPTOR answer. The chain is the family's —
Question → Grounding → Exploration → Focus → Synthesis, same URIs — and what it explores differs:
community reports scored by the map step (tg:ReportScore), or RAPTOR tree nodes visited top-down
(tg:TreeVisit); Focus keeps reports (tg:ReportSelection) or summaries and passages (tg:NodeSelection,
tg:ChunkSelection). A kept report resolves through `prov:wasDerivedFrom` to the facts it summarises,
and those through `tg:contains` to chunks, pages and documents."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tracegraph.base.provenance.query import item_uri, known_values, retrieval_triple
from tracegraph.base.provenance.vocab import RDF, RDFS, TG
from tracegraph.base.raptor.tree import Visit
from tracegraph.schemas.rdf import Triple, iri, literal


@dataclass(frozen=True, slots=True)
class ScoredReport:
    """A community report as the map step judged it."""

    report: str
    community: str
    level: int
    title: str
    score: float
    reason: str


def typed_question_triples(question: str, kind) -> list[Triple]:
    """Marks a search Question answered globally (tg:GlobalQuestion) or by the tree (tg:RaptorQuestion)."""
    return [retrieval_triple(question, RDF.type, kind)]


def _listed(owner: str, link, kind, node: str, links: dict, values: dict) -> list[Triple]:
    """One node of a list a step records: `owner` links to it, it has a type, IRI links and values."""
    return [retrieval_triple(owner, link, iri(node)), retrieval_triple(node, RDF.type, kind),
            *[retrieval_triple(node, p, iri(o)) for p, o in links.items()], *known_values(node, values)]


def report_score_triples(exploration: str, sid: str, scored: Sequence[ScoredReport]) -> list[Triple]:
    """The map step: every report it scored, best first, with its score and the reason."""
    return [t for index, item in enumerate(scored) for t in _listed(
        exploration, TG.reportScore, TG.ReportScore, item_uri("report-score", sid, index),
        {TG.report: item.report, TG.community: item.community},
        {TG.mapScore: f"{item.score:.4f}", TG.level: item.level, TG.rank: index + 1, TG.reasoning: item.reason,
         RDFS.label: item.title})]


def report_selection_triples(focus: str, sid: str, kept: Sequence[ScoredReport]) -> list[Triple]:
    """The reduce step's input: the reports kept, each with its community, score and reason."""
    return [t for index, item in enumerate(kept) for t in _listed(
        focus, TG.selectedReport, TG.ReportSelection, item_uri("report-selection", sid, index),
        {TG.report: item.report, TG.community: item.community},
        {TG.score: f"{item.score:.4f}", TG.rank: index + 1, TG.reasoning: item.reason})]


def tree_visit_triples(exploration: str, sid: str, visits: Sequence[Visit], threshold: float) -> list[Triple]:
    """The RAPTOR walk: each node scored on the way down, and whether the walk went below it."""
    return [retrieval_triple(exploration, TG.threshold, literal(f"{threshold:.2f}")),
            *[t for index, visit in enumerate(visits) for t in _listed(
                exploration, TG.treeVisit, TG.TreeVisit, item_uri("tree-visit", sid, index), {TG.node: visit.node_id},
                {TG.level: visit.level, TG.score: f"{visit.score:.4f}", TG.expanded: str(visit.expanded).lower(),
                 TG.rank: index + 1, TG.reasoning: visit.reason})]]


def node_selection_triples(focus: str, sid: str, kept: Sequence[Visit]) -> list[Triple]:
    """RAPTOR summaries the answer draws on (the passages kept are tg:ChunkSelections)."""
    return [t for index, visit in enumerate(kept) for t in _listed(
        focus, TG.selectedNode, TG.NodeSelection, item_uri("node-selection", sid, index), {TG.node: visit.node_id},
        {TG.level: visit.level, TG.score: f"{visit.score:.4f}", TG.rank: index + 1, TG.reasoning: visit.reason})]


def chunk_selection_triples(focus: str, sid: str, kept: Sequence[tuple[str, float, str]]) -> list[Triple]:
    """RAPTOR passages the answer draws on, best first: (chunk IRI, score, reason)."""
    return [t for index, (chunk, score, reason) in enumerate(kept) for t in _listed(
        focus, TG.chunkSelection, TG.ChunkSelection, item_uri("chunk-selection", sid, index),
        {TG.chunk: chunk}, {TG.rank: index + 1, TG.score: f"{score:.4f}", TG.reasoning: reason})]


def risk_selection_triples(focus: str, sid: str, risks: Sequence, evidence: Sequence[Sequence[str]]) -> list[Triple]:
    """The architectural risks an answer names, most severe first: each with its kind, severity and how
    that was computed, the entities at risk, and (tg:evidence) the Focus's edge selections quoting the
    facts it rests on, which resolve through extraction provenance to their documents. `risks` are
    base/architecture/risks.Risk; `evidence[i]` the edge-selection IRIs of risk i."""
    out: list[Triple] = []
    for index, (risk, edges) in enumerate(zip(risks, evidence, strict=True)):
        node = item_uri("risk-selection", sid, index)
        out += _listed(focus, TG.selectedRisk, TG.RiskSelection, node, {},
                       {RDFS.label: risk.title, TG.riskKind: risk.kind, TG.severity: f"{risk.severity:.4f}",
                        TG.rank: index + 1, TG.reasoning: risk.measure, RDFS.comment: risk.detail})
        out += [retrieval_triple(node, TG.riskEntity, iri(e)) for e in risk.entities]
        out += [retrieval_triple(node, TG.evidence, iri(e)) for e in edges]
    return out
