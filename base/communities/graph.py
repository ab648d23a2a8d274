"""The fact graph communities are found in: entities as vertices, one weighted edge per linked pair.

Only knowledge triples of the default graph whose object is an entity link two entities; rdf:type is
left out of the links, because a type would tie every instance of a class into one hub. Types and
literal-valued facts stay with their entity as attributes, for the reports. Arrays are built in bulk
(numpy, then one igraph call), so a million facts take seconds, not minutes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

import igraph
import numpy as np
from tracegraph.base.provenance.vocab import RDF, RDFS, is_knowledge
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Triple

_TYPE = RDF.type.iri
_LABEL = RDFS.label.iri


@dataclass(eq=False)
class FactGraph:
    """Vertex i is `entities[i]` (sorted IRIs); edge e joins `sources[e] < targets[e]` with weight = its fact count.

    The linking facts are grouped by edge: edge e's are `links[offsets[e]:offsets[e + 1]]`.
    """

    entities: list[str]
    graph: igraph.Graph
    sources: np.ndarray
    targets: np.ndarray
    weights: np.ndarray
    links: list[Triple]
    offsets: np.ndarray
    attributes: dict[str, tuple[Triple, ...]]  # entity IRI -> its type and literal-valued facts
    labels: dict[str, str]  # IRI (entity or predicate) -> its first rdfs:label
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.index = {entity: i for i, entity in enumerate(self.entities)}

    @property
    def fact_count(self) -> int:
        """Facts linking two entities (what the edge weights add up to)."""
        return len(self.links)

    def vertices(self, entities: Iterable[str]) -> np.ndarray:
        """The vertex ids of those entities that are in the graph, in the order given."""
        index = self.index
        return np.fromiter((index[e] for e in entities if e in index), dtype=np.int64)

    def edge_facts(self, edge: int) -> list[Triple]:
        return self.links[self.offsets[edge]:self.offsets[edge + 1]]

    def pair_facts(self, a: str, b: str) -> list[Triple]:
        """The facts between two entities, either way round ([] if they are not linked)."""
        if a not in self.index or b not in self.index:
            return []
        edge = self.graph.get_eid(self.index[a], self.index[b], error=False)
        return [] if edge < 0 else self.edge_facts(edge)

    def incident(self, vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every edge touching `vertices`, as parallel arrays: edge id, the vertex it touches, its other end.

        Vectorised over a precomputed incidence index, so the cost is the vertices' degree, not the graph's size.
        """
        pointers, edges, others = self._incidence
        vertices = np.asarray(vertices, dtype=np.int64)
        starts = pointers[vertices]
        counts = pointers[vertices + 1] - starts
        shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
        positions = np.arange(int(counts.sum()), dtype=np.int64) + shift
        return edges[positions], np.repeat(vertices, counts), others[positions]

    def facts_of(self, entities: Iterable[str]) -> list[Triple]:
        """The facts of an entity set: those linking two of its entities, then its entities' attributes."""
        members = list(entities)
        vertices = self.vertices(members)
        edges, owners, others = self.incident(vertices)
        internal = np.isin(others, vertices) & (owners < others)  # each internal edge once
        facts = [fact for edge in np.sort(edges[internal]).tolist() for fact in self.edge_facts(edge)]
        return facts + [fact for entity in members for fact in self.attributes.get(entity, ())]

    @cached_property
    def entity_array(self) -> np.ndarray:
        """`entities` as a numpy object array, to pick many IRIs by vertex id at once."""
        return np.array(self.entities, dtype=object)

    @cached_property
    def centrality(self) -> np.ndarray:
        """Weighted PageRank of every vertex, computed once per graph (reports rank entities and facts by it)."""
        if not self.entities:
            return np.zeros(0)
        return np.asarray(self.graph.pagerank(directed=False, weights="weight"))

    @cached_property
    def _incidence(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        count = len(self.sources)
        ends = np.concatenate([self.sources, self.targets])
        order = np.argsort(ends, kind="stable")
        pointers = np.zeros(len(self.entities) + 1, dtype=np.int64)
        np.cumsum(np.bincount(ends, minlength=len(self.entities)), out=pointers[1:])
        edges = np.concatenate([np.arange(count), np.arange(count)])[order]
        others = np.concatenate([self.targets, self.sources])[order]
        return pointers, edges, others


LINK, ATTRIBUTE, LABEL = "link", "attribute", "label"


def role(t: Triple) -> str | None:
    """What a triple is to the fact graph: a link between two entities, an entity's attribute, its label,
    or nothing. Worked out once per triple where a collection's graph is kept (the costly part of a build)."""
    s, p, o = t.s, t.p.iri, t.o
    if t.g is not None or not isinstance(s, IriTerm):
        return None
    if p == _LABEL:
        return LABEL if isinstance(o, LiteralTerm) else None
    if not is_knowledge(t):
        return None
    return LINK if isinstance(o, IriTerm) and p != _TYPE and o.iri != s.iri else ATTRIBUTE


def fact_graph(triples: Iterable[Triple]) -> FactGraph:
    """The fact graph of a collection's triples (any others, e.g. named-graph records, are skipped)."""
    return fact_graph_of_roles((t, role(t)) for t in triples)


def fact_graph_of_roles(triples: Iterable[tuple[Triple, str | None]]) -> FactGraph:
    """The fact graph of triples whose `role` is known already."""
    subjects: list[str] = []
    objects: list[str] = []
    links: list[Triple] = []
    seen: set[tuple[str, str, str]] = set()
    attributes: dict[str, dict[Triple, None]] = {}
    labels: dict[str, str] = {}
    for t, kind in triples:
        if kind is None:
            continue
        s, o = t.s, t.o
        if kind == LABEL:
            labels.setdefault(s.iri, o.value)
            continue
        if kind == LINK:
            key = (s.iri, t.p.iri, o.iri)
            if key not in seen:
                seen.add(key)
                subjects.append(s.iri)
                objects.append(o.iri)
                links.append(t)
        else:
            attributes.setdefault(s.iri, {})[t] = None
    entities = sorted({*subjects, *objects})
    index = {entity: i for i, entity in enumerate(entities)}
    n = len(entities)
    a = np.fromiter((index[x] for x in subjects), dtype=np.int64, count=len(subjects))
    b = np.fromiter((index[x] for x in objects), dtype=np.int64, count=len(objects))
    pair = np.minimum(a, b) * n + np.maximum(a, b)
    order = np.argsort(pair, kind="stable")
    pair = pair[order]
    starts = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]]) if len(pair) else np.zeros(0, dtype=np.int64)
    offsets = np.r_[starts, len(pair)].astype(np.int64)
    sources, targets = pair[starts] // max(n, 1), pair[starts] % max(n, 1)
    weights = np.diff(offsets).astype(np.float64)
    graph = igraph.Graph(n=n, edges=np.column_stack([sources, targets]) if n else [])
    graph.es["weight"] = weights.tolist()
    return FactGraph(
        entities=entities, graph=graph, sources=sources, targets=targets, weights=weights,
        links=[links[i] for i in order.tolist()], offsets=offsets,
        attributes={e: tuple(facts) for e, facts in attributes.items() if e in index}, labels=labels)
