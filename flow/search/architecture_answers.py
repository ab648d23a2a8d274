"""Ownership and "why" questions asked through search, answered from the architecture records and
explained like any search answer (Question → Grounding → Exploration → Focus → Synthesis).

"Who owns Skyline?" selects the graph's owner edges and the CODEOWNERS rule (`<rule> tg:codeOwner
<owner>`) that decides Skyline's code path; "Why was Skyline moved to two regions?" selects the
decisions and failure patterns about Skyline (`<decision> tg:why <Skyline>`). Every selected edge is
contained in an extraction subgraph derived from a document line, so the trace resolves to the file
and line as any edge resolves to its chunk. The answer is composed from those records, without an
LLM: it is a lookup, and says so."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence

from tracegraph.base.architecture import graph
from tracegraph.base.architecture.memory import memory
from tracegraph.base.architecture.memory_docs import option_name
from tracegraph.base.architecture.ownership import Found, ownership
from tracegraph.base.architecture.triples import RELATIONS
from tracegraph.base.errors import UnknownEntity
from tracegraph.base.provenance import query as prov
from tracegraph.base.provenance.query import SelectedEdge
from tracegraph.base.provenance.uris import codeowners_rule_uri
from tracegraph.base.provenance.vocab import PROV, RDFS, TG
from tracegraph.base.retrieval.confidence import ConfidenceBlock
from tracegraph.flow.graph_rag.pipeline import Chunk, Explain, Synthesised
from tracegraph.flow.search.architecture import rows_of
from tracegraph.flow.search.results import SearchFinished, WholeAnswer, synthesis_step
from tracegraph.schemas.architecture import MemoryItem, MemoryResponse, Owner, OwnershipResponse, Reason, Source
from tracegraph.schemas.rdf import IriTerm, iri, literal

MEMORY_ITEMS = 3  # decisions and incidents an answer quotes
METHOD = "composed from the architecture records (a lookup: no LLM is needed or used)"
KIND_NAMES = {"decision": "Decision", "failure-pattern": "Failure pattern", "exception": "Exception to policy",
              "memory": "Memory"}


async def architecture_answer(pipeline, query_type: str, question: str,
                              names: Sequence[str]) -> "RecordsAnswer | None":
    """The records answer for an ownership or "why" question about an entity the question names (`names`,
    as grounding found them), when the records have something to say; None sends the question down the
    hybrid strategies instead."""
    if query_type not in ("ownership", "memory"):
        return None
    rows = rows_of(pipeline.tools)
    as_of = pipeline.timeline.as_of if pipeline.timeline.kept else None  # without history: now (the trace says so)
    for name in names if asks_directly(question, names) else []:
        try:
            entity = await graph.resolve(rows, name)
        except UnknownEntity:
            continue
        if query_type == "ownership":
            found = await ownership(rows, entity, pipeline.codeowners, pipeline.scope, as_of)
            if found.response.owners:
                return RecordsAnswer(pipeline, entity, ownership=found)
        else:
            remembered = await memory(rows, entity, pipeline.tools.embed, question=question, limit=MEMORY_ITEMS,
                                      half_life_days=pipeline.timeline.half_life_days, as_of=as_of)
            if remembered.items:
                return RecordsAnswer(pipeline, entity, memory=remembered)
    return None


_CLAUSE = re.compile(r"\b(?:that|which|whose|where|when|whom)\b|\bwho\b(?!$)")
MAX_OTHER_WORDS = 7


def asks_directly(question: str, names: Sequence[str]) -> bool:
    """Whether the question asks about what it names itself ("Who owns Skyline?", "Why was Skyline moved
    to two regions?"), not about something a clause hangs on a name ("Who owns the company that bought
    Skyline?"): a multi-hop question must go to the strategies that can follow the hops.

    >>> asks_directly("Who owns Skyline?", ["Skyline"]), asks_directly("Who owns the firm that bought Skyline?", ["Skyline"])
    (True, False)
    """
    rest = question.lower()
    for name in names:  # as grounding found them, in any case: "who owns skyline?" names Skyline
        rest = rest.replace(name.lower(), " ")
    words = re.findall(r"[a-z0-9']+", rest)
    return len(words) <= MAX_OTHER_WORDS and not _CLAUSE.search(" ".join(words[1:]))


class RecordsAnswer(WholeAnswer):
    """An answer from the ownership or memory records of one entity, in place of the hybrid strategies."""

    def __init__(self, pipeline, entity: graph.Entity, *, ownership: Found | None = None,
                 memory: MemoryResponse | None = None) -> None:
        super().__init__(pipeline, None, None)
        self.entity, self.ownership, self.memory = entity, ownership, memory
        self.strategy = "ownership" if ownership else "memory"

    async def steps(self, session, q_uri: str, question: str, searched: str, g_uri: str, query_type: str,
                    streaming: bool) -> AsyncIterator:
        sid = session.sid
        selected, sources, note = (self._owner_edges() if self.ownership else self._memory_edges())
        e_uri = prov.step_uri("exploration", sid)
        looked = ("the graph's owns / maintains / leads edges and the CODEOWNERS rules deciding its code paths"
                  if self.ownership else "decisions, failure patterns, exceptions and memories naming it")
        yield Explain(e_uri, [*prov.exploration_triples(e_uri, g_uri, len(selected), [self.entity.iri]),
                              prov.retrieval_triple(e_uri, PROV.wasGeneratedBy, iri(q_uri)),
                              prov.retrieval_triple(e_uri, RDFS.comment, literal(
                                  f"looked up {looked} for {self.entity.label}")), *self.p.time_notes(e_uri)])
        f_uri = prov.step_uri("focus", sid)
        yield Explain(f_uri, prov.focus_triples(f_uri, e_uri, sid, selected, None, METHOD, [note] if note else []))
        done = Synthesised(method=METHOD)
        text = self.p.timeline.heading + (self._owner_text() if self.ownership else self._memory_text())

        async def pieces():
            yield Chunk(text, end_of_stream=True)

        async for piece in self.p._collect(session, pieces(), streaming, done):
            yield piece
        documents = {s.document: s.title or s.document for s in sources if s.document}
        block = _confidence(self, selected, documents)
        yield await synthesis_step(self.p.tools, sid, f_uri, f"Search Answer: {question[:50]}", done, block)
        yield SearchFinished(session.usage, list(documents.items()), done.answer, block, (), query_type)

    # -- ownership ------------------------------------------------------------------------------------

    def _owner_edges(self) -> tuple[list[SelectedEdge], list[Source], str]:
        found = self.ownership
        response: OwnershipResponse = found.response
        selected = [SelectedEdge(f.s, f.p, f.o, reasoning="the graph says who owns, maintains or leads it", score=1.0)
                    for f in found.edges]
        selected += [SelectedEdge(f.s, f.p, f.o, score=1.0, reasoning="an earlier owner: the history keeps this "
                                  "statement, which a later one replaced") for f in found.replaced]
        for match in response.codeowners:
            rule = codeowners_rule_uri(match.source.document, match.source.line or 0)
            for owner in response.owners:
                if any(handle in match.owners for handle in owner.handles):
                    selected.append(SelectedEdge(
                        iri(rule), TG.codeOwner, iri(owner.entity), score=1.0,
                        reasoning=f"the rule {match.pattern} ({match.source.title or match.source.document}, line "
                                  f"{match.source.line}) decides {match.path}, " + (
                                      "where a document says its code lives" if match.path_origin == "graph"
                                      else "the directory named like it")))
        sources = [s for o in response.owners for s in o.sources]
        return selected, sources, response.discrepancy

    def _owner_text(self) -> str:
        response = self.ownership.response
        current = [o for o in response.owners if o.standing == "current"]
        earlier = [o for o in response.owners if o.standing == "earlier"]
        lines = [f"{self.entity.label} is owned by " + "; ".join(map(_owner_line, current)) + "."] if current else []
        if earlier:
            lines.append("Earlier owners: " + "; ".join(_owner_line(o) for o in earlier) + ".")
        if response.discrepancy:
            lines.append(response.discrepancy)
        elif response.agreement == "agree":
            lines.append("The graph and CODEOWNERS agree.")
        return "\n".join(lines)

    # -- memory ---------------------------------------------------------------------------------------

    def _memory_edges(self) -> tuple[list[SelectedEdge], list[Source], str]:
        selected = [SelectedEdge(iri(item.node), RELATIONS[item.relation], iri(self.entity.iri), score=item.score,
                                 reasoning=f"{KIND_NAMES[item.kind].lower()} ({item.relation}); relevance "
                                           f"{item.relevance:.3f}, recency {item.recency:.3f}")
                    for item in self.memory.items]
        return selected, [item.source for item in self.memory.items], self.memory.ranking

    def _memory_text(self) -> str:
        lines = [f"What the records say about {self.entity.label}, most relevant first:"]
        for item in self.memory.items:
            by = ", ".join(part for part in (item.source.author, item.source.date) if part)
            where = item.source.title or item.source.document
            why = {"decision": "Why", "failure-pattern": "Root cause", "exception": "Policy"}.get(item.kind, "Context")
            lines.append(f"- {KIND_NAMES[item.kind]}: {item.title}" + (f" ({by})" if by else "") +
                         (f" — {item.text}" if item.text else "") + _why(why, item) +
                         f" [{', '.join(filter(None, (where, _lines(item.source))))}]")
        return "\n".join(lines)


def _why(label: str, item: MemoryItem) -> str:
    """The item's why with its lines, and for a decision the option it chose over the others."""
    said = next((r for r in item.reasons if r.part in ("context", "root-cause", "policy")), None)
    why = f" {label}" + (f" ({_lines(said)})" if said and said.line else "") + f": {item.why}" if item.why else ""
    options = [r for r in item.reasons if r.part == "option"]
    chosen = next((r for r in options if r.chosen), None)
    if chosen:
        others = "; ".join(option_name(r.text) for r in options if not r.chosen)
        where = f" ({_lines(chosen)})" if chosen.line else ""
        why += f" Chosen{where}: {option_name(chosen.text)}" + (f", over {others}." if others else ".")
    return why


def _lines(place: Source | Reason) -> str:
    """ "line 9" or "lines 9–14"; "" where the line is not known."""
    if place.line is None:
        return ""
    return f"lines {place.line}–{place.last_line}" if place.last_line else f"line {place.line}"


def _owner_line(owner: Owner) -> str:
    how = ", ".join(owner.relations)
    handles = f" ({', '.join(owner.handles)})" if owner.handles else ""
    period = (f" since {owner.since}" if owner.since else "") if owner.standing == "current" else \
        " " + " – ".join(filter(None, (owner.since, owner.until))) if owner.since or owner.until else ""
    cited = ", ".join(dict.fromkeys(_cited(s) for s in owner.sources))
    return f"{owner.label}{handles}{period} [{how}; {cited}]"


def _cited(source: Source) -> str:
    """A source with its line and date, and the statement that replaced it, if one did."""
    where = (source.title or source.document) + (f" line {source.line}" if source.line else "")
    when = source.date or (f"undated, added {source.added}" if source.added else "")
    later = source.superseded_by
    replaced = f"superseded on {later.date} by {later.title or later.document}" if later else ""
    told = ", ".join(filter(None, (when, replaced)))
    return f"{where} ({told})" if told else where


def _confidence(answer: RecordsAnswer, selected: Sequence[SelectedEdge], documents: dict[str, str]) -> ConfidenceBlock:
    """High when the sources agree or one kind of record answers plainly; lower on a discrepancy."""
    density = len(documents)
    if answer.ownership:
        agreement = answer.ownership.response.agreement
        confidence = {"agree": 0.9, "graph-only": 0.75, "codeowners-only": 0.75, "disagree": 0.55}.get(agreement, 0.3)
        if agreement == "disagree" and answer.ownership.response.newer in ("graph", "codeowners"):
            confidence = 0.7  # the dates say which side is out of date
        strategies = ["ownership"]
    else:
        confidence = round(min(0.9, 0.5 + 0.4 * max(i.score for i in answer.memory.items)), 2)
        strategies = ["memory"]
    nodes = list(dict.fromkeys(str(e.o.iri if answer.ownership else e.s.iri) for e in selected
                               if isinstance(e.o, IriTerm) and isinstance(e.s, IriTerm)))
    return ConfidenceBlock(confidence, nodes, density, strategies, density <= 1)

