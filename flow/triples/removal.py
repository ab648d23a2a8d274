"""Forgetting a document: its provenance chain, and the facts and labels that nothing else supports.

Works through pattern queries only, so every engine (oxigraph, Cassandra) can do it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tracegraph.base.provenance.uris import ENTITY_BASE
from tracegraph.base.provenance.vocab import PROV, RDFS, TG
from tracegraph.base.stores.protocol import DEFAULT_GRAPH, SOURCE_GRAPH, CollectionRef, TripleStore
from tracegraph.flow.triples.tombstone import refused_entities
from tracegraph.schemas.rdf import IriTerm, Triple, TripleTerm, iri

_MANY = 1_000_000


@dataclass
class Removal:
    removed: int = 0
    chunks: list[str] = field(default_factory=list)
    orphaned_entities: list[str] = field(default_factory=list)
    facts: list[Triple] = field(default_factory=list)  # what left the default graph, for the graph-update event


async def _derived(store: TripleStore, ref: CollectionRef, root: str) -> list[str]:
    """Everything derived, directly or not, from `root` (pages, chunks, subgraphs), breadth first."""
    seen, frontier = {root}, [root]
    while frontier:
        nxt = []
        for node in frontier:
            for t in await store.match(ref, p=PROV.wasDerivedFrom, o=iri(node), g=SOURCE_GRAPH, limit=_MANY):
                child = t.s.iri if isinstance(t.s, IriTerm) else None
                if child and child not in seen:
                    seen.add(child)
                    nxt.append(child)
        frontier = nxt
    return [n for n in seen if n != root]


async def remove_document(store: TripleStore, ref: CollectionRef, document: str) -> Removal:
    result = Removal()
    derived = await _derived(store, ref, document)
    mine = set(derived)
    doomed: list[Triple] = []
    facts: list[Triple] = []
    entities: set[str] = set()
    for node in derived:
        described = await store.match(ref, s=iri(node), g=SOURCE_GRAPH, limit=_MANY)
        doomed += described
        for t in described:
            if t.p == PROV.wasGeneratedBy and isinstance(t.o, IriTerm):
                doomed += await store.match(ref, s=t.o, g=SOURCE_GRAPH, limit=_MANY)
            if t.p == TG.contains and isinstance(t.o, TripleTerm):
                facts.append(t.o.triple)
            if t.p == TG.mentions and isinstance(t.o, IriTerm):
                entities.add(t.o.iri)
        if node.startswith("urn:chunk:"):
            result.chunks.append(node)
    for fact in facts:
        holders = await store.match(ref, p=TG.contains, o=TripleTerm(triple=fact), g=SOURCE_GRAPH, limit=_MANY)
        if all(h.s.iri in mine for h in holders if isinstance(h.s, IriTerm)):
            doomed.append(fact.model_copy(update={"g": DEFAULT_GRAPH}))
            entities |= {term.iri for term in (fact.s, fact.o) if isinstance(term, IriTerm)}
    doomed += await store.match(ref, s=iri(document), g=DEFAULT_GRAPH, limit=_MANY)
    result.removed = await store.remove(ref, doomed)
    result.facts = [t for t in doomed if t.g == DEFAULT_GRAPH]
    for entity in sorted(entities | set(await refused_entities(store, ref, document))):
        if not entity.startswith(ENTITY_BASE):
            continue
        if await _unsupported(store, ref, entity):
            described = await store.match(ref, s=iri(entity), g=DEFAULT_GRAPH)
            result.removed += await store.remove(ref, described)
            result.facts += described
            result.orphaned_entities.append(entity)
    result.facts = list(dict.fromkeys(result.facts))
    return result


async def _unsupported(store: TripleStore, ref: CollectionRef, entity: str) -> bool:
    """Whether nothing but its labels keeps the entity: no fact about it or naming it, no chunk naming it."""
    still = [t for t in await store.match(ref, s=iri(entity), g=DEFAULT_GRAPH, limit=10) if t.p != RDFS.label]
    still += await store.match(ref, o=iri(entity), g=DEFAULT_GRAPH, limit=1)
    still += await store.match(ref, p=TG.mentions, o=iri(entity), g=SOURCE_GRAPH, limit=1)  # another chunk names it
    return not still
