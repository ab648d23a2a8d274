"""Global answers from what the graph knows of its architecture, beside the map-reduce over community
reports (global_search.py): a question about risks is answered by the risks computed over the
collection's landscape, most severe first; one about the platform's structure by its main groups
(communities) and the dependencies between them. Both follow the global trace: the Exploration (the
map step's report scores) comes first, then a Focus keeping the risks (tg:RiskSelection) or groups
(tg:ReportSelection) with the facts they rest on as selected edges, each scored by its risk's or
group's own measure, so the evidence under the answer is ranked by it; then the Synthesis."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from tracegraph.base.architecture.landscape import Evidence, Landscape
from tracegraph.base.architecture.landscape_read import read_landscape
from tracegraph.base.architecture.risks import Risk, find_risks
from tracegraph.base.architecture.structure import Structure, platform_structure
from tracegraph.base.provenance import global_search as trace
from tracegraph.base.provenance import query as prov
from tracegraph.base.provenance.query import SelectedEdge
from tracegraph.base.provenance.vocab import TG
from tracegraph.base.retrieval import global_answers as ga
from tracegraph.base.retrieval.confidence import ConfidenceBlock
from tracegraph.base.stores.protocol import COMMUNITY_GRAPH
from tracegraph.flow.graph_rag.pipeline import Explain, Synthesised
from tracegraph.flow.search.architecture import rows_of
from tracegraph.flow.search.results import EvidenceItem, SearchFinished, synthesis_step

MEMBERS_QUERY = (f"SELECT ?c ?level ?e WHERE {{ GRAPH <{COMMUNITY_GRAPH}> {{ ?c a <{TG.Community.iri}> ; "
                 f"<{TG.level.iri}> ?level ; <{TG.member.iri}> ?e }} }}")
MAX_MEMBERS = 1_000_000
WELL_SUPPORTED = 3  # documents behind an answer that make it well supported


@dataclass(frozen=True)
class RiskView:
    """A question about risks, and the risks the graph shows."""

    landscape: Landscape
    found: list[Risk]

    @property
    def note(self) -> str:
        return (f"the question asks about risks: answered from the {len(self.found)} risk(s) computed over the "
                "graph's architecture")

    def steps(self, answer, session, e_uri: str, question: str, searched: str, query_type: str,
              streaming: bool) -> AsyncIterator:
        return risk_steps(answer, session, e_uri, question, searched, query_type, streaming, self.landscape,
                          self.found)


@dataclass(frozen=True)
class StructureView:
    """A question about the platform's structure, and the structure the graph shows."""

    landscape: Landscape
    structure: Structure

    @property
    def note(self) -> str:
        return ("the question asks about the platform's structure: answered from its "
                f"{len(self.structure.groups)} main group(s) and the dependencies between them")

    def steps(self, answer, session, e_uri: str, question: str, searched: str, query_type: str,
              streaming: bool) -> AsyncIterator:
        return structure_steps(answer, session, e_uri, question, searched, query_type, streaming, self.landscape,
                               self.structure)


async def view_for(intent: str, tools) -> RiskView | StructureView | None:
    """How the graph's architecture answers a question of this intent; None when it cannot (an overview
    question, or a graph that records no risk or no dependency): the community reports answer it then."""
    if intent not in ("risks", "structure"):
        return None
    landscape = await read_landscape(rows_of(tools))
    if intent == "risks":
        found = find_risks(landscape, datetime.now(UTC))
        return RiskView(landscape, found) if found else None
    if not landscape.dependencies:
        return None
    structure = platform_structure(await _levels(tools), landscape)
    return StructureView(landscape, structure) if structure.groups else None


async def risk_steps(answer, session, e_uri: str, question: str, searched: str, query_type: str, streaming: bool,
                     landscape: Landscape, found: list[Risk]) -> AsyncIterator:
    """Focus, answer, Synthesis and the finish of a question about risks."""
    p, sid = answer.p, session.sid
    asked = ga.asked_count(searched)
    kept = found[:asked]
    edges, tied = _evidence_edges([(f"risk #{rank} ({r.title})", r.severity, r.evidence)
                                   for rank, r in enumerate(kept, start=1)])
    f_uri = prov.step_uri("focus", sid)
    method = (f"risks computed over the graph's architecture ({len(landscape.dependencies)} dependencies, "
              f"{len(landscape.owners)} ownership statements, {len(landscape.records)} records): {len(found)} found, "
              f"the {len(kept)} most severe kept (the question asks for {asked}); each risk's facts are selected "
              "edges scored by its severity")
    evidence = [[prov.edge_selection_uri(sid, i) for i in ids] for ids in tied]
    yield Explain(f_uri, [*prov.focus_triples(f_uri, e_uri, sid, edges, None, method),
                          *trace.risk_selection_triples(f_uri, sid, kept, evidence),
                          *([] if kept else prov.nothing_found_triples(f_uri, "the graph shows no risk"))])
    done = Synthesised()
    written = answer.written(ga.RISK_SYSTEM, ga.risk_prompt(question, kept, landscape),
                             ga.risk_answer(kept, len(found), landscape), streaming, bool(kept))
    async for chunk in p._collect(session, written, streaming, done):
        yield chunk
    labels = ga.evidence_labels(landscape)
    items = [(e, r.severity, rank) for rank, r in enumerate(kept, start=1) for e in r.evidence]
    async for step in _finish(answer, session, f_uri, question, query_type, done, items, labels,
                              [e for r in kept for e in r.entities]):
        yield step


async def structure_steps(answer, session, e_uri: str, question: str, searched: str, query_type: str,
                          streaming: bool, landscape: Landscape, structure: Structure) -> AsyncIterator:
    """Focus, answer, Synthesis and the finish of a question about how the platform is structured."""
    p, sid = answer.p, session.sid
    titled = {g.community: f"group {n} ({g.title})" for n, g in enumerate(structure.groups, start=1)}
    parts = [(f"inside {titled[g.community]}", g.measure, tuple(d.evidence for d in g.inside))
             for g in structure.groups]
    parts += [(f"links {titled[link.source]} to {titled[link.target]}", link.measure,
               tuple(d.evidence for d in link.dependencies)) for link in structure.links]
    parts.sort(key=lambda part: -part[1])
    edges, _ = _evidence_edges(parts)
    kept = _group_reports(structure, await answer.shelf.reports(p.scope, p.tools),
                          await answer.shelf.parents(p.scope, p.tools))
    f_uri = prov.step_uri("focus", sid)
    method = (f"the platform's structure: the level-{structure.level} communities holding dependencies "
              f"({len(structure.groups)} groups) and the {sum(len(k.dependencies) for k in structure.links)} "
              "dependency facts between them; a group is scored by its share of the dependency facts, an edge by "
              "its group's or link's share")
    yield Explain(f_uri, [*prov.focus_triples(f_uri, e_uri, sid, edges, None, method),
                          *trace.report_selection_triples(f_uri, sid, kept),
                          *([] if structure.groups else prov.nothing_found_triples(
                              f_uri, "the collection has no communities holding dependencies"))])
    done = Synthesised()
    offline = ga.structure_answer(structure, landscape)
    written = answer.written(ga.STRUCTURE_SYSTEM, ga.structure_prompt(question, offline), offline, streaming,
                             bool(structure.groups))
    async for chunk in p._collect(session, written, streaming, done):
        yield chunk
    items = [(e, score, rank) for rank, (_, score, facts) in enumerate(parts, start=1) for e in facts]
    async for step in _finish(answer, session, f_uri, question, query_type, done, items, ga.evidence_labels(landscape),
                              [s for g in structure.groups for s in g.services]):
        yield step


async def _finish(answer, session, f_uri: str, question: str, query_type: str, done: Synthesised,
                  items: Sequence[tuple[Evidence, float, int]], labels: dict[str, str],
                  nodes: Sequence[str]) -> AsyncIterator:
    """The Synthesis and the last step: evidence in the order of its score (its risk's or group's measure),
    and the documents behind it in the order they first support the answer."""
    documents: dict[str, str] = {}
    evidence: dict = {}
    for item, score, rank in sorted(items, key=lambda i: (-i[1], i[2])):
        for source in item.sources:
            if source.document:
                documents.setdefault(source.document, source.title or source.document)
        if item.fact not in evidence:
            evidence[item.fact] = EvidenceItem(item.fact, ga.evidence_line(item, labels), score, 0.0, {"global": rank},
                                               sorted({s.document for s in item.sources if s.document}))
    block = confidence(len(documents), list(dict.fromkeys(nodes)), bool(items))
    yield await synthesis_step(answer.p.tools, session.sid, f_uri, f"Global Answer: {question[:50]}", done, block)
    yield SearchFinished(session.usage, list(documents.items()), done.answer, block, tuple(evidence.values()),
                         query_type)


def confidence(documents: int, nodes: list[str], found: bool) -> ConfidenceBlock:
    """How well the computed answer is supported: nothing found is no support; otherwise 0.4, rising to
    1 as the documents behind its facts reach WELL_SUPPORTED. A heuristic, stated."""
    if not found:
        return ConfidenceBlock(0.0, [], 0, ["global"], True)
    value = round(0.4 + 0.6 * min(1.0, documents / WELL_SUPPORTED), 2)
    return ConfidenceBlock(value, nodes, documents, ["global"], documents <= 1, {"documents": float(documents)})


Part = tuple[str, float, Sequence[Evidence]]  # what cites the facts, its measure, the facts


def _evidence_edges(parts: Sequence[Part]) -> tuple[list[SelectedEdge], list[list[int]]]:
    """One selected edge per fact (the first, highest-scored part that cites it gives its score; every
    part citing it is named in its reason), and for each part the indexes of its edges."""
    index: dict = {}
    reasons: list[list[str]] = []
    scores: list[float] = []
    tied: list[list[int]] = []
    for what, score, facts in parts:
        mine = []
        for item in facts:
            if item.fact not in index:
                index[item.fact] = len(scores)
                scores.append(score)
                reasons.append([])
            at = index[item.fact]
            if what not in reasons[at]:
                reasons[at].append(what)
            mine.append(at)
        tied.append(list(dict.fromkeys(mine)))
    edges = [SelectedEdge(f.s, f.p, f.o, reasoning="evidence of " + "; ".join(reasons[i]), score=scores[i])
             for f, i in index.items()]
    return edges, tied


async def _levels(tools) -> list[dict[str, list[str]]]:
    """Level -> community -> members, fine to coarse."""
    rows = (await tools.sparql(MEMBERS_QUERY, limit=MAX_MEMBERS, timeout=60)).bindings
    levels: list[dict[str, list[str]]] = []
    for row in rows:
        level = int(row["level"].value)
        levels.extend({} for _ in range(level + 1 - len(levels)))
        levels[level].setdefault(row["c"].iri, []).append(row["e"].iri)
    return levels


def _group_reports(structure: Structure, reports: Sequence, parents: dict[str, str]) -> list[trace.ScoredReport]:
    """Each group's community report (a community that merged nothing has its child's), scored by the
    group's measure, for the Focus."""
    by_community = {r.community: r for r in reports}
    children: dict[str, list[str]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    kept = []
    for number, group in enumerate(structure.groups, start=1):
        community = group.community
        while community not in by_community and len(children.get(community, [])) == 1:
            community = children[community][0]
        report = by_community.get(community)
        if report is not None:
            kept.append(trace.ScoredReport(
                report.uri, report.community, report.level, report.title, group.measure,
                f"group {number} of the platform: {len(group.members)} entities, "
                f"{group.measure:.0%} of the dependency facts touch it"))
    return kept
