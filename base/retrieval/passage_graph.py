"""The passage graph: a collection's passages (chunks) and the entities they mention, as one
undirected graph, so a walk can go entity → passage → entity and hop through documents.

It is derived from extraction provenance, not stored apart: every subgraph `tg:contains` the facts
extracted from its chunk, so a chunk mentions the entities of those facts. A passage also links to
the entity its document's title names, and to that name without its qualifier ("B Boy (song)" →
"B Boy"), which is how a mention elsewhere reaches the passage about it. Names are matched by their
normalised form (the entity IRI's slug: case, accents and punctuation folded).

Edge weights favour rare entities (1 / ln(1 + passages that mention it)), so "United States"
does not tie half the corpus together; title links count TITLE_WEIGHT times a mention.

Each chunk's rows become one Passage, and the graph is assembled from Passages: a change to some
chunks re-reads only theirs (base/retrieval/passage_upkeep.py) and gives the graph a full build would.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import truediv

import igraph

from tracegraph.base.errors import RemoteError

from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import DC, PROV, TG, is_knowledge, is_provenance_node
from tracegraph.base.stores.protocol import SOURCE_GRAPH
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Triple, iri

log = logging.getLogger(__name__)
TITLE_WEIGHT = 3.0
# "X is a film" names a category, not a thing a walk should hop through: every film would lead to every other
KIND_OF = relation_uri("is a")
MAX_ROWS = 1_000_000
CHUNK_BATCH = 200  # chunks per VALUES block when only some are read



def _only(chunks: Sequence[str] | None) -> str:
    """A VALUES block restricting ?chunk to `chunks` ("" for every chunk of the collection)."""
    return "" if chunks is None else f"VALUES ?chunk {{ {' '.join(str(iri(c)) for c in chunks)} }} "


def facts_query(chunks: Sequence[str] | None = None) -> str:
    return (f"SELECT ?chunk ?s ?p ?o WHERE {{ {_only(chunks)}GRAPH <{SOURCE_GRAPH}> {{ "
            f"?sg <{TG.contains.iri}> <<( ?s ?p ?o )>> . ?sg <{PROV.wasDerivedFrom.iri}> ?chunk . }} }}")


def mentions_query(chunks: Sequence[str] | None = None) -> str:
    return (f"SELECT DISTINCT ?chunk ?e WHERE {{ {_only(chunks)}GRAPH <{SOURCE_GRAPH}> {{ "
            f"?sg <{TG.mentions.iri}> ?e . ?sg <{PROV.wasDerivedFrom.iri}> ?chunk . }} }}")


def passages_query(chunks: Sequence[str] | None = None) -> str:
    return (f"SELECT ?chunk ?doc ?title WHERE {{ {_only(chunks)}GRAPH <{SOURCE_GRAPH}> {{ "
            f"?chunk a <{TG.Chunk.iri}> ; <{PROV.wasDerivedFrom.iri}> ?parent . "
            f"OPTIONAL {{ ?parent a <{TG.Page.iri}> ; <{PROV.wasDerivedFrom.iri}> ?grand }} }} "
            f"BIND(COALESCE(?grand, ?parent) AS ?doc) OPTIONAL {{ ?doc <{DC.title.iri}> ?title }} }}")


FACTS_QUERY, MENTIONS_QUERY, PASSAGES_QUERY = facts_query(), mentions_query(), passages_query()

_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")


def without_qualifier(title: str) -> str:
    """A title's name without its trailing parenthetical.

    >>> without_qualifier("B Boy (song)"), without_qualifier("Paris")
    ('B Boy', 'Paris')
    """
    return _QUALIFIER.sub("", title).strip() or title


def title_entities(title: str) -> list[str]:
    """The entity IRIs a document title names: the whole title and, if it has one, the name without its
    qualifier, each also without a leading article (extraction names "The Beatles" Beatles).

    >>> [e.rsplit("/", 1)[1] for e in title_entities("The Beatles (band)")]
    ['the-beatles-band', 'beatles-band', 'the-beatles', 'beatles']
    """
    names = [n for t in (title, without_qualifier(title)) for n in (t, _ARTICLE.sub("", t))]
    return list(dict.fromkeys(entity_uri(n) for n in names if n.strip()))


_ARTICLE = re.compile(r"^(?:the|a|an)\s+(?=\S)", re.IGNORECASE)


@dataclass
class PassageGraph:
    """Vertices 0..len(passages)-1 are passages, the rest entities; `facts[i]` are passage i's facts."""

    graph: igraph.Graph
    passages: list[str]
    documents: list[str]
    titles: list[str]
    entities: list[str]
    facts: list[list[Triple]]
    mentions: dict[str, int] = field(default_factory=dict)  # entity IRI -> passages that link to it
    built: float = field(default_factory=time.monotonic)
    fact_passages: dict[Triple, list[int]] | None = None  # see passages_of

    def __post_init__(self) -> None:
        self.passage_index = dict(zip(self.passages, range(len(self.passages))))
        self.entity_index = dict(zip(self.entities, range(len(self.passages), len(self.passages) + len(self.entities))))

    @property
    def empty(self) -> bool:
        return not self.passages

    def personalised_pagerank(self, reset: dict[int, float], damping: float) -> list[float]:
        """Each vertex's visiting probability for a walk that restarts at `reset` (vertex -> weight)."""
        if not reset or self.graph.ecount() == 0:
            return [0.0] * self.graph.vcount()
        weights = [0.0] * self.graph.vcount()
        for vertex, weight in reset.items():
            weights[vertex] += max(weight, 0.0)
        return self.graph.personalized_pagerank(directed=False, damping=damping, reset=weights, weights="weight")


@dataclass(frozen=True, slots=True)
class Passage:
    """One chunk's rows, everything the graph needs of it: its document and title, its facts, the
    entities its subgraphs mention, and the weighted links that follow from them (entity -> weight
    before rarity). Kept per chunk, so a change to one chunk is applied without reading the others."""

    document: str
    title: str
    facts: tuple[Triple, ...]
    links: dict[str, float]


def passage(document: str, title: str, facts: Iterable[Triple], mentions: Iterable[str] = ()) -> Passage:
    """A chunk's record: metadata facts dropped, categories ("X is a film") not linked, title links
    weighing TITLE_WEIGHT."""
    kept = tuple(dict.fromkeys(f for f in facts if is_knowledge(f)))
    categories = _categories(kept)
    links: dict[str, float] = {}
    for entity in mentions:
        if entity not in categories:
            links.setdefault(entity, 1.0)
    for fact in kept:
        for term in (fact.s,) if fact.p.iri == KIND_OF else (fact.s, fact.o):
            if isinstance(term, IriTerm) and not is_provenance_node(term.iri):
                links.setdefault(term.iri, 1.0)
    for entity in title_entities(title) if title else ():
        links[entity] = TITLE_WEIGHT
    return Passage(document, title, kept, links)


def passages_from(fact_rows: Iterable[tuple[str, Triple]], passage_rows: Iterable[tuple[str, str, str]],
                  mention_rows: Iterable[tuple[str, str]] = ()) -> dict[str, Passage]:
    """Each chunk's Passage from (chunk, fact), (chunk, document, title) and (chunk, entity) rows; a
    chunk named in none of them has none."""
    documents: dict[str, tuple[str, str]] = {}
    for chunk, document, title in passage_rows:
        documents.setdefault(chunk, (document, title))
    facts: dict[str, list[Triple]] = {}
    for chunk, fact in fact_rows:
        if is_knowledge(fact):
            facts.setdefault(chunk, []).append(fact)
    named: dict[str, list[str]] = {}
    for chunk, entity in mention_rows:
        named.setdefault(chunk, []).append(entity)
    return {chunk: passage(*documents.get(chunk, ("", "")), facts.get(chunk, ()), named.get(chunk, ()))
            for chunk in dict.fromkeys([*documents, *facts, *named])}


def assemble(passages: dict[str, Passage]) -> PassageGraph:
    """The graph of these passages from their kept links, nothing re-derived: each step a C-level pass
    over the edges (counting, indexing, zipping), so a large collection's rebuild stays cheap."""
    records = list(passages.values())
    names = list(chain.from_iterable(r.links for r in records))  # each edge's entity, passage by passage
    mentions = dict(Counter(names))  # in first-seen order, as the entities are numbered
    offset = len(records)
    index = dict(zip(mentions, range(offset, offset + len(mentions))))
    sources = chain.from_iterable(repeat(i, len(r.links)) for i, r in enumerate(records))
    graph = igraph.Graph(n=offset + len(index), edges=list(zip(sources, map(index.__getitem__, names))))
    rarity = map(math.log, map((1).__add__, map(mentions.__getitem__, names)))  # ln(1 + passages naming it)
    graph.es["weight"] = list(map(truediv, chain.from_iterable(r.links.values() for r in records), rarity))
    return PassageGraph(graph, list(passages), [r.document for r in records], [r.title for r in records],
                        list(mentions), [list(r.facts) for r in records], mentions)


def build(fact_rows: Iterable[tuple[str, Triple]], passage_rows: Iterable[tuple[str, str, str]],
          mention_rows: Iterable[tuple[str, str]] = ()) -> PassageGraph:
    """The graph from (chunk, fact) pairs, (chunk, document, title) rows and (chunk, entity) mentions.

    >>> from tracegraph.schemas.rdf import iri
    >>> fact = Triple(s=iri(entity_uri("Hall")), p=iri("https://trustgraph.ai/r/president-of"), o=iri(entity_uri("APA")))
    >>> g = build([("urn:chunk:1", fact)], [("urn:chunk:1", "urn:doc:1", "Adolescence"), ("urn:chunk:2", "urn:doc:2", "APA")])
    >>> g.passages, [e.rsplit("/", 1)[1] for e in g.entities]
    (['urn:chunk:1', 'urn:chunk:2'], ['hall', 'apa', 'adolescence'])
    >>> g.graph.are_adjacent(1, g.entity_index[entity_uri("APA")])
    True
    """
    return assemble(passages_from(fact_rows, passage_rows, mention_rows))


def _categories(facts: Iterable[Triple]) -> set[str]:
    """What a passage's facts only say things are ("X is a film"), never relate to anything else."""
    kinds = {f.o.iri for f in facts if f.p.iri == KIND_OF and isinstance(f.o, IriTerm)}
    return kinds - {t.iri for f in facts if f.p.iri != KIND_OF for t in (f.s, f.o) if isinstance(t, IriTerm)}


async def load_passages(tools, chunks: Sequence[str] | None = None, timeout: float = 60.0) -> dict[str, Passage]:
    """The Passages of `chunks` (None: of every chunk in the collection) by three read-only SPARQL
    queries through `tools`, in batches of CHUNK_BATCH chunks; a chunk with no rows left is absent."""
    if chunks is not None and len(chunks) > CHUNK_BATCH:
        found: dict[str, Passage] = {}
        for start in range(0, len(chunks), CHUNK_BATCH):
            found.update(await load_passages(tools, chunks[start:start + CHUNK_BATCH], timeout))
        return found
    if chunks is not None and not chunks:
        return {}
    fact_reply = await tools.sparql(facts_query(chunks), limit=MAX_ROWS, timeout=timeout)
    passage_reply = await tools.sparql(passages_query(chunks), limit=MAX_ROWS, timeout=timeout)
    mention_reply = await tools.sparql(mentions_query(chunks), limit=MAX_ROWS, timeout=timeout)
    fact_rows = []
    for row in fact_reply.bindings:
        chunk, s, p, o = row.get("chunk"), row.get("s"), row.get("p"), row.get("o")
        if isinstance(chunk, IriTerm) and isinstance(p, IriTerm) and s is not None and o is not None:
            fact_rows.append((chunk.iri, Triple(s=s, p=p, o=o)))
    passage_rows = []
    for row in passage_reply.bindings:
        chunk, doc, title = row.get("chunk"), row.get("doc"), row.get("title")
        if isinstance(chunk, IriTerm) and isinstance(doc, IriTerm):
            passage_rows.append((chunk.iri, doc.iri, title.value if isinstance(title, LiteralTerm) else ""))
    mention_rows = [(row["chunk"].iri, row["e"].iri) for row in mention_reply.bindings
                    if isinstance(row.get("chunk"), IriTerm) and isinstance(row.get("e"), IriTerm)]
    return await asyncio.to_thread(passages_from, fact_rows, passage_rows, mention_rows)


async def load(tools, timeout: float = 60.0) -> PassageGraph:
    """Build a collection's passage graph from all of its chunks' rows."""
    return await asyncio.to_thread(assemble, await load_passages(tools, timeout=timeout))


async def passage_graph_of(tools) -> PassageGraph | None:
    """The collection's passage graph, or None when these tools cannot build one: no such method, or
    a store that answers no SPARQL (Cassandra). Retrieval then ranks passages by dense + BM25 alone,
    and GraphRAG walks from entities as before; the trace says which."""
    if not hasattr(tools, "passage_graph"):
        return None
    try:
        return await tools.passage_graph()
    except RemoteError as exc:
        log.warning("no passage graph (%s): ranking passages without it", exc.message[:200])
        return None


def passages_of(graph: PassageGraph, facts: Sequence[Triple]) -> dict[Triple, list[int]]:
    """For each fact, the passages it was extracted from (by vertex)."""
    if graph.fact_passages is None:  # built on first use, kept with the graph
        index: dict[Triple, list[int]] = {}
        for i, passage_facts in enumerate(graph.facts):
            for f in passage_facts:
                index.setdefault(f, []).append(i)
        graph.fact_passages = index
    return {f: graph.fact_passages.get(f.model_copy(update={"g": None}), []) for f in facts}
