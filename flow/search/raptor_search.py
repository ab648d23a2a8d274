"""RAPTOR answers (RSN-05): walk the collection's summary tree (kept by the raptor processor in
urn:graph:raptor) from the overview down, expanding only branches relevant enough to the question,
then answer from the summaries the walk went through and the best passages: those under the
expanded branches, and the question's nearest passages by vector search (labelled as such).

The trace records every node the walk scored and whether it went below it (Exploration), the
summaries and passages kept (Focus), and the answer (Synthesis). Each summary is derived from its
children down to chunks, and each chunk resolves through urn:graph:source to its document."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import numpy as np

from tracegraph.base.provenance import global_search as trace
from tracegraph.base.provenance import query as prov
from tracegraph.base.provenance.vocab import PROV, RDFS
from tracegraph.base.raptor.rdf import read_tree
from tracegraph.base.raptor.tree import Tree, walk
from tracegraph.base.retrieval.confidence import ConfidenceBlock
from tracegraph.base.retrieval.global_map import lead
from tracegraph.base.retrieval.held import Shelf
from tracegraph.base.retrieval.titles import document_titles
from tracegraph.base.stores.protocol import RAPTOR_GRAPH
from tracegraph.flow.graph_rag.pipeline import Chunk, Explain, Synthesised
from tracegraph.flow.search.results import SearchFinished, WholeAnswer, synthesis_step
from tracegraph.schemas.rdf import IriTerm, literal

MAX_ROWS = 1_000_000
SYSTEM = ("Answer the question from the summaries and passages given. Summaries describe whole parts of the "
          "collection; passages are quoted from its documents. If they do not contain the answer, say so.")


@dataclass(frozen=True, slots=True)
class RaptorLimits:
    threshold: float = 0.3  # a branch less similar to the question is not expanded
    beam: int = 3  # branches expanded per node at most
    relative: float = 0.9  # ... and only those within this share of the best sibling's score
    passages: int = 5  # passages kept for the answer
    summaries: int = 3  # summaries kept for the answer


class TreeShelf(Shelf[Tree]):
    """Each collection's RAPTOR tree."""

    async def tree(self, scope: tuple[str, str], tools) -> Tree:
        return await self.held(scope, tools)

    async def read(self, tools) -> Tree:
        return read_tree(await tools.match(g=RAPTOR_GRAPH, limit=MAX_ROWS))


class RaptorAnswer(WholeAnswer):
    """One answer from the RAPTOR tree."""

    def __init__(self, pipeline, shelf: TreeShelf, limits: RaptorLimits = RaptorLimits()) -> None:
        super().__init__(pipeline, shelf, limits)

    async def steps(self, session, q_uri: str, question: str, searched: str, g_uri: str, query_type: str,
                    streaming: bool) -> AsyncIterator:
        sid, tools, limits = session.sid, self.p.tools, self.limits
        tree = await self.shelf.tree(self.p.scope, tools)
        (vector,) = await tools.embed([searched])
        query = np.asarray(vector, dtype=np.float32)
        walked = walk(tree, query, threshold=limits.threshold, beam=limits.beam, relative=limits.relative)
        e_uri = prov.step_uri("exploration", sid)
        note = (f"walked the RAPTOR tree top-down: {len(walked.visits)} node(s) scored, "
                f"{sum(v.expanded for v in walked.visits)} expanded, {len(walked.candidate_chunks)} passage(s) reached"
                if tree.nodes else "the collection has no RAPTOR tree yet: the raptor processor builds it as "
                                   "documents arrive (tg-rebuild-communities --raptor builds it now)")
        visits = walked.visits
        yield Explain(e_uri, [*prov.exploration_triples(e_uri, g_uri, 0, []),
                              prov.retrieval_triple(e_uri, PROV.wasGeneratedBy, IriTerm(iri=q_uri)),
                              prov.retrieval_triple(e_uri, RDFS.comment, literal(note)),
                              *trace.tree_visit_triples(e_uri, sid, visits, limits.threshold),
                              *([] if tree.nodes else prov.nothing_found_triples(e_uri, "the collection has no RAPTOR tree"))])

        summaries = sorted((v for v in visits if v.expanded), key=lambda v: (v.level, -v.score))[: limits.summaries]
        passages = await self._passages(list(walked.candidate_chunks), query, vector)
        f_uri = prov.step_uri("focus", sid)
        method = (f"the {len(summaries)} expanded summaries nearest the overview, and the {len(passages)} passages "
                  f"most similar to the question among those under expanded branches and the nearest by vector search")
        yield Explain(f_uri, [*prov.focus_triples(f_uri, e_uri, sid, [], None, method),
                              *trace.node_selection_triples(f_uri, sid, summaries),
                              *trace.chunk_selection_triples(f_uri, sid, [(c.uri, s, why) for c, s, why in passages]),
                              *([] if summaries or passages else prov.nothing_found_triples(
                                  f_uri, "no summary or passage related to the question"))])

        done = Synthesised()
        texts = [tree.nodes[v.node_id].summary for v in summaries]
        async for piece in self.p._collect(session, self._reduce(question, texts, passages, streaming), streaming, done):
            yield piece
        documents = await self._documents(passages)
        density = len(set(documents.values()))
        best = passages[0][1] if passages else 0.0
        block = ConfidenceBlock(round(min(1.0, 0.7 * max(best, 0.0) + 0.3 * min(1.0, density / 3)), 2),
                                [c.uri for c, _, _ in passages], density, ["raptor"], density <= 1)
        yield await synthesis_step(tools, sid, f_uri, f"RAPTOR Answer: {question[:50]}", done, block)
        titles = await document_titles(tools, documents.values())
        sources = list(titles.items())
        yield SearchFinished(session.usage, sources, done.answer, block, (), query_type)

    async def _passages(self, reached: Sequence[str], query: np.ndarray, vector) -> list[tuple]:
        """The passages the answer quotes, best first, as (RetrievedChunk, cosine, reason): those under
        the expanded clusters, and the question's nearest passages by vector search, which a walk
        routed by cluster centroids can miss (bench/raptor.py: alone, it finds far fewer)."""
        found = {c.uri: c for c in await self.p.tools.chunks(reached)}
        for chunk in await self.p.tools.nearest_chunks(vector, self.limits.passages):
            found.setdefault(chunk.uri, chunk)
        found = {uri: c for uri, c in found.items() if c.text}
        if not found:
            return []
        chunks = list(found.values())
        vectors = np.asarray(await self.p.tools.embed([c.text for c in chunks]), dtype=np.float32)
        scores = vectors @ query
        under = set(reached)
        return [(chunks[i], float(scores[i]),
                 f"similarity {scores[i]:.3f} to the question; "
                 + ("under an expanded branch" if chunks[i].uri in under
                    else "a nearest passage by vector search, in a branch the walk did not expand"))
                for i in np.argsort(-scores, kind="stable")[: self.limits.passages]]

    async def _reduce(self, question: str, summaries: Sequence[str], passages, streaming: bool):
        if self.p.llm and (summaries or passages):
            prompt = "\n".join([f"Question: {question}", "", "Summaries:", *[f"- {s}" for s in summaries], "",
                                "Passages:", *[f"- {c.text}" for c, _, _ in passages]])
            async for piece in self.p._generate(SYSTEM, prompt, streaming):
                yield piece
            if self.p.llm:
                return
        yield Chunk(offline_answer(summaries, [c.text for c, _, _ in passages]), end_of_stream=True)

    async def _documents(self, passages) -> dict[str, str]:
        """Chunk IRI -> document IRI, as the vector store recorded it."""
        return {c.uri: c.document for c, _, _ in passages if c.document}


def offline_answer(summaries: Sequence[str], passages: Sequence[str]) -> str:
    """The walk's summaries (overview first) and the best passages' opening sentences, labelled."""
    if not summaries and not passages:
        return "Offline answer (no LLM configured): the RAPTOR tree holds nothing related to the question."
    lines = ["Offline answer (no LLM configured), from the RAPTOR tree's summaries and passages nearest the question:"]
    lines += [f"- Summary: {lead(s)}" for s in summaries]
    lines += [f"- Passage: {lead(p)}" for p in passages]
    return "\n".join(lines)
