"""The trace of a global (community map-reduce) or RAPTOR answer. The chain is the family's —
Question → Grounding → Exploration → Focus → Synthesis, same URIs — and what it explores differs:
community reports scored by the map step (tg:ReportScore), or RAPTOR tree nodes visited top-down
(tg:TreeVisit); Focus keeps reports (tg:ReportSelection) or summaries and passages (tg:NodeSelection,
tg:ChunkSelection). A kept report resolves through `prov:wasDerivedFrom` to the facts it summarises,
and those through `tg:contains` to chunks, pages and documents."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tracegraph.base.provenance.query import known_values, retrieval_triple
from tracegraph.base.provenance.vocab import RDF, RDFS, TG
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


@dataclass(frozen=True, slots=True)
class Visit:
    """A RAPTOR node the walk scored."""

    node: str
    level: int
    score: float
    expanded: bool
    reason: str


def report_score_uri(sid: str, index: int) -> str:
    return f"urn:trustgraph:prov:report-score:{sid}:{index}"


def report_selection_uri(sid: str, index: int) -> str:
    return f"urn:trustgraph:prov:report-selection:{sid}:{index}"


def tree_visit_uri(sid: str, index: int) -> str:
    return f"urn:trustgraph:prov:tree-visit:{sid}:{index}"


def node_selection_uri(sid: str, index: int) -> str:
    return f"urn:trustgraph:prov:node-selection:{sid}:{index}"


def typed_question_triples(question: str, kind) -> list[Triple]:
    """Marks a search Question answered globally (tg:GlobalQuestion) or by the tree (tg:RaptorQuestion)."""
    return [retrieval_triple(question, RDF.type, kind)]


def report_score_triples(exploration: str, sid: str, scored: Sequence[ScoredReport]) -> list[Triple]:
    """The map step: every report it scored, best first, with its score and the reason."""
    out: list[Triple] = []
    for index, item in enumerate(scored):
        node = report_score_uri(sid, index)
        out += [retrieval_triple(exploration, TG.reportScore, iri(node)),
                retrieval_triple(node, RDF.type, TG.ReportScore),
                retrieval_triple(node, TG.report, iri(item.report)),
                retrieval_triple(node, TG.community, iri(item.community)),
                *known_values(node, {TG.mapScore: f"{item.score:.4f}", TG.level: item.level,
                                     TG.rank: index + 1, TG.reasoning: item.reason}),
                retrieval_triple(node, RDFS.label, literal(item.title))]
    return out


def report_selection_triples(focus: str, sid: str, kept: Sequence[ScoredReport]) -> list[Triple]:
    """The reduce step's input: the reports kept, each with its community, score and reason."""
    out: list[Triple] = []
    for index, item in enumerate(kept):
        node = report_selection_uri(sid, index)
        out += [retrieval_triple(focus, TG.selectedReport, iri(node)),
                retrieval_triple(node, RDF.type, TG.ReportSelection),
                retrieval_triple(node, TG.report, iri(item.report)),
                retrieval_triple(node, TG.community, iri(item.community)),
                *known_values(node, {TG.score: f"{item.score:.4f}", TG.rank: index + 1, TG.reasoning: item.reason})]
    return out


def tree_visit_triples(exploration: str, sid: str, visits: Sequence[Visit], threshold: float) -> list[Triple]:
    """The RAPTOR walk: each node scored on the way down, and whether the walk went below it."""
    out = [retrieval_triple(exploration, TG.threshold, literal(f"{threshold:.2f}"))]
    for index, visit in enumerate(visits):
        node = tree_visit_uri(sid, index)
        out += [retrieval_triple(exploration, TG.treeVisit, iri(node)),
                retrieval_triple(node, RDF.type, TG.TreeVisit),
                retrieval_triple(node, TG.node, iri(visit.node)),
                *known_values(node, {TG.level: visit.level, TG.score: f"{visit.score:.4f}",
                                     TG.expanded: str(visit.expanded).lower(), TG.rank: index + 1,
                                     TG.reasoning: visit.reason})]
    return out


def node_selection_triples(focus: str, sid: str, kept: Sequence[Visit]) -> list[Triple]:
    """RAPTOR summaries the answer draws on (the passages kept are tg:ChunkSelections)."""
    out: list[Triple] = []
    for index, visit in enumerate(kept):
        node = node_selection_uri(sid, index)
        out += [retrieval_triple(focus, TG.selectedNode, iri(node)),
                retrieval_triple(node, RDF.type, TG.NodeSelection),
                retrieval_triple(node, TG.node, iri(visit.node)),
                *known_values(node, {TG.level: visit.level, TG.score: f"{visit.score:.4f}", TG.rank: index + 1,
                                     TG.reasoning: visit.reason})]
    return out
