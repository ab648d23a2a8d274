"""The Document RAG pipeline as plain async code: Grounding (the question, embedded) → Exploration
(the best passages: dense + BM25 hits, then personalised PageRank over the passage graph so a
passage one entity away from the hits can rank too) → Synthesis (an LLM answer from those chunks,
or offline the sentences most similar to the question), yielding GraphRAG's steps: explain events,
answer chunks, Finished."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from tracegraph.base.errors import ConfigError, LlmUnavailable
from tracegraph.base.llm.completion import Completion
from tracegraph.base.provenance import docrag
from tracegraph.base.provenance import query as prov
from tracegraph.base.provenance.query import Usage
from tracegraph.base.provenance.passages import chunk_selection_triples, seed_triples
from tracegraph.base.provenance.date_phrases import date_phrase_triples
from tracegraph.base.retrieval.names import question_names
from tracegraph.base.retrieval.passage_graph import passage_graph_of
from tracegraph.base.retrieval.ppr import PassageRanking, PprLimits, rank_passages
from tracegraph.base.retrieval.as_of import tools_as_of
from tracegraph.base.retrieval.staleness import HALF_LIFE_DAYS
from tracegraph.base.retrieval.timeline import Timeline
from tracegraph.base.retrieval.titles import document_titles
from tracegraph.base.retrieval.tools import RetrievalTools, RetrievedChunk
from tracegraph.flow.document_rag import excerpts
from tracegraph.flow.graph_rag.offline_synthesis import ANSWER_PASSAGES, PassageText, passage_answer
from tracegraph.flow.graph_rag.pipeline import Chunk, Explain, Finished, Step, retrieval_text

GROUNDING_METHOD = "the question itself, embedded as one query vector, and the names it mentions"
NOTHING_FOUND_METHOD = "no chunks retrieved: nothing to answer from, no LLM call"
NOTHING_FOUND = ("No documents found: this collection holds no indexed document chunks, so there is nothing to "
                 "answer the question from. Load and process documents into the collection first.")


@dataclass(frozen=True, slots=True)
class Limits:
    """Every default in one place; a request's non-None fields override them."""

    doc_limit: int = 10  # chunks that ground the answer
    fetch_limit: int | None = None  # candidates searched before keeping the best; None = 3 × doc_limit

    @property
    def candidates(self) -> int:
        return max(self.doc_limit, self.fetch_limit or 3 * self.doc_limit)


@dataclass
class _Synthesis:
    text: str = ""
    usage: Usage | None = None
    method: str = ""


def select_chunks(candidates: Sequence[RetrievedChunk], limit: int) -> list[RetrievedChunk]:
    """The first `limit` candidates in their ranked order, skipping repeats of a text already kept
    (the same document loaded twice, or an overlap that covers a whole chunk)."""
    kept: dict[str, RetrievedChunk] = {}
    for chunk in candidates:
        kept.setdefault(" ".join(chunk.text.split()), chunk)
        if len(kept) == limit:
            break
    return list(kept.values())


def retrieval_note(ranking: PassageRanking, chunks: Sequence[RetrievedChunk]) -> str:
    if not chunks:
        return "passage retrieval: the collection has no indexed chunks"
    return (f"{ranking.method}: {ranking.candidates} candidate chunk(s) found by dense and BM25 search, the "
            f"{len(chunks)} best kept (score {chunks[0].score:.2f} to {chunks[-1].score:.2f})")


class DocumentRagPipeline:
    def __init__(self, tools: RetrievalTools, limits: Limits, *, as_of: str | None = None,
                 half_life_days: float = HALF_LIFE_DAYS) -> None:
        self.tools = tools
        self.limits = limits
        self.timeline = Timeline(tools, as_of, half_life_days)

    async def run(self, question: str, *, streaming: bool = False, explain: bool = True,
                  parent_uri: str | None = None, session_id: str | None = None) -> AsyncIterator[Step]:
        """`explain=False` yields no explain events and stores no answer document (nothing would point to it)."""
        question = question.strip()
        if not question:
            raise ConfigError("empty question")
        sid = session_id or str(uuid.uuid4())
        q_uri = docrag.question_uri(sid)
        await self.timeline.read_question(question)
        await self.timeline.prepare()
        self.tools = tools_as_of(self.tools, self.timeline)
        if explain:
            yield Explain(q_uri, [*docrag.question_triples(q_uri, question, prov.now(), parent_uri),
                                  *prov.time_triples(q_uri, self.timeline.as_of, self.timeline.half_life_used),
                                  *date_phrase_triples(q_uri, self.timeline.phrases, self.timeline.applied,
                                                       lambda i: f"{docrag.step_uri('date-phrase', sid)}/{i}",
                                                       self.timeline.not_applied)])
        try:
            async for step in self._answer(sid, q_uri, question, streaming, explain):
                if explain or not isinstance(step, Explain):
                    yield step
        except Exception as exc:
            if explain:
                yield Explain(q_uri, prov.failure_triples(q_uri, str(exc) or type(exc).__name__))
            raise

    async def _answer(self, sid: str, q_uri: str, question: str, streaming: bool, explain: bool
                      ) -> AsyncIterator[Step]:
        g_uri = docrag.step_uri("grounding", sid)
        names = question_names(question)
        yield Explain(g_uri, prov.grounding_triples(g_uri, q_uri, [*names, question], None, GROUNDING_METHOD,
                                                    query=question))

        [vector] = await self.tools.embed([retrieval_text(question)])
        graph = await passage_graph_of(self.tools)
        ranking = await rank_passages(self.tools, graph, retrieval_text(question), vector, names,
                                      self.limits.candidates, PprLimits(candidates=self.limits.candidates))
        weights = await self._weigh(ranking)
        chunks = await self._kept(ranking)
        kept = {c.uri for c in chunks}
        titles = await self._titles(chunks, {p.document: p.title for p in ranking.passages if p.title})
        e_uri = docrag.step_uri("exploration", sid)
        yield Explain(e_uri, [
            *docrag.exploration_triples(e_uri, g_uri, q_uri, [c.uri for c in chunks], retrieval_note(ranking, chunks)),
            *seed_triples(e_uri, ranking.seeds, lambda i: f"{docrag.step_uri('seed', sid)}/{i}"),
            *chunk_selection_triples(e_uri, [p for p in ranking.passages if p.uri in kept],
                                     lambda i: f"{docrag.step_uri('chunk', sid)}/{i}", weights),
            *prov.comment_triples(e_uri, [*self.timeline.notes, *([self.timeline.weighing_note] if weights else [])])])

        synthesis = _Synthesis(text=self.timeline.heading)  # an answer as of a date says so first
        if synthesis.text and streaming:
            yield Chunk(synthesis.text)
        async for piece in self._synthesise(question, vector, chunks, titles, streaming, synthesis):
            synthesis.text += piece.text
            if streaming:  # otherwise the whole answer travels in the final message
                yield piece
        document = docrag.answer_document_uri(sid)
        saved = explain and await self.tools.save_answer(document, f"DocumentRAG Answer: {question[:50]}",
                                                         synthesis.text)
        s_uri = docrag.step_uri("synthesis", sid)
        yield Explain(s_uri, docrag.synthesis_triples(s_uri, e_uri, synthesis.text, document if saved else None,
                                                      synthesis.usage, synthesis.method))
        sources = list(dict.fromkeys((c.document, titles[c.document]) for c in chunks if c.document))
        yield Finished(synthesis.usage or Usage(), sources, synthesis.text)

    async def _weigh(self, ranking: PassageRanking) -> dict[str, float]:
        """Each ranked passage's staleness weight (its document's age, halved when it stated a value
        since superseded), and the passages ranked again by score × weight; {} when nothing weighs."""
        weights = await self.timeline.passage_weights([(p.uri, p.document or None) for p in ranking.passages])
        if weights:
            ranking.passages = sorted(ranking.passages, key=lambda p: p.score * weights[p.uri], reverse=True)
        return weights

    async def _kept(self, ranking: PassageRanking) -> list[RetrievedChunk]:
        """The first `doc_limit` ranked passages with distinct texts. Passages the graph reached
        without a dense hit have no text in hand: it is fetched a window of `doc_limit` at a time,
        and only as far down the ranking as the kept passages reach."""
        limit, passages = self.limits.doc_limit, ranking.passages
        chunks: list[RetrievedChunk] = []
        for start in range(0, len(passages), limit):
            window = passages[start:start + limit]
            missing = [p.uri for p in window if not p.text]
            fetched = {c.uri: c for c in await self.tools.chunks(missing)} if missing else {}
            for p in window:
                text = p.text or (fetched[p.uri].text if p.uri in fetched else "")
                document = p.document or (fetched[p.uri].document if p.uri in fetched else None)
                if text:
                    chunks.append(RetrievedChunk(p.uri, p.score, text, document))
            kept = select_chunks(chunks, limit)
            if len(kept) == limit:
                return kept
        return select_chunks(chunks, limit)

    async def _titles(self, chunks: Sequence[RetrievedChunk], known: dict[str, str]) -> dict[str, str]:
        return await document_titles(self.tools, (c.document for c in chunks if c.document), known)

    async def _synthesise(self, question: str, vector: Sequence[float], chunks: Sequence[RetrievedChunk],
                          titles: dict[str, str], streaming: bool, result: _Synthesis) -> AsyncIterator[Chunk]:
        """Answer chunks; `result` learns how the answer was made and what it cost."""
        if not chunks:
            result.method = NOTHING_FOUND_METHOD
            yield Chunk(NOTHING_FOUND, end_of_stream=True)
            return
        prompt = excerpts.prompt(question, chunks, titles)
        try:
            if streaming:
                done = None
                async for piece in self.tools.stream(excerpts.SYSTEM, prompt):
                    if isinstance(piece, Completion):
                        done = piece
                    else:
                        yield Chunk(piece)
                yield Chunk("", end_of_stream=True)
            else:
                done = await self.tools.complete(excerpts.SYSTEM, prompt)
                yield Chunk(done.text, end_of_stream=True)
        except LlmUnavailable:
            text, result.method = await self._quote(question, vector, chunks, titles)
            yield Chunk(text, end_of_stream=True)
            return
        if done is not None:
            result.usage = Usage(done.in_token, done.out_token, done.model)
        result.method = f"LLM ({done.model if done else 'unknown model'})"

    async def _quote(self, question: str, vector: Sequence[float], chunks: Sequence[RetrievedChunk],
                     titles: dict[str, str]) -> tuple[str, str]:
        """(answer, method) offline: the sentence of the best chunks that best answers the question, quoted
        with its source, then the best sentence of each other chunk (a chunk with no whole sentence, a
        table or a list, is quoted as it is)."""
        passages = [PassageText(c.uri, titles.get(c.document or "", "") or c.document or "", c.text, rank)
                    for rank, c in enumerate(chunks[:ANSWER_PASSAGES])]
        composed = await passage_answer(self.tools, question, vector, passages)
        if composed is None:
            return NOTHING_FOUND, NOTHING_FOUND_METHOD
        return composed.text, composed.method
