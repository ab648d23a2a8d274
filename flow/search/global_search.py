"""Global search (RSN-14): a corpus-wide question answered by map-reduce over the collection's
community reports, which the community processor keeps in urn:graph:community.

Map: every report is scored offline (similarity × rating, base/retrieval/global_map.py); with an
LLM the best `map_pool` are rated by it, `map_batch` reports per prompt, batches in parallel, and a
rating it gets wrong falls back to the offline score with that said. Reduce: the best `keep`
reports answer the question (the LLM, or offline their titles and opening sentences). The trace
records every report scored, those kept with their communities, and where the answer's facts came
from: each kept report is derived from facts, and those facts from chunks of documents. The evidence
under the answer is ranked by the score of the report each fact came from.

A question about risks or about how the platform is structured is answered from the graph's
architecture instead of the reports' text (global_views.py), after the same map step."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import numpy as np

from tracegraph.base.errors import LlmUnavailable
from tracegraph.base.provenance import global_search as trace
from tracegraph.base.provenance import query as prov
from tracegraph.base.provenance.query import Usage
from tracegraph.base.provenance.vocab import DC, PROV, RDFS, TG
from tracegraph.base.retrieval import global_answers
from tracegraph.base.retrieval import global_map as gm
from tracegraph.base.retrieval.confidence import ConfidenceBlock
from tracegraph.base.retrieval.held import Shelf
from tracegraph.base.stores.protocol import COMMUNITY_GRAPH, SOURCE_GRAPH
from tracegraph.base.provenance.vectors import decode_vector
from tracegraph.flow.graph_rag.pipeline import Chunk, Explain, Synthesised
from tracegraph.flow.search import global_views
from tracegraph.flow.search.results import EvidenceItem, SearchFinished, WholeAnswer, synthesis_step
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, TripleTerm

MAX_REPORTS = 100_000
INTENTS = {  # why the reports answer the question
    "risks": "the question asks about risks, but the graph records none (no hub, cycle, incident, disputed or stale "
             "owner, or superseded decision still cited): answered from the best-scoring community reports",
    "structure": "the question asks about the platform's structure, but the graph records no dependency: answered "
                 "from the best-scoring community reports",
    "overview": "the question asks for an overview: answered from the best-scoring community reports"}
TRACE_SCORES = 50  # report scores the Exploration records (all are counted)

REPORTS_QUERY = f"""SELECT ?r ?c ?level ?title ?summary ?rating ?method ?vector WHERE {{ GRAPH <{COMMUNITY_GRAPH}> {{
  ?r a <{TG.CommunityReport.iri}> ; <{TG.reportOf.iri}> ?c ; <{RDFS.label.iri}> ?title ;
     <{TG.summary.iri}> ?summary ; <{TG.method.iri}> ?method .
  ?c <{TG.level.iri}> ?level .
  OPTIONAL {{ ?r <{TG.rating.iri}> ?rating }} OPTIONAL {{ ?r <{TG.embedding.iri}> ?vector }} }} }}"""


PARENTS_QUERY = (f"SELECT ?c ?p WHERE {{ GRAPH <{COMMUNITY_GRAPH}> {{ ?c <{TG.parentCommunity.iri}> ?p }} }}")


def sources_query(reports: Sequence[str]) -> str:
    """From reports to the documents their facts were extracted from, in one query: report → fact
    (prov:wasDerivedFrom) → subgraph (tg:contains) → chunk → page? → document."""
    values = " ".join(f"<{r}>" for r in reports)
    return f"""SELECT DISTINCT ?r ?fact ?doc ?title WHERE {{ VALUES ?r {{ {values} }}
  GRAPH <{COMMUNITY_GRAPH}> {{ ?r <{PROV.wasDerivedFrom.iri}> ?fact }}
  GRAPH <{SOURCE_GRAPH}> {{ ?sg <{TG.contains.iri}> ?fact ; <{PROV.wasDerivedFrom.iri}> ?chunk .
    ?chunk a <{TG.Chunk.iri}> ; <{PROV.wasDerivedFrom.iri}> ?parent .
    OPTIONAL {{ ?parent a <{TG.Page.iri}> ; <{PROV.wasDerivedFrom.iri}> ?grand }} }}
  BIND(COALESCE(?grand, ?parent) AS ?doc) OPTIONAL {{ ?doc <{DC.title.iri}> ?title }} }}"""


@dataclass(frozen=True, slots=True)
class GlobalLimits:
    keep: int = 5  # reports the reduce step answers from
    map_pool: int = 40  # reports the LLM rates (the best by offline score)
    map_batch: int = 8  # reports per rating prompt
    map_concurrency: int = 4
    floor: float = 0.05  # reports scoring below are never kept


class ReportShelf(Shelf[tuple[list[gm.StoredReport], dict[str, str]]]):
    """Each collection's reports, and its community hierarchy (community -> parent, for every
    community: those without a report of their own too)."""

    async def reports(self, scope: tuple[str, str], tools) -> list[gm.StoredReport]:
        return (await self.held(scope, tools))[0]

    async def parents(self, scope: tuple[str, str], tools) -> dict[str, str]:
        return (await self.held(scope, tools))[1]

    async def read(self, tools) -> tuple[list[gm.StoredReport], dict[str, str]]:
        rows = (await tools.sparql(PARENTS_QUERY, limit=MAX_REPORTS * 4, timeout=60)).bindings
        return await read_reports(tools), {row["c"].iri: row["p"].iri for row in rows}


async def read_reports(tools) -> list[gm.StoredReport]:
    result = await tools.sparql(REPORTS_QUERY, limit=MAX_REPORTS, timeout=60)
    reports = []
    for row in result.bindings:
        vector, rating = row.get("vector"), row.get("rating")
        reports.append(gm.StoredReport(
            uri=row["r"].iri, community=row["c"].iri, level=int(row["level"].value), title=row["title"].value,
            summary=row["summary"].value, rating=float(rating.value) if isinstance(rating, LiteralTerm) else 0.0,
            method=row["method"].value, vector=decode_vector(vector.value) if isinstance(vector, LiteralTerm) else None))
    return reports


class GlobalAnswer(WholeAnswer):
    """One global answer."""

    def __init__(self, pipeline, shelf: ReportShelf, limits: GlobalLimits = GlobalLimits()) -> None:
        super().__init__(pipeline, shelf, limits)

    async def steps(self, session, q_uri: str, question: str, searched: str, g_uri: str, query_type: str,
                    streaming: bool) -> AsyncIterator:
        sid, tools = session.sid, self.p.tools
        intent = global_answers.global_intent(searched)
        view = await global_views.view_for(intent, tools)
        reports = await self.shelf.reports(self.p.scope, tools)
        (vector,) = await tools.embed([searched])
        scored = await self._map(session, searched, vector, reports, rate_by_llm=view is None)
        e_uri = prov.step_uri("exploration", sid)
        notes = [f"map step scored {len(scored)} community report(s)"
                 + (f"; the best {TRACE_SCORES} are recorded" if len(scored) > TRACE_SCORES else ""),
                 view.note if view else INTENTS[intent]]
        if not reports:
            notes.append("the collection has no community reports yet: the community processor builds them from "
                         "its graph (tg-rebuild-communities builds them now)")
        yield Explain(e_uri, [*prov.exploration_triples(e_uri, g_uri, 0, []),
                              prov.retrieval_triple(e_uri, PROV.wasGeneratedBy, IriTerm(iri=q_uri)),
                              *[prov.retrieval_triple(e_uri, RDFS.comment, prov.literal(n)) for n in notes],
                              *trace.report_score_triples(e_uri, sid, scored[:TRACE_SCORES]),
                              *([] if reports else prov.nothing_found_triples(e_uri, "the collection has no community reports"))])
        if view is not None:
            async for step in view.steps(self, session, e_uri, question, searched, query_type, streaming):
                yield step
            return

        by_uri = {r.uri: r for r in reports}
        parents = await self.shelf.parents(self.p.scope, tools)
        kept = distinct(scored, {**{r.community: None for r in reports}, **parents}, self.limits.keep, self.limits.floor)
        f_uri = prov.step_uri("focus", sid)
        method = (f"reduce over the {len(kept)} best-scoring community report(s) of {len(scored)} (score ≥ "
                  f"{self.limits.floor}; a report whose community holds, or is held by, a kept one is passed over, as is the whole-collection community)")
        yield Explain(f_uri, [*prov.focus_triples(f_uri, e_uri, sid, [], None, method),
                              *trace.report_selection_triples(f_uri, sid, kept),
                              *([] if kept else prov.nothing_found_triples(
                                  f_uri, f"no community report scored {self.limits.floor} or more"))])

        done = Synthesised()
        chosen = [by_uri[s.report] for s in kept]
        async for chunk in self.p._collect(session, self._reduce(question, chosen, streaming), streaming, done):
            yield chunk
        facts, documents = await self._provenance([s.report for s in kept])
        block = confidence(kept, documents)
        yield await synthesis_step(tools, sid, f_uri, f"Global Answer: {question[:50]}", done, block)
        texts = await self.p._texts_for(session)([f for f, _, _ in facts])
        rank = {s.report: (s.score, index) for index, s in enumerate(kept, start=1)}
        items = [EvidenceItem(fact, text, rank[report][0], 0.0, {"global": rank[report][1]}, sorted(docs))
                 for (fact, docs, report), text in zip(facts, texts)]
        evidence = tuple(sorted(items, key=lambda e: -e.score))
        yield SearchFinished(session.usage, sorted(documents.items(), key=lambda d: d[1]), done.answer, block,
                             evidence, query_type)

    async def _map(self, session, question: str, vector, reports: Sequence[gm.StoredReport], *,
                   rate_by_llm: bool = True) -> list[trace.ScoredReport]:
        """Every report scored offline; the best `map_pool` rated again by the LLM when there is one and
        the reports answer the question (risks and structure are answered from the graph itself)."""
        query = np.asarray(vector, dtype=np.float32)
        scores: dict[str, gm.MapScore] = {}
        for report in reports:
            similarity = float(np.dot(query, np.asarray(report.vector, dtype=np.float32))) if report.vector is not None else 0.0
            scores[report.uri] = gm.offline_score(similarity, report.rating)
        ranked = sorted(reports, key=lambda r: (-scores[r.uri].score, r.uri))
        if self.p.llm and ranked and rate_by_llm:
            await self._llm_map(session, question, ranked[: self.limits.map_pool], scores)
            ranked = sorted(reports, key=lambda r: (-scores[r.uri].score, r.uri))
        return [trace.ScoredReport(r.uri, r.community, r.level, r.title, scores[r.uri].score, scores[r.uri].reason)
                for r in ranked]

    async def _llm_map(self, session, question: str, pool: Sequence[gm.StoredReport],
                       scores: dict[str, gm.MapScore]) -> None:
        gate = asyncio.Semaphore(self.limits.map_concurrency)
        size = self.limits.map_batch

        async def rate(batch: Sequence[gm.StoredReport]) -> None:
            async with gate:
                if not self.p.llm:
                    return
                try:
                    done = await self.p.tools.complete(gm.MAP_SYSTEM, gm.map_prompt(question, batch))
                except LlmUnavailable:
                    self.p.llm = False
                    return
            session.usage += Usage(done.in_token, done.out_token, done.model)
            ratings = gm.parse_ratings(done.text, len(batch), done.model)
            for number, report in enumerate(batch, start=1):
                if number in ratings:
                    scores[report.uri] = ratings[number]
                else:
                    kept = scores[report.uri]
                    scores[report.uri] = gm.MapScore(kept.score, f"the LLM's rating was missing or unreadable; "
                                                                 f"{kept.reason}")

        await asyncio.gather(*(rate(pool[i:i + size]) for i in range(0, len(pool), size)))

    async def _reduce(self, question: str, kept: Sequence[gm.StoredReport], streaming: bool):
        async for piece in self.written(gm.REDUCE_SYSTEM, gm.reduce_prompt(question, kept), gm.offline_answer(kept),
                                        streaming, bool(kept)):
            yield piece

    async def written(self, system: str, prompt: str, offline: str, streaming: bool, worth_asking: bool):
        """The LLM's answer to `prompt` when one is configured and there is something to answer from,
        else `offline`, the answer composed without it."""
        if self.p.llm and worth_asking:
            async for piece in self.p._generate(system, prompt, streaming):
                yield piece
            if self.p.llm:
                return
        yield Chunk(offline, end_of_stream=True)

    async def _provenance(self, reports: Sequence[str]):
        """The facts the kept reports summarise (up to 3 per report, for the evidence list, each with its
        documents and the report it came from) and the documents behind them: IRI -> title."""
        if not reports:
            return [], {}
        result = await self.p.tools.sparql(sources_query(reports), limit=10_000, timeout=30)
        facts: dict = {}  # fact -> (its documents, the first report quoting it)
        documents: dict[str, str] = {}
        per_report: dict[str, int] = {}
        for row in result.bindings:
            fact, doc = row.get("fact"), row.get("doc")
            if not isinstance(fact, TripleTerm) or not isinstance(doc, IriTerm):
                continue
            title = row.get("title")
            documents.setdefault(doc.iri, title.value if isinstance(title, LiteralTerm) else doc.iri)
            report = row["r"].iri
            if fact.triple not in facts and per_report.get(report, 0) < 3:
                per_report[report] = per_report.get(report, 0) + 1
                facts[fact.triple] = (set(), report)
            if fact.triple in facts:
                facts[fact.triple][0].add(doc.iri)
        return [(fact, docs, report) for fact, (docs, report) in facts.items()], documents


def distinct(scored: Sequence[trace.ScoredReport], parent_of: dict[str, str | None], keep: int,
             floor: float) -> list[trace.ScoredReport]:
    """The best reports, skipping any whose community is an ancestor or descendant of a kept one's
    (a level-2 report and its level-0 part mostly say the same, and the answer needs breadth), and
    the one community holding the whole collection, when there are others: it summarises everything."""
    def line(community: str) -> set[str]:
        seen = set()
        while community and community not in seen:
            seen.add(community)
            community = parent_of.get(community)
        return seen

    roots = [c for c, parent in parent_of.items() if parent is None]
    whole = roots[0] if len(roots) == 1 and len(parent_of) > 1 else None
    kept: list[trace.ScoredReport] = []
    lines: list[set[str]] = []
    for item in scored:
        if len(kept) == keep or item.score < floor:
            break
        if item.community == whole:
            continue
        mine = line(item.community)
        if any(item.community in other or kept_one.community in mine for kept_one, other in zip(kept, lines)):
            continue
        kept.append(item)
        lines.append(mine)
    return kept


def confidence(kept: Sequence[trace.ScoredReport], documents: dict[str, str]) -> ConfidenceBlock:
    """RSN-11's block for a global answer: the best map score, the mean of those kept and how many
    documents stand behind the kept reports (three or more is well supported). A heuristic, stated."""
    if not kept:
        return ConfidenceBlock(0.0, [], 0, ["global"], True)
    best, mean = kept[0].score, sum(k.score for k in kept) / len(kept)
    density = len(documents)
    value = round(min(1.0, 0.5 * best + 0.2 * mean + 0.3 * min(1.0, density / 3)), 2)
    return ConfidenceBlock(value, [k.community for k in kept], density, ["global"], density <= 1,
                           {"best_map_score": best, "mean_map_score": round(mean, 4)})
