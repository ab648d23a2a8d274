"""Rewriting part of a named graph: every triple of some subjects (or the whole graph) goes, then
the new triples are stored. The triples service's `edit` request does this for the derived graphs
(communities, the RAPTOR tree); the community benchmark does it on an embedded store."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tracegraph.base.stores.protocol import CollectionRef, TripleStore
from tracegraph.schemas.rdf import Triple, iri

WHOLE_GRAPH = 10_000_000


async def replace_in_graph(store: TripleStore, ref: CollectionRef, graph: str, *, drop_subjects: Iterable[str] = (),
                           drop_all: bool = False, add: Sequence[Triple] = ()) -> tuple[int, int]:
    """(triples removed, triples added)."""
    doomed: list[Triple] = []
    if drop_all:
        doomed = await store.match(ref, g=graph, limit=WHOLE_GRAPH)
    else:
        for subject in dict.fromkeys(drop_subjects):
            doomed += await store.match(ref, s=iri(subject), g=graph, limit=WHOLE_GRAPH)
    removed = await store.remove(ref, doomed) if doomed else 0
    added = await store.add(ref, add) if add else 0
    return removed, added
