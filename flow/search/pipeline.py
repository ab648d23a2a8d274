"""The search pipeline: GraphRAG's chain with hardened retrieval in the middle.

Grounding routes the question (rules, or the LLM when configured) and finds the entities it names.
Exploration runs the planned strategies — BM25 first, since offline HyDE borrows its hits, then
vector, graph walk and NL→SPARQL together — each through the cache where its result is a subgraph
query. Focus fuses their lists by RRF and reranks the head. Synthesis answers from the kept facts
and carries the confidence block, which the caller also receives on the last message."""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Sequence

from tracegraph.base.architecture.rules import CodeOwnersShelf
from tracegraph.base.errors import LlmUnavailable
from tracegraph.base.provenance import query as prov
from tracegraph.base.provenance import search as trace
from tracegraph.base.provenance.query import SelectedEdge, Usage
from tracegraph.base.retrieval import router
from tracegraph.base.retrieval.cache import SubgraphCache, cache_key
from tracegraph.base.retrieval.nl_sparql import SchemaSummary
from tracegraph.base.retrieval.confidence import ConfidenceBlock, Support, assess
from tracegraph.base.retrieval.fusion import Fused, reciprocal_rank_fusion
from tracegraph.base.retrieval.rerank import Reranker
from tracegraph.base.retrieval.staleness import HALF_LIFE_DAYS, weighed_score
from tracegraph.flow.graph_rag import text_passages
from tracegraph.flow.graph_rag.focus import with_staleness
from tracegraph.flow.graph_rag.pipeline import (
    Explain, GraphRagPipeline, Synthesised, _Session, merged_sources, retrieval_text,
)
from tracegraph.flow.graph_rag.pipeline import Limits as GraphRagLimits
from tracegraph.base.provenance import passages as passages_trace
from tracegraph.base.provenance.passages import seed_triples
from tracegraph.base.provenance.global_search import typed_question_triples
from tracegraph.base.provenance.vocab import PROV, TG
from tracegraph.base.retrieval.grounding import ground
from tracegraph.base.retrieval.unknown_names import unknown_reason
from tracegraph.base.retrieval.passage_graph import passage_graph_of, passages_of
from tracegraph.base.retrieval.ppr import Seed
from tracegraph.flow.search import strategies as st
from tracegraph.flow.search.global_search import GlobalAnswer, ReportShelf
from tracegraph.flow.search.architecture_answers import architecture_answer
from tracegraph.flow.search.raptor_search import RaptorAnswer, TreeShelf
from tracegraph.flow.search.results import EvidenceItem, SearchFinished, synthesis_step
from tracegraph.flow.search.strategies import Context, Limits, Run
from tracegraph.schemas.rdf import Triple, fact_key, iri, node_iris

# A node every graph update touches: entries that depend on the whole collection (its schema) use it.
ANY_CHANGE = "urn:tracegraph:cache:any-change"
NOT_CACHED = ("vector", "bm25", "ppr")  # index lookups (ppr: over the passage graph, which has its own cache)


class RememberedEmbeddings:
    """One request's retrieval tools, whose `embed` remembers each text's vector: the question is
    embedded once, though the strategies' context and a bi-encoder reranker both ask for it. Every
    other call goes to the tools themselves."""

    def __init__(self, tools) -> None:
        self.tools = tools
        self.vectors: dict[str, list[float]] = {}

    def __getattr__(self, name: str):
        return getattr(self.tools, name)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, await self.tools.embed(missing)))
        return [self.vectors[t] for t in texts]


class SearchPipeline(GraphRagPipeline):
    def __init__(self, tools, limits: Limits, *, reranker: Reranker, cache: SubgraphCache | None = None,
                 scope: tuple[str, str] = ("default", "default"), strategies: Sequence[str] | None = None,
                 hyde: bool | None = None, global_search: bool | None = None, shelf: ReportShelf | None = None,
                 tree: TreeShelf | None = None, as_of: str | None = None, half_life_days: float = HALF_LIFE_DAYS,
                 codeowners: CodeOwnersShelf | None = None) -> None:
        super().__init__(tools, GraphRagLimits(), as_of=as_of, half_life_days=half_life_days)
        self.search_limits = limits
        self.reranker, self.cache, self.scope = reranker, cache, scope
        self.strategies, self.hyde = tuple(strategies) if strategies else None, hyde
        self.global_search = global_search  # None: when the router finds the question strategic
        self.shelf, self.tree = shelf or ReportShelf(), tree or TreeShelf()
        self.codeowners = codeowners or CodeOwnersShelf()

    def question_triples(self, q_uri: str, question: str, parent_uri: str | None) -> list[Triple]:
        return [*super().question_triples(q_uri, question, parent_uri), *trace.search_question_triples(q_uri)]

    def cannot_stand_at_a_date(self) -> str:
        """Community reports and the RAPTOR tree summarise the current graph: an answer asked of them
        cannot stand at the date in the question's words."""
        if self.strategies in (("global",), ("raptor",)) or self.global_search:
            return (f"{self.strategies[0] if self.strategies else 'global'} answers from summaries of the current "
                    "graph, which cannot be read as of a date")
        return ""

    async def _answer(self, session, q_uri: str, question: str, streaming: bool) -> AsyncIterator:
        sid, limits = session.sid, self.search_limits
        searched = retrieval_text(question)  # what routing and every strategy read of it
        route, usage = await self._route(searched)
        route = router.as_of_a_date(route, searched) if self.timeline.as_of else route
        session.usage += usage or Usage()
        planned = self.strategies or route.strategies
        ctx = await self.context(searched, route, session)
        g_uri = prov.step_uri("grounding", sid)
        grounding = [*prov.grounding_triples(g_uri, q_uri, [*ctx.names, question], usage, route.method, query=question),
                     *prov.comment_triples(g_uri, self.grounding.notes())]
        answered_by = await self._answered_by(route)
        if answered_by:
            kind = TG.GlobalQuestion if answered_by == "global" else TG.RaptorQuestion
            yield Explain(g_uri, [*grounding, *trace.routing_triples(g_uri, route.query_type, [answered_by]),
                                  *typed_question_triples(q_uri, kind)])
            answer = (GlobalAnswer(self, self.shelf) if answered_by == "global" else RaptorAnswer(self, self.tree))
            async for step in answer.steps(session, q_uri, question, searched, g_uri, route.query_type, streaming):
                yield step
            return
        # "who owns quasar?" names quasar though it gives no capital: the run of words a relation asks about
        unknown = await self.unknown(asked=route.query_type in ("ownership", "dependency", "memory"))
        if unknown:  # no facts about other things: the answer says what the collection does not know
            yield Explain(g_uri, [*grounding, *trace.routing_triples(g_uri, route.query_type, [])])
            done = Synthesised()
            async for step in self._unknown_steps(session, q_uri, g_uri, unknown, streaming, done):
                yield step
            block = ConfidenceBlock(0.0, [], 0, [], True, {}, (unknown_reason(unknown),))
            yield await synthesis_step(self.tools, sid, prov.step_uri("focus", sid), f"Search Answer: {question[:50]}",
                                       done, block)
            yield SearchFinished(session.usage, [], done.answer, block, (), route.query_type)
            return
        records = None if self.strategies else \
            await architecture_answer(self, route.query_type, searched, ctx.names)
        if records is not None:  # an ownership or "why" question the architecture records answer
            yield Explain(g_uri, [*grounding, *trace.routing_triples(g_uri, route.query_type, [records.strategy])])
            async for step in records.steps(session, q_uri, question, searched, g_uri, route.query_type, streaming):
                yield step
            return
        yield Explain(g_uri, [*grounding, *trace.routing_triples(g_uri, route.query_type, planned)])

        runs, records = await self.retrieve(ctx, planned, limits.hops or route.hops)
        for run in runs.values():
            session.usage += run.usage or Usage()
        weights = dict(limits.fusion_weights) if limits.fusion_weights is not None else \
            router.FUSION_WEIGHTS.get(route.query_type, {})
        fused = reciprocal_rank_fusion({n: [t for t, _ in r.ranked] for n, r in runs.items() if r.ranked}, limits.rrf_k,
                                       weights={n: w for n, w in weights.items() if n in runs})
        seeds = list(dict.fromkeys([*ctx.named, *(runs["graph"].nodes[:10] if "graph" in runs else [])]))
        ppr_seeds = [Seed(*seed) for seed in runs["ppr"].details.pop("seeds", [])] if "ppr" in runs else []
        ppr_scores = runs["ppr"].details.pop("ppr", {}) if "ppr" in runs else {}
        e_uri = prov.step_uri("exploration", sid)
        yield Explain(e_uri, [*prov.exploration_triples(e_uri, g_uri, len(fused), seeds),
                              prov.retrieval_triple(e_uri, PROV.wasGeneratedBy, iri(q_uri)),
                              *seed_triples(e_uri, ppr_seeds, lambda i: prov.seed_uri(sid, i)),
                              *trace.strategy_triples(e_uri, sid, records), *self.time_notes(e_uri)])

        passages = await self._passages(runs, fused[: limits.rerank_pool])
        kept = await self.rerank(ctx, fused, passages)
        ranks = runs["ppr"].details.pop("ranks", {}) if "ppr" in runs else {}
        self.texts = await text_passages.read(self.tools, runs["ppr"].details.pop("factless", [])) \
            if "ppr" in runs else []
        self.question_vector = ctx.vector
        selected = [SelectedEdge(f.key.s, f.key.p, f.key.o, reasoning=_reason(f, score, rank), score=score,
                                 ppr=ppr_scores.get(f.key))
                    for rank, (f, score) in enumerate(kept, start=1)]
        staleness = await self.timeline.edge_weights([f.key for f, _ in kept])  # read by rerank: no query
        selected = with_staleness(selected, staleness)
        f_uri = prov.step_uri("focus", sid)
        weighing = ", ".join(f"{n} ×{w:g}" for n, w in weights.items() if n in runs)
        focus = prov.focus_triples(f_uri, e_uri, sid, selected, None,
                                   f"RRF (k={limits.rrf_k}) over {', '.join(runs) or 'no strategy'}"
                                   + (f" weighted for a {route.query_type} question ({weighing})" if weighing else "")
                                   + f", then reranked by {self.reranker.name}",
                                   [self.timeline.weighing_note] if staleness else [])
        for index, (f, _) in enumerate(kept):
            focus += trace.selection_detail_triples(prov.edge_selection_uri(sid, index), f.score, list(f.ranks))
        yield Explain(f_uri, [*focus, *trace.fusion_triples(f_uri, limits.rrf_k, self.reranker.name),
                              *passages_trace.chunk_selection_triples(
                                  f_uri, self.texts, lambda i: f"{prov.step_uri('chunk', sid)}/{i}"),
                              *([] if selected or self.texts else prov.nothing_found_triples(
                                  f_uri, "no strategy found a fact related to the question"))])

        done = Synthesised()
        async for chunk in self._synthesis(session, question, selected, streaming, done):
            yield chunk
        answer = done.answer
        documents = await self._documents_per_edge(selected)
        evidence = [EvidenceItem(f.key, ctx.sentences.get(f.key, ""), score, f.score, dict(f.ranks), sorted(found))
                    for (f, score), found in zip(kept, documents)]
        evidence.sort(key=lambda e: -e.score)  # in the order of the score each item shows
        block = assess([Support(e.score, len(e.ranks), frozenset(e.sources),
                                tuple(node_iris([e.triple])))
                        for e in evidence], [n for n, r in runs.items() if r.ranked],
                       any(r.fell_back for r in runs.values()),
                       grounding=len(ctx.named) / len(ctx.names) if ctx.names else 0.0,
                       focus=runs["ppr"].details.pop("top_dense", 0.0) if "ppr" in runs else 0.0,
                       question=searched, sentences=[e.text for e in evidence])
        yield await synthesis_step(self.tools, sid, f_uri, f"Search Answer: {question[:50]}", done, block)
        ranked_at: dict[str, float] = {}
        for (f, _), found in zip(kept, documents):
            for document in found:
                rank = ranks.get(passages.get(f.key, ""), math.inf)
                ranked_at[document] = min(ranked_at.get(document, math.inf), rank)
        sources = text_passages.interleaved(text_passages.in_walk_order(merged_sources(documents), ranked_at),
                                            ranked_at, self.texts, ranks)
        yield SearchFinished(session.usage, sources, answer, block, tuple(evidence),
                             route.query_type)

    async def _answered_by(self, route: router.Route) -> str | None:
        """"global" or "raptor" when one of them answers instead of the hybrid strategies: when asked
        for, or for a strategic question (unless the request said `global: false`) in a collection
        that has community reports."""
        if self.strategies in (("global",), ("raptor",)):
            return self.strategies[0]
        if self.global_search:
            return "global"
        if self.timeline.as_of:  # community reports summarise the current graph: they have no past
            return None
        if self.global_search is None and self.strategies is None and route.query_type == "strategic":
            return "global" if await self.shelf.reports(self.scope, self.tools) else None
        return None

    async def context(self, question: str, route: router.Route, session: _Session | None = None) -> Context:
        """What every strategy starts from: the entities the question names, and its embedding (the
        pipeline passes the question's `retrieval_text`)."""
        session = session or _Session(str(uuid.uuid4()))
        self.grounding = await ground(self.tools, question)
        session.labels.update({m.entity: m.label for m in self.grounding.matches})
        (vector,) = await self.tools.embed([question])
        return Context(question, vector, route, self.tools, self.search_limits, self._texts_for(session),
                       session.labels, {}, self.grounding.names, self.grounding.entities, self.llm)

    async def _route(self, question: str) -> tuple[router.Route, Usage | None]:
        rules = await asyncio.to_thread(router.route_by_rules, question)  # may read spaCy's model once
        if not self.llm:
            return rules, None
        try:
            done = await self.tools.complete(router.ROUTER_SYSTEM, question)
        except LlmUnavailable:
            self.llm = False
            return rules, None
        usage = Usage(done.in_token, done.out_token, done.model)
        chosen = router.parse_route(done.text)
        if chosen is None:
            return router.Route(rules.query_type, rules.strategies, rules.hops,
                                f"{rules.method} (the LLM's reply named no query type)"), usage
        return router.plan(chosen, f"LLM ({done.model}) classified it"), usage

    def _texts_for(self, session) -> Callable[[Sequence[Triple]], Awaitable[list[str]]]:
        async def texts(edges: Sequence[Triple]) -> list[str]:
            await self._fetch_labels(session, [term for e in edges for term in (e.s, e.p, e.o)])
            return [" ".join([await self._label(session, e.s), await self._label(session, e.p),
                              await self._label(session, e.o)]) for e in edges]
        return texts

    async def retrieve(self, ctx: Context, planned: Sequence[str], hops: int) -> tuple[dict[str, Run], list]:
        """Every planned strategy's run, and the trace's record of each. A failed NL→SPARQL step
        brings in vector retrieval if it was not planned."""
        runs: dict[str, Run] = {}
        records: dict[str, trace.StrategyRecord] = {}

        async def one(name: str, compute: Callable[[], Awaitable[Run]], params: dict) -> None:
            runs[name], records[name] = await self._cached(ctx, name, compute, params)

        keyword_texts: list[str] = []
        if "bm25" in planned:
            await one("bm25", lambda: st.keyword_strategy(ctx), {})
            keyword_texts = [ctx.sentences[fact] for fact, _ in runs["bm25"].ranked[:3]]
        question = " ".join(ctx.question.lower().split())
        jobs = []
        if "vector" in planned:
            jobs.append(one("vector", lambda: st.vector_strategy(ctx, self.hyde, keyword_texts), {}))
        if "graph" in planned:
            jobs.append(one("graph", lambda: self._graph(ctx, hops),
                            {"q": question, "hops": hops, "type": ctx.route.query_type, "seeds": ctx.named}))
        if "ppr" in planned:
            jobs.append(one("ppr", lambda: st.ppr_strategy(ctx), {}))
        if "sparql" in planned:
            jobs.append(one("sparql", lambda: self._sparql(ctx),
                            {"q": question, "type": ctx.route.query_type, "llm": ctx.llm, "seeds": ctx.named}))
        await asyncio.gather(*jobs)
        if any(r.fell_back for r in runs.values()) and "vector" not in runs:
            await one("vector", lambda: st.vector_strategy(ctx, self.hyde, keyword_texts), {})
        if self.timeline.kept:
            await self._held(runs)
        order = [n for n in ("ppr", "graph", "sparql", "bm25", "vector") if n in runs]
        return {n: runs[n] for n in order}, [records[n] for n in order]

    async def _held(self, runs: dict[str, Run]) -> None:
        """Every strategy keeps the facts that held at the answer's time (Timeline.holding): as of a
        date the walk and keyword search already read them so, but NL→SPARQL reads the current graph,
        and the ppr strategy, at any time, the facts passages stated, some since superseded. The
        records read here are the ones the staleness weights need: no second query."""
        held = {fact_key(t) for t in await self.timeline.holding([t for r in runs.values() for t, _ in r.ranked])}
        for run in runs.values():
            run.ranked = [(t, score) for t, score in run.ranked if fact_key(t) in held]

    async def _graph(self, ctx: Context, hops: int) -> Run:
        seeds = {e: 1.0 for e in ctx.named}
        for entity, similarity in await self.tools.nearest_entities(ctx.vector, 3):
            seeds.setdefault(entity, max(similarity, 0.0))
        return await st.graph_strategy(ctx, seeds, hops)

    async def _sparql(self, ctx: Context) -> Run:
        schema = await self._cached_value(ctx, "schema", lambda: st.collection_schema(ctx))
        return await st.sparql_strategy(ctx, schema)

    async def _cached(self, ctx: Context, name: str, compute: Callable[[], Awaitable[Run]],
                      params: dict) -> tuple[Run, trace.StrategyRecord]:
        started = time.perf_counter()
        use = self.cache is not None and name not in NOT_CACHED
        as_of = {"as-of": self.timeline.as_of} if self.timeline.as_of else {}
        key = cache_key(self.scope, name, {**params, **as_of, "limits": repr(ctx.limits)}) if use else ""
        hit = await self.cache.get(self.scope, key) if use else None
        run = Run.from_json(hit) if hit is not None else await compute()
        if use and hit is None and not run.fell_back:
            nodes = [*run.nodes, *node_iris(t for t, _ in run.ranked), *ctx.named]
            await self.cache.put(self.scope, key, run.to_json(), nodes)
        elapsed = round((time.perf_counter() - started) * 1000)
        notes = [*run.notes, f"served from the {self.cache.name} cache"] if hit is not None else run.notes
        return run, trace.StrategyRecord(name, len(run.ranked), elapsed, hit is not None, notes, run.details)

    async def _cached_value(self, ctx: Context, name: str, compute):
        """A collection-wide value (the schema summary), invalidated by any change to the collection."""
        if self.cache is None:
            return await compute()
        key = cache_key(self.scope, name, {})
        hit = await self.cache.get(self.scope, key)
        if hit is not None:
            return SchemaSummary.from_json(hit)
        value = await compute()
        await self.cache.put(self.scope, key, value.to_json(), [ANY_CHANGE])
        return value

    async def _passages(self, runs: dict[str, Run], pool: Sequence[Fused[Triple]]) -> dict[Triple, str]:
        """The passage each candidate fact came from: the one `ppr` read it in, else the first passage
        of the collection that states it (so facts of one passage share a group whoever found them)."""
        found = dict(runs["ppr"].details.pop("passage", {})) if "ppr" in runs else {}
        missing = [f.key for f in pool if f.key not in found]
        graph = await passage_graph_of(self.tools) if missing else None
        if graph is not None:
            for fact, vertices in passages_of(graph, missing).items():
                if vertices:
                    found[fact] = graph.passages[vertices[0]]
        return found

    async def rerank(self, ctx: Context, fused: Sequence[Fused[Triple]], passages: dict[Triple, str] | None = None
                     ) -> list[tuple[Fused[Triple], float]]:
        """The head of the fused list rescored by the reranker; the best `top_k` are kept. A
        cross-encoder's order is final. A bi-encoder only scores what vector search already scored,
        so its order is one vote beside the fused order (weighted RRF, fusion counting twice): on the
        retrieval benchmark it alone drops multi-hop recall to vector search's."""
        pool = list(fused[: ctx.limits.rerank_pool])
        if not pool:
            return []
        weights = await self.timeline.edge_weights([f.key for f in pool])
        weight = [weights[fact_key(f.key)].weight if weights else 1.0 for f in pool]
        if weights:  # fused scores weighed by age before anything is ranked by them
            order = sorted(range(len(pool)), key=lambda i: pool[i].score * weight[i], reverse=True)
            pool, weight = [pool[i] for i in order], [weight[i] for i in order]
        texts = await ctx.texts([f.key for f in pool])
        for f, text in zip(pool, texts):
            ctx.sentences.setdefault(f.key, text)
        scores = [weighed_score(s, w) for s, w in zip(await self.reranker.scores(ctx.question, texts), weight)]
        by_reranker = sorted(range(len(pool)), key=lambda i: (scores[i], pool[i].score), reverse=True)
        if getattr(self.reranker, "decisive", False):
            order = by_reranker
        else:
            votes = reciprocal_rank_fusion({"fusion": list(range(len(pool))), "reranker": by_reranker},
                                           ctx.limits.rrf_k, weights={"fusion": 2.0})
            order = [v.key for v in votes]
        order = spread(order, [(passages or {}).get(f.key) for f in pool], ctx.limits.per_passage, ctx.limits.top_k)
        return [(pool[i], scores[i]) for i in order]


def spread(order: Sequence[int], groups: Sequence[Hashable | None], per_group: int, limit: int) -> list[int]:
    """The first `limit` of `order`, taking at most `per_group` items of one group (the passage a fact
    came from) before any item beyond that; items of no known group are never held back. So a
    passage rich in facts cannot crowd out the other passages the answer needs.

    >>> spread([0, 1, 2, 3, 4], [7, 7, 7, None, 8], per_group=2, limit=4)
    [0, 1, 3, 4]
    """
    taken: dict[Hashable, int] = {}
    first, later = [], []
    for i in order:
        group = groups[i]
        if group is None or taken.get(group, 0) < per_group:
            first.append(i)
            if group is not None:
                taken[group] = taken.get(group, 0) + 1
        else:
            later.append(i)
    return (first + later)[:limit]


def _reason(f: Fused[Triple], score: float, rank: int) -> str:
    found = ", ".join(f"{name} #{r}" for name, r in f.ranks.items())
    return f"found by {found}; RRF score {f.score:.4f}; reranked #{rank} with score {score:.3f}"
