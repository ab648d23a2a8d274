"""The four retrieval strategies. Each turns one question into a best-first list of facts (edges of
the knowledge graph) and says how it did; the pipeline fuses the lists. None of them talks to the
bus directly: they use the search tools (flow/search/tools.py) and a shared `Context`."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tracegraph.base.errors import LlmUnavailable, RemoteError
from tracegraph.base.llm.embeddings import unit_rows
from tracegraph.base.provenance.query import Usage
from tracegraph.base.retrieval import nl_sparql
from tracegraph.base.retrieval.passage_graph import passage_graph_of
from tracegraph.base.retrieval.ppr import best_of_each_passage_first, rank_passages
from tracegraph.flow.graph_rag.text_passages import factless
from tracegraph.base.retrieval.relations import RELATION_CUES, content_stems
from tracegraph.base.retrieval.router import Route
from tracegraph.flow.graph_rag.pipeline import skipped
from tracegraph.flow.search.weights import edge_weights
from tracegraph.schemas.rdf import IriTerm, Triple

log = logging.getLogger(__name__)
Texts = Callable[[Sequence[Triple]], Awaitable[list[str]]]


@dataclass(frozen=True, slots=True)
class Limits:
    """Every default in one place; a request's non-None fields override them."""

    top_k: int = 10  # facts the answer rests on
    fetch: int = 30  # candidates each strategy returns
    rerank_pool: int = 40  # fused candidates the reranker rescores
    rrf_k: int = 60
    fusion_weights: tuple[tuple[str, float], ...] | None = None  # None: router.FUSION_WEIGHTS of the query type
    hops: int | None = None  # None: the router's choice for the query type
    vector_entities: int = 8
    triple_limit: int = 40  # edges read around one node
    walk_nodes: int = 60  # nodes the graph walk may expand, in all
    min_weight: float = 0.2  # edges weighing less are pruned from the walk
    hyde_threshold: float = 0.55
    sparql_rows: int = 200
    sparql_timeout: float = 5.0
    ppr_passages: int = 10  # ranked passages whose facts the ppr strategy reads
    per_passage: int = 1  # facts of one passage kept before any other passage's are passed over


@dataclass
class Run:
    """One strategy's result: ranked (fact, score) pairs, what it touched, and what the trace should say."""

    strategy: str
    ranked: list[tuple[Triple, float]] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    fell_back: bool = False
    usage: Usage | None = None

    def to_json(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "ranked": [[t.model_dump(mode="json"), s] for t, s in self.ranked],
                "nodes": self.nodes, "notes": self.notes, "details": self.details, "fell_back": self.fell_back}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Run":
        return cls(data["strategy"], [(Triple.model_validate(t), s) for t, s in data["ranked"]], data["nodes"],
                   data["notes"], data["details"], data["fell_back"])


@dataclass
class Context:
    question: str
    vector: list[float]
    route: Route
    tools: Any  # SearchTools
    limits: Limits
    texts: Texts  # labelled sentences of facts
    labels: dict[str, str]  # IRI -> label, filled as facts are labelled
    sentences: dict[Triple, str]  # fact -> its labelled sentence
    names: list[str]  # entity names found in the question
    named: list[str]  # the entities of those names that exist in the collection (have a label)
    llm: bool


def cosine_to(vector: Sequence[float], vectors: Sequence[Sequence[float]]) -> list[float]:
    if not vectors:
        return []
    m = unit_rows(np.asarray(vectors, dtype=np.float32))
    q = np.asarray(vector, dtype=np.float32)
    return [float(x) for x in m @ (q / max(float(np.linalg.norm(q)), 1e-12))]


async def _around(ctx: Context, nodes: Sequence[str]) -> dict[str, list[Triple]]:
    """The knowledge facts touching each node, in either direction (schema plumbing left out), from
    one neighbourhood request for all of them; a fact between two of the nodes is listed under both."""
    wanted = list(dict.fromkeys(nodes))
    facts: dict[str, list[Triple]] = {node: [] for node in wanted}
    for t in await ctx.tools.around(wanted, ctx.limits.triple_limit) if wanted else ():
        if skipped(t):
            continue
        fact = t.model_copy(update={"g": None}) if t.g else t
        for end in dict.fromkeys(term.iri for term in (t.s, t.o) if isinstance(term, IriTerm)):
            if end in facts:
                facts[end].append(fact)
    return facts


# ---------------------------------------------------------------- vector

async def vector_search(ctx: Context, vector: Sequence[float]) -> tuple[list[tuple[Triple, float]], float]:
    """Nearest entities to `vector`, then the facts around them ranked by their sentence's cosine
    similarity to it; also the best similarity reached (HyDE's trigger)."""
    entities = await ctx.tools.nearest_entities(vector, ctx.limits.vector_entities)
    facts: dict[Triple, None] = {}
    for around in (await _around(ctx, [entity for entity, _ in entities])).values():
        facts.update(dict.fromkeys(around))
    if not facts:
        return [], 0.0
    edges = list(facts)
    similarity = cosine_to(vector, await ctx.tools.embed(await ctx.texts(edges)))
    ranked = sorted(zip(edges, similarity), key=lambda x: x[1], reverse=True)[: ctx.limits.fetch]
    return ranked, ranked[0][1]


HYDE_QUESTION_CHARS = 1000  # of the question, offline, before the keyword hits: it was embedded whole already


@dataclass(frozen=True, slots=True)
class Hypothetical:
    """HyDE's text to embed, and what of it the trace records (never the question again)."""

    text: str
    recorded: str
    method: str
    usage: Usage | None = None


async def hypothetical_document(ctx: Context, keyword_texts: Sequence[str]) -> Hypothetical:
    """HyDE's hypothetical answer: the LLM's, or offline the question followed by the best keyword
    hits (pseudo-relevance feedback), which borrows the graph's own wording the same way. Offline
    the trace records the hits only: the question is the Question's tg:query."""
    if ctx.llm:
        try:
            done = await ctx.tools.complete(
                "Write a short factual paragraph that could answer the question, as a knowledge base would "
                "state it. Invent plausible names if needed; do not hedge.", ctx.question)
            text = done.text.strip()
            return Hypothetical(text, text, f"LLM ({done.model})", Usage(done.in_token, done.out_token, done.model))
        except LlmUnavailable:
            pass
    hits = " ".join(keyword_texts[:3])
    return Hypothetical(" ".join(filter(None, [ctx.question[:HYDE_QUESTION_CHARS], hits])), hits,
                        "offline: pseudo-relevance feedback (the question, then the 3 best keyword hits recorded "
                        "here) in place of an LLM")


async def vector_strategy(ctx: Context, hyde: bool | None, keyword_texts: Sequence[str]) -> Run:
    run = Run("vector")
    ranked, raw = await vector_search(ctx, ctx.vector)
    run.details["raw_similarity"] = round(raw, 4)
    wanted = raw < ctx.limits.hyde_threshold if hyde is None else hyde
    run.details["hyde_applied"] = False
    if wanted:
        hypothetical = await hypothetical_document(ctx, keyword_texts)
        run.usage = hypothetical.usage
        (hyde_vector,) = await ctx.tools.embed([hypothetical.text])
        hyde_ranked, best = await vector_search(ctx, hyde_vector)
        run.details.update(hyde_similarity=round(best, 4), hypothetical_document=hypothetical.recorded[:500])
        run.notes.append(f"HyDE ({hypothetical.method}): raw similarity {raw:.2f} "
                         f"{'below' if raw < ctx.limits.hyde_threshold else 'not below, but asked for'} "
                         f"{ctx.limits.hyde_threshold}; the hypothetical answer reached {best:.2f}")
        if hyde_ranked:
            ranked, run.details["hyde_applied"] = hyde_ranked, True
    run.ranked = ranked
    return run


# ---------------------------------------------------------------- bm25

async def keyword_strategy(ctx: Context) -> Run:
    matches = await ctx.tools.keyword(ctx.question, ctx.limits.fetch)
    run = Run("bm25", [(m.triple.model_copy(update={"g": None}), m.score) for m in matches])
    for fact, m in zip((t for t, _ in run.ranked), matches):  # the index labels its facts: no lookups needed
        ctx.sentences.setdefault(fact, m.text)
    return run


# ---------------------------------------------------------------- graph (local GraphRAG, RSN-04)

def overlap(stems: set[str], text: str) -> int:
    """Shared content words: breaks ties between edges of equal strength and weight."""
    return len(stems & content_stems(text))


def relation_factor(predicate_label: str, asked: set[str], route: Route) -> float:
    """How much the question (its `content_stems`) asks about a predicate: 1 when they share a word
    stem ("owns" and "is owned by"), 0.6 when it is one of the query type's relations, 0.3 otherwise."""
    if asked & content_stems(predicate_label):
        return 1.0
    pattern = RELATION_CUES.get(route.query_type)
    return 0.6 if pattern and pattern.search(predicate_label) else 0.3


HOP_DECAY = 0.7


async def graph_strategy(ctx: Context, seeds: dict[str, float], hops: int) -> Run:
    """Breadth-first from the seed entities over `hops` hops. An edge scores its weight × its
    predicate's `relation_factor` (how much the question asks about it) × the strength of the
    node it was reached from. A seed has strength 1 (named) or its similarity (vector); a node
    reached over an edge has its origin's strength × that factor × 0.7, so a path along asked-for
    relations keeps its strength across hops. Edges under `min_weight` are pruned, not walked."""
    run = Run("graph")
    asked = content_stems(ctx.question)
    strength = dict(seeds)
    scores: dict[Triple, float] = {}
    frontier, visited, method = list(seeds), set(), ""
    for hop in range(1, hops + 1):
        edges: dict[Triple, str] = {}
        walked = [node for node in dict.fromkeys(frontier) if node not in visited]
        walked = walked[: max(0, ctx.limits.walk_nodes - len(visited))]
        visited.update(walked)
        for node, around in (await _around(ctx, walked)).items():
            for t in around:
                edges.setdefault(t, node)
        if not edges:
            break
        texts = dict(zip(edges, await ctx.texts(list(edges))))  # labels for weights, factors, ties
        weights, method = await edge_weights(ctx.tools, list(edges), ctx.labels)
        following: dict[str, float] = {}
        pruned = 0
        for edge, origin in edges.items():
            w = weights[edge]
            if w < ctx.limits.min_weight:
                pruned += 1
                continue
            factor = relation_factor(ctx.labels.get(edge.p.iri, ""), asked, ctx.route)
            score = strength[origin] * w * factor * (1 + 0.05 * overlap(asked, texts.get(edge, "")))
            if score > scores.get(edge, 0.0):
                scores[edge] = score
            other = edge.o if isinstance(edge.s, IriTerm) and edge.s.iri == origin else edge.s
            if isinstance(other, IriTerm) and other.iri not in visited:
                reach = strength[origin] * factor * HOP_DECAY
                following[other.iri] = max(following.get(other.iri, 0.0), reach)
        run.notes.append(f"hop {hop}: {len(edges)} edge(s) around {len(frontier)} node(s), {pruned} pruned "
                         f"under weight {ctx.limits.min_weight}")
        strength.update({n: max(s, strength.get(n, 0.0)) for n, s in following.items()})
        frontier = sorted(following, key=following.get, reverse=True)
    if method:
        run.notes.insert(0, method)
    run.ranked = sorted(scores.items(), key=lambda x: x[1], reverse=True)[: ctx.limits.fetch]
    run.nodes = list(visited)
    return run


# ---------------------------------------------------------------- ppr (passages by personalised PageRank)

async def ppr_strategy(ctx: Context) -> Run:
    """Passages ranked by personalised PageRank over the passage graph (base/retrieval/ppr.py), then
    their facts: the most question-like fact of each passage in passage order, then the rest by
    passage score × similarity. So the fused list keeps one fact per relevant passage — the second
    hop of a multi-hop question included — and every fact resolves to the passage it came from."""
    run = Run("ppr")
    graph = await passage_graph_of(ctx.tools)
    ranking = await rank_passages(ctx.tools, graph, ctx.question, ctx.vector, ctx.names, ctx.limits.ppr_passages)
    run.notes += [*ranking.notes, ranking.method]
    run.details["seeds"] = [(seed.node, seed.weight, seed.reason) for seed in ranking.seeds]
    run.details["top_dense"] = max((p.dense for p in ranking.passages if p.dense is not None), default=0.0)
    run.details["ranks"] = {p.uri: rank for rank, p in enumerate(ranking.passages)}
    run.details["factless"] = factless(graph, ranking.passages) if graph is not None else []
    from_passage: dict[Triple, float] = {}
    order: dict[Triple, int] = {}
    for rank, passage in enumerate(ranking.passages):
        vertex = graph.passage_index.get(passage.uri) if graph is not None else None
        for fact in graph.facts[vertex] if vertex is not None else ():
            from_passage.setdefault(fact, passage.score)
            order.setdefault(fact, rank)
    if not from_passage:
        return run
    facts = list(from_passage)
    similarity = cosine_to(ctx.vector, await ctx.tools.embed(await ctx.texts(facts)))
    scores = {f: from_passage[f] * max(sim, 0.0) for f, sim in zip(facts, similarity)}
    ranked = best_of_each_passage_first(sorted(facts, key=scores.get, reverse=True), order.get)
    run.ranked = [(f, scores[f]) for f in ranked[: ctx.limits.fetch]]
    run.details["ppr"] = {f: from_passage[f] for f, _ in run.ranked}
    run.details["passage"] = {f: ranking.passages[order[f]].uri for f, _ in run.ranked}
    run.nodes = [seed.node for seed in ranking.seeds]
    return run


# ---------------------------------------------------------------- sparql (NL→SPARQL, RSN-01/02)

async def collection_schema(ctx: Context) -> nl_sparql.SchemaSummary:
    rows = []
    for query in nl_sparql.SCHEMA_QUERIES:
        rows.append((await ctx.tools.sparql(query, limit=200, timeout=ctx.limits.sparql_timeout)).bindings)
    return nl_sparql.schema_from_rows(*rows)


async def sparql_strategy(ctx: Context, schema: nl_sparql.SchemaSummary) -> Run:
    """The LLM writes a query from the collection's schema; offline a template does for dependency,
    ownership and factual questions. A query that is not read-only is refused and logged; one that
    is invalid, fails or times out leaves the answer to the other strategies, flagged low-confidence."""
    run = Run("sparql")
    entities = [(e, ctx.labels.get(e, e)) for e in ctx.named]
    query: str | None = None
    if ctx.llm:
        try:
            system, prompt = nl_sparql.generation_prompt(ctx.question, schema, entities)
            done = await ctx.tools.complete(system, prompt)
            run.usage = Usage(done.in_token, done.out_token, done.model)
            query, how = nl_sparql.extract_query(done.text), f"LLM ({done.model})"
        except LlmUnavailable:
            query = None
    if query is None:
        predicates = nl_sparql.choose_predicates(ctx.question, schema, ctx.route.query_type)
        query = nl_sparql.template_query(ctx.route.query_type, [e for e, _ in entities], predicates)
        how = "offline: a query template over the named entities and the predicates the question asks about"
        if query is None:
            run.details["query_status"] = "skipped: no named entity to build a query from"
            return run
    run.details["generated_query"] = query
    run.notes.append(how)
    try:
        safe = nl_sparql.check_read_only(query, ctx.limits.sparql_rows)
    except nl_sparql.UnsafeQuery as exc:
        log.warning("refused a generated SPARQL update for question %r: %s", ctx.question[:200], exc.reason)
        return _fallback(run, f"refused: {exc.reason}")
    except nl_sparql.RejectedQuery as exc:
        return _fallback(run, f"invalid: {exc.reason}")
    try:
        result = await ctx.tools.sparql(safe, limit=ctx.limits.sparql_rows, timeout=ctx.limits.sparql_timeout)
    except RemoteError as exc:
        return _fallback(run, f"failed: {exc.message[:300]}")
    edges = [e.model_copy(update={"g": None}) for e in nl_sparql.edges_from_result(result)]
    if not edges:
        for around in (await _around(ctx, nl_sparql.nodes_from_result(result)[:10])).values():
            edges += around
    edges = [e for e in dict.fromkeys(edges) if not skipped(e)]
    run.ranked = [(e, 1.0 / (1 + i)) for i, e in enumerate(edges[: ctx.limits.fetch])]
    run.details["query_status"] = f"ok: {len(result.bindings) or len(result.triples)} row(s)"
    return run


def _fallback(run: Run, status: str) -> Run:
    run.details["query_status"] = status
    run.fell_back = True
    run.notes.append("fell back to the other strategies (vector retrieval included); answer flagged low-confidence")
    return run
