"""The GraphRAG pipeline as plain async code: Grounding → Exploration → Focus → Synthesis, yielding
explain events as each step finishes, then the answer, then the Synthesis event. No bus here."""

from __future__ import annotations

import math
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from tracegraph.base.errors import ConfigError, LlmUnavailable
from tracegraph.base.llm.completion import Completion
from tracegraph.base.provenance import query as prov
from tracegraph.base.provenance.query import SelectedEdge, Usage
from tracegraph.base.provenance.vocab import DC, PROV, RDFS, READABLE_PREDICATES, TG, is_knowledge
from tracegraph.base.stores.protocol import SOURCE_GRAPH
from tracegraph.flow.graph_rag.focus import (
    FOCUS_SYSTEM, Edge, Scored, focus_prompt, offline_selection, parse_selection, score_edges, weighed, with_staleness,
)
from tracegraph.base.provenance import passages as passages_trace
from tracegraph.base.provenance.date_phrases import date_phrase_triples
from tracegraph.flow.graph_rag import text_passages
from tracegraph.base.retrieval.grounding import Grounding, ground
from tracegraph.base.retrieval.unknown_names import UnknownName, unknown_answer, unknown_names, unknown_reason
from tracegraph.base.retrieval.names import question_names
from tracegraph.base.retrieval.offline_answer import Fact, OfflineAnswer
from tracegraph.flow.graph_rag import offline_synthesis
from tracegraph.base.retrieval.passage_graph import PassageGraph, passage_graph_of, passages_of
from tracegraph.base.retrieval.ppr import PassageRanking, RankedPassage, rank_passages
from tracegraph.base.retrieval.as_of import tools_as_of
from tracegraph.base.retrieval.staleness import HALF_LIFE_DAYS
from tracegraph.base.retrieval.timeline import Timeline
from tracegraph.base.stores.keyword import readable
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Term, Triple, TripleTerm, iri, literal

OFFLINE_NOTE = "offline (no LLM configured)"
# Of a question, what retrieval reads (an embedding, a BM25 query): far more than any embedding model
# takes in, and it keeps an oversized question from costing a tokenizer's memory for every character.
RETRIEVAL_TEXT_CHARS = 16_000
MIN_HOP_BATCH = 4  # nodes per neighbourhood request at least: fewer would cost round trips, not reads
NO_EDGES = "the graph holds no edge near the question's concepts"
NO_SELECTION = "no edge was selected, so the answer rests on no fact of the graph"
UNKNOWN_METHOD = "no answer: the question names only what this collection does not know"


def retrieval_text(question: str) -> str:
    """The part of a question that is embedded and searched for: the whole of any real question."""
    return question[:RETRIEVAL_TEXT_CHARS]



@dataclass(frozen=True, slots=True)
class Limits:
    """Every default in one place; a request's non-None fields override them."""

    entity_limit: int = 50
    triple_limit: int = 30
    max_subgraph_size: int = 1000
    max_path_length: int = 2
    edge_limit: int = 25
    llm_candidates: int = 150  # edges shown to the LLM, the most similar first
    passage_limit: int = 10  # ranked passages whose facts Exploration reads
    relevance_floor: float = 0.1  # edges less similar to the question are not kept offline


@dataclass(frozen=True, slots=True)
class Explain:
    uri: str
    triples: list[Triple]


@dataclass(frozen=True, slots=True)
class Chunk:
    text: str
    end_of_stream: bool = False


@dataclass(frozen=True, slots=True)
class Finished:
    usage: Usage
    sources: list[tuple[str, str]]  # (document IRI, title)
    answer: str


Step = Explain | Chunk | Finished


@dataclass
class Synthesised:
    answer: str = ""
    usage: Usage | None = None
    method: str = OFFLINE_NOTE


@dataclass
class _Session:
    sid: str
    usage: Usage = field(default_factory=Usage)
    labels: dict[str, str] = field(default_factory=dict)


class GraphRagPipeline:
    def __init__(self, tools, limits: Limits, *, as_of: str | None = None,
                 half_life_days: float = HALF_LIFE_DAYS) -> None:
        self.tools = tools
        self.limits = limits
        self.timeline = Timeline(tools, as_of, half_life_days)
        self.llm = True  # cleared when the LLM says it is not configured
        self.graph: PassageGraph | None = None
        self.ranked: list[RankedPassage] = []  # the passages Exploration read, best first
        self.texts: list[text_passages.TextPassage] = []  # ranked passages with no fact: read as text
        self.question_vector: list[float] = []
        self.grounding = Grounding()  # the entities the question names, found in any case
        self.offline: OfflineAnswer | None = None  # the answer composed without an LLM, and how

    async def run(self, question: str, *, streaming: bool = False, parent_uri: str | None = None,
                  session_id: str | None = None) -> AsyncIterator[Step]:
        question = question.strip()
        if not question:
            raise ConfigError("empty question")
        session = _Session(session_id or str(uuid.uuid4()))
        q_uri = prov.question_uri(session.sid)
        await self.timeline.read_question(question, cannot_apply=self.cannot_stand_at_a_date())
        await self.timeline.prepare()
        self.tools = tools_as_of(self.tools, self.timeline)
        yield Explain(q_uri, [*self.question_triples(q_uri, question, parent_uri), *self.time_triples(q_uri),
                              *date_phrase_triples(q_uri, self.timeline.phrases, self.timeline.applied,
                                                   lambda i: prov.item_uri("date-phrase", session.sid, i),
                                                   self.timeline.not_applied)])
        try:
            async for step in self._answer(session, q_uri, question, streaming):
                yield step
        except Exception as exc:
            yield Explain(q_uri, prov.failure_triples(q_uri, str(exc) or type(exc).__name__))
            raise

    def question_triples(self, q_uri: str, question: str, parent_uri: str | None) -> list[Triple]:
        return prov.question_triples(q_uri, question, prov.now(), parent_uri)

    def time_triples(self, q_uri: str) -> list[Triple]:
        """The as-of date the answer stands at, and the half-life its evidence was weighed with."""
        return prov.time_triples(q_uri, self.timeline.as_of, self.timeline.half_life_used)

    def cannot_stand_at_a_date(self) -> str:
        """Why this answer cannot stand at a date the question's words give; "" when it can."""
        return ""

    def time_notes(self, step: str) -> list[Triple]:
        return prov.comment_triples(step, self.timeline.notes)

    async def _answer(self, session: _Session, q_uri: str, question: str, streaming: bool) -> AsyncIterator[Step]:
        sid = session.sid
        concepts, usage, method = await self._ground(question)
        session.usage += usage or Usage()
        g_uri = prov.step_uri("grounding", sid)
        yield Explain(g_uri, [*prov.grounding_triples(g_uri, q_uri, concepts, usage, method, query=question),
                              *prov.comment_triples(g_uri, self.grounding.notes())])
        unknown = await self.unknown(asked=False)
        if unknown:
            done = Synthesised()
            async for step in self._unknown_steps(session, q_uri, g_uri, unknown, streaming, done):
                yield step
            f_uri, s_uri = prov.step_uri("focus", sid), prov.step_uri("synthesis", sid)
            yield Explain(s_uri, prov.synthesis_triples(s_uri, f_uri, None, None, done.method))
            yield Finished(session.usage, [], done.answer)
            return

        vectors = await self.tools.embed([retrieval_text(c) for c in concepts])
        names = [c for c in concepts if c != question]
        self.question_vector = vectors[concepts.index(question)] if question in concepts \
            else (await self.tools.embed([retrieval_text(question)]))[0]
        ranking = await self._rank(retrieval_text(question), self.question_vector, names)
        e_uri = prov.step_uri("exploration", sid)
        if ranking is not None and ranking.passages:
            edges = await self._passage_edges(session, ranking)
            self.texts = await text_passages.read(self.tools, text_passages.factless(self.graph, ranking.passages))
            seeds = [seed.node for seed in ranking.seeds if not seed.node.startswith("urn:chunk:")]
            explored = [*prov.exploration_triples(e_uri, g_uri, len(edges), seeds),
                        *passages_trace.seed_triples(e_uri, ranking.seeds, lambda i: prov.seed_uri(sid, i)),
                        *[prov.retrieval_triple(e_uri, RDFS.comment, literal(n)) for n in ranking.notes]]
        else:
            seeds = await self._seeds(vectors)
            edges = await self._explore(session, seeds)
            explored = prov.exploration_triples(e_uri, g_uri, len(edges), seeds)
        yield Explain(e_uri, [*explored, prov.retrieval_triple(e_uri, PROV.wasGeneratedBy, iri(q_uri)),
                              *self.time_notes(e_uri),
                              *(prov.nothing_found_triples(e_uri, NO_EDGES) if not edges else [])])

        # An edge that matched the whole question best names no concept: the Question holds the text.
        shown = [None if c == question else c for c in concepts]
        selected, usage, method, notes = await self._focus(question, edges, shown, vectors)
        session.usage += usage or Usage()
        f_uri = prov.step_uri("focus", sid)
        yield Explain(f_uri, [*prov.focus_triples(f_uri, e_uri, sid, selected, usage, method, notes),
                              *passages_trace.chunk_selection_triples(
                                  f_uri, self.texts, lambda i: f"{prov.step_uri('chunk', sid)}/{i}"),
                              *(prov.nothing_found_triples(f_uri, NO_SELECTION) if not selected and not self.texts
                                else [])])

        done = Synthesised()
        async for chunk in self._synthesis(session, question, selected, streaming, done):
            yield chunk
        answer, usage, method = done.answer, done.usage, done.method
        document = prov.answer_document_uri(sid)
        saved = await self.tools.save_answer(document, f"GraphRAG Answer: {question[:50]}", answer)
        s_uri = prov.step_uri("synthesis", sid)
        yield Explain(s_uri, prov.synthesis_triples(s_uri, f_uri, document if saved else None, usage, method))
        yield Finished(session.usage, await self._sources(selected), answer)

    async def _rank(self, question: str, vector: list[float], names: list[str]) -> PassageRanking | None:
        """Passages by personalised PageRank, when the tools can build a passage graph."""
        self.graph = await passage_graph_of(self.tools)
        if self.graph is None:
            return None
        ranking = await rank_passages(self.tools, self.graph, question, vector, names, self.limits.passage_limit)
        self.ranked = ranking.passages
        return ranking

    async def _passage_edges(self, session: _Session, ranking: PassageRanking) -> list[Edge]:
        """The facts of the ranked passages, each tagged with the best passage it came from: at most
        `triple_limit` facts of one passage and `max_subgraph_size` in all."""
        found: dict[Triple, tuple[int, float]] = {}
        for rank, passage in enumerate(ranking.passages):
            vertex = self.graph.passage_index.get(passage.uri)
            for fact in (self.graph.facts[vertex] if vertex is not None else ())[: self.limits.triple_limit]:
                if len(found) < self.limits.max_subgraph_size:
                    found.setdefault(fact, (rank, passage.score))
        found = {t: found[t] for t in await self.timeline.holding(list(found))}  # not what was superseded since
        await self._fetch_labels(session, [term for t in found for term in (t.s, t.p, t.o)])
        return [Edge(t, (await self._label(session, t.s), await self._label(session, t.p),
                         await self._label(session, t.o)), 0, rank, ppr) for t, (rank, ppr) in found.items()]

    async def _ground(self, question: str) -> tuple[list[str], Usage | None, str]:
        """Concepts of the question: the LLM's list, or offline the entities it names (found in any case) and
        the names it gives, plus the question."""
        self.grounding = await ground(self.tools, question)
        if self.llm:
            try:
                done = await self.tools.complete(
                    "List the key concepts and entity names in the question, one per line, nothing else.", question)
                concepts = [line.strip(" -*\t") for line in done.text.splitlines() if line.strip(" -*\t")]
                return concepts or [question], Usage(done.in_token, done.out_token, done.model), f"LLM ({done.model})"
            except LlmUnavailable:
                self.llm = False
        names = self.grounding.names
        return list(dict.fromkeys([*names, question])), None, "offline: entity names in the question, and the question"

    async def unknown(self, asked: bool) -> list[UnknownName]:
        """The names the question gives when no entity was matched and the collection knows none of them;
        with `asked`, for a question that gives no name, the run of words it asks about."""
        found = self.grounding
        names = list(found.unmatched) or ([found.asked] if asked and found.asked else [])
        if found.matches or not names:
            return []
        unknown = await unknown_names(self.tools, names)
        return unknown if len(unknown) == len(names) else []

    async def _unknown_steps(self, session: _Session, q_uri: str, g_uri: str, unknown: list[UnknownName],
                             streaming: bool, done: Synthesised) -> AsyncIterator[Step]:
        """Exploration and Focus that found nothing to answer from, and the answer saying which names this
        collection does not know and what it holds nearest (left in `done`): never facts about other things."""
        sid, reason = session.sid, unknown_reason(unknown)
        e_uri, f_uri = prov.step_uri("exploration", sid), prov.step_uri("focus", sid)
        yield Explain(e_uri, [*prov.exploration_triples(e_uri, g_uri, 0, []),
                              prov.retrieval_triple(e_uri, PROV.wasGeneratedBy, iri(q_uri)),
                              *prov.nothing_found_triples(e_uri, reason)])
        yield Explain(f_uri, [*prov.focus_triples(f_uri, e_uri, sid, [], None, UNKNOWN_METHOD, []),
                              *prov.nothing_found_triples(f_uri, reason)])
        done.method = UNKNOWN_METHOD

        async def answer() -> AsyncIterator[Chunk]:
            yield Chunk(self.timeline.heading + unknown_answer(unknown), end_of_stream=True)

        async for piece in self._collect(session, answer(), streaming, done):
            yield piece

    async def _seeds(self, vectors: list[list[float]]) -> list[str]:
        per_concept = max(1, self.limits.entity_limit // max(1, len(vectors)))
        seeds: dict[str, None] = {}
        for vector in vectors:
            for entity, _ in await self.tools.nearest_entities(vector, per_concept):
                seeds.setdefault(entity)
        return list(seeds)[: self.limits.entity_limit]

    async def _label(self, session: _Session, term: Term) -> str:
        """rdfs:label, cached per request; well-known predicates and bare IRIs get a readable name."""
        if isinstance(term, LiteralTerm):
            return term.value
        if not isinstance(term, IriTerm):
            return str(term)
        cached = session.labels.get(term.iri)
        if cached is None:
            found = await self.tools.match(s=term, p=RDFS.label, limit=1)
            if found and isinstance(found[0].o, LiteralTerm):
                cached = found[0].o.value
            else:
                cached = READABLE_PREDICATES.get(term.iri) or readable(term.iri)
            session.labels[term.iri] = cached
        return cached

    async def _explore(self, session: _Session, seeds: list[str]) -> list[Edge]:
        """Breadth-first from the seeds over `max_path_length` hops, bounded by the limits, then the
        labels of every term met in one batch. A hop's nodes are asked for together, in as few
        neighbourhood requests as the room left allows: a batch is sized by the new edges a node
        brought so far, so the walk stops near `max_subgraph_size` without reading every node."""
        limits = self.limits
        found: dict[tuple, tuple[Triple, int]] = {}
        visited: set[str] = set()
        frontier = list(seeds)
        per_node = float(limits.triple_limit)  # new edges a node brings, until measured
        for hop in range(limits.max_path_length):
            pending = [entity for entity in dict.fromkeys(frontier) if entity not in visited]
            following: list[str] = []
            while pending and len(found) < limits.max_subgraph_size:
                room = limits.max_subgraph_size - len(found)
                take = max(MIN_HOP_BATCH, math.ceil(room / max(per_node, 1.0)))
                wanted, pending = pending[:take], pending[take:]
                before = len(found)
                visited.update(wanted)
                following += self._take_edges(found, await self.tools.around(wanted, limits.triple_limit),
                                              set(wanted), visited, hop)
                per_node = (len(found) - before) / len(wanted)
            frontier = following
        await self._fetch_labels(session, [term for t, _ in found.values() for term in (t.s, t.p, t.o)])
        return [Edge(t, (await self._label(session, t.s), await self._label(session, t.p),
                         await self._label(session, t.o)), hop) for t, hop in found.values()]

    def _take_edges(self, found: dict[tuple, tuple[Triple, int]], around: list[Triple], members: set[str],
                    visited: set[str], hop: int) -> list[str]:
        """Keep the knowledge edges of a neighbourhood answer, up to `max_subgraph_size` in all;
        returns the nodes they lead to that are not visited yet."""
        following: list[str] = []
        for t in around:
            if skipped(t) or len(found) >= self.limits.max_subgraph_size:
                continue
            found.setdefault((t.s, t.p, t.o), (t.model_copy(update={"g": None}) if t.g else t, hop))
            for end, other in ((t.s, t.o), (t.o, t.s)):
                if isinstance(end, IriTerm) and end.iri in members and isinstance(other, IriTerm) \
                        and other.iri not in visited:
                    following.append(other.iri)
        return following

    async def _fetch_labels(self, session: _Session, terms: list[Term]) -> None:
        wanted = list(dict.fromkeys(t.iri for t in terms if isinstance(t, IriTerm) and t.iri not in session.labels))
        if wanted:
            found = await self.tools.labels(wanted)
            for value in wanted:
                session.labels[value] = found.get(value) or READABLE_PREDICATES.get(value) or readable(value)

    async def _focus(self, question: str, edges: list[Edge], concepts: list[str | None], vectors: list[list[float]]
                     ) -> tuple[list[SelectedEdge], Usage | None, str, list[str]]:
        """The edges to answer from, each score weighed by its evidence's age before any is chosen."""
        if not edges:
            return [], None, "no edges to select from", []
        scored = score_edges(edges, await self.tools.embed([e.text for e in edges]), concepts, vectors)
        weights = await self.timeline.edge_weights([s.edge.triple for s in scored])
        chosen, usage, method, notes = await self._select(question, weighed(scored, weights))
        if weights:
            notes = [*notes, self.timeline.weighing_note]
        return with_staleness(chosen, weights), usage, method, notes

    async def _select(self, question: str, scored: list[Scored]) -> tuple[list[SelectedEdge], Usage | None, str, list[str]]:
        limit = self.limits.edge_limit
        if self.llm:
            candidates = scored[: self.limits.llm_candidates]
            try:
                done = await self.tools.complete(FOCUS_SYSTEM, focus_prompt(question, candidates, limit))
            except LlmUnavailable:
                self.llm = False
            else:
                chosen, notes = parse_selection(done.text, candidates, limit)
                usage = Usage(done.in_token, done.out_token, done.model)
                if chosen:
                    return chosen, usage, f"LLM ({done.model})", notes
                fallback, more = offline_selection(scored, limit, self.limits.relevance_floor)
                return fallback, usage, "offline fallback: the LLM selected no valid edge", [*notes, *more]
        chosen, notes = offline_selection(scored, limit, self.limits.relevance_floor)
        how = ("offline: embedding similarity × the PageRank score of each edge's passage" if self.ranked
               else "offline: embedding similarity and graph distance")
        return chosen, None, how, notes

    async def _synthesis(self, session: _Session, question: str, selected: list[SelectedEdge], streaming: bool,
                         into: "Synthesised") -> AsyncIterator[Chunk]:
        """The answer's chunks, when streaming (otherwise the whole answer travels in the final
        message); the whole answer, its LLM use and method are left in `into`. An answer as of a
        date says so first."""
        heading = self.timeline.heading
        if heading and streaming:
            yield Chunk(heading)
        async for piece in self._collect(session, self._synthesise(session, question, selected, streaming),
                                         streaming, into):
            yield piece
        if self.offline is not None:
            into.method = self.offline.method
        into.answer = heading + into.answer

    async def _collect(self, session: _Session, pieces: AsyncIterator[Chunk | Completion], streaming: bool,
                       into: "Synthesised") -> AsyncIterator[Chunk]:
        async for piece in pieces:
            if isinstance(piece, Completion):
                into.answer, into.method = piece.text, f"LLM ({piece.model})"
                into.usage = Usage(piece.in_token, piece.out_token, piece.model)
            elif isinstance(piece, Chunk):
                into.answer += piece.text
                if streaming:
                    yield piece
        session.usage += into.usage or Usage()

    async def _generate(self, system: str, prompt: str, streaming: bool) -> AsyncIterator[Chunk | Completion]:
        """The LLM's answer as chunks (streamed, or whole) and then its Completion; nothing, and
        `self.llm` cleared, when no LLM is configured."""
        try:
            if streaming:
                async for piece in self.tools.stream(system, prompt):
                    if isinstance(piece, Completion):
                        yield Chunk("", end_of_stream=True)
                        yield piece
                    else:
                        yield Chunk(piece)
                return
            done = await self.tools.complete(system, prompt)
            yield Chunk(done.text, end_of_stream=True)
            yield done
        except LlmUnavailable:
            self.llm = False

    async def _synthesise(self, session: _Session, question: str, selected: list[SelectedEdge],
                          streaming: bool) -> AsyncIterator[Chunk | Completion]:
        facts = [" ".join([await self._label(session, e.s), await self._label(session, e.p),
                           await self._label(session, e.o)]) for e in selected]
        if self.llm and (facts or self.texts):
            system = ("Answer the question using only the knowledge statements and passages given. If they do not "
                      "contain the answer, say so.")
            prompt = f"Question: {question}\nKnowledge statements:\n" + "\n".join(f"- {f}" for f in facts)
            if self.texts:
                prompt += "\nPassages:\n" + text_passages.prompt_block(self.texts)
            async for piece in self._generate(system, prompt, streaming):
                yield piece
            if self.llm:
                return
        labelled = [(Fact(await self._label(session, e.s), await self._label(session, e.p),
                          await self._label(session, e.o), getattr(e.s, "iri", ""), getattr(e.o, "iri", "")),
                     Triple(s=e.s, p=e.p, o=e.o)) for e in selected]
        found = self.grounding
        mentions = list(dict.fromkeys([*(m.mention for m in found.matches), *found.names, *question_names(question)]))
        entity_ids: dict[str, list[str]] = {}
        for match in found.matches:
            entity_ids.setdefault(match.mention, []).append(match.entity)
            entity_ids.setdefault(match.label, []).append(match.entity)
        vector = self.question_vector if len(self.question_vector) else \
            (await self.tools.embed([retrieval_text(question)]))[0]
        composed = await offline_synthesis.offline_answer(
            self.tools, question, vector, labelled, await self._answer_passages(selected), mentions, entity_ids)
        self.offline = composed
        yield Chunk(composed.text, end_of_stream=True)

    async def _answer_passages(self, selected: list[SelectedEdge]) -> list[offline_synthesis.PassageText]:
        """The passages an offline answer may quote, best first: the ranked passages Exploration read, or
        (when the facts were found another way) the passages the selected facts came from; and the
        passages read as text."""
        limit = offline_synthesis.ANSWER_PASSAGES
        chosen: dict[str, tuple[str, str]] = {}  # chunk -> (title, text known so far)
        if self.ranked:
            for passage in self.ranked[:limit]:
                chosen[passage.uri] = (passage.title, passage.text)
        else:
            graph = self.graph or await passage_graph_of(self.tools)
            if graph is not None:
                where = passages_of(graph, [Triple(s=e.s, p=e.p, o=e.o) for e in selected])
                for vertex in [v for e in selected for v in where[Triple(s=e.s, p=e.p, o=e.o)][:1]]:
                    if len(chosen) < limit:
                        chosen.setdefault(graph.passages[vertex], (graph.titles[vertex], ""))
        for text in self.texts:
            chosen.setdefault(text.uri, (text.title, text.text))
        missing = [uri for uri, (_, text) in chosen.items() if not text]
        fetched = {c.uri: c.text for c in await self.tools.chunks(missing)} if missing else {}
        return [offline_synthesis.PassageText(uri, title, text or fetched.get(uri, ""), rank)
                for rank, (uri, (title, text)) in enumerate(chosen.items())]

    async def _sources(self, selected: list[SelectedEdge]) -> list[tuple[str, str]]:
        """The documents the selected edges were extracted from, most relevant first: in the order of
        the ranked passages they came from, or else (edges found by walking) through their
        provenance, subgraph → chunk → page → document."""
        if self.ranked:
            return ranked_sources(self.graph, self.ranked, selected, {p.uri for p in self.texts})
        return merged_sources(await self._documents_per_edge(selected))

    async def _documents_per_edge(self, selected: list[SelectedEdge]) -> list[dict[str, str]]:
        """Document IRI -> title for each edge; a document's title is looked up once."""
        titles: dict[str, str] = {}
        return [await self._documents_of(edge, titles) for edge in selected]

    async def _documents_of(self, edge: SelectedEdge, titles: dict[str, str]) -> dict[str, str]:
        """Document IRI -> title, for every subgraph that contains the edge; `titles` caches titles."""
        documents: dict[str, str] = {}
        quoted = TripleTerm(triple=Triple(s=edge.s, p=edge.p, o=edge.o))
        for holder in await self.tools.match(p=TG.contains, o=quoted, g=SOURCE_GRAPH, limit=5):
            document = await offline_synthesis.document_of(self.tools, holder.s)
            if document is not None and document not in documents:
                if document not in titles:
                    found = await self.tools.match(s=iri(document), p=DC.title, limit=1)
                    titles[document] = found[0].o.value if found else document
                documents[document] = titles[document]
        return documents


def merged_sources(per_edge: list[dict[str, str]]) -> list[tuple[str, str]]:
    """(document IRI, title) of all edges together, in the order of the edges (the most relevant first)."""
    return list({uri: title for documents in per_edge for uri, title in documents.items()}.items())


def ranked_sources(graph: PassageGraph, ranked: list[RankedPassage], selected: list[SelectedEdge],
                   read_as_text: set[str] = frozenset()) -> list[tuple[str, str]]:
    """(document, title) of the ranked passages that supplied a selected edge or were read as text, in
    passage rank order."""
    wanted = {Triple(s=e.s, p=e.p, o=e.o) for e in selected}
    out: dict[str, str] = {}
    for passage in ranked:
        vertex = graph.passage_index.get(passage.uri)
        used = passage.uri in read_as_text or vertex is not None and wanted.intersection(graph.facts[vertex])
        if passage.document and used:
            out.setdefault(passage.document, passage.title or passage.document)
    return list(out.items())


def skipped(t: Triple) -> bool:
    """Schema plumbing (labels, RDFS/OWL axioms) is not knowledge to answer from; rdf:type is."""
    return not is_knowledge(t)
