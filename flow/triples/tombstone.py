"""Removal wins the race: a removed document's tombstone in the source graph, and the rule by which the
triples writer refuses work that arrives for it late (a slow extractor catching up after the removal).

The tombstone is `<document> tg:removedAt "time"` in the source graph. It is written before anything is
removed and outlives the removal, so every later write derived from the document (its `metadata.root`) is
refused: the store owner checks it locally, with one point lookup, before writing. The entities a refused
message names are kept as `<document> tg:refusedMention <entity>`, so a later removal can sweep their
vectors, written by a stage that does not ask. kg-extract asks (`removed_upstream`) before and after
extracting a chunk, so it drops the work instead of doing it. Adding the document again (the librarian's
description of a new `add-processing`) lifts the tombstone.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Iterable

from tracegraph.base.client import RequestClient
from tracegraph.base.provenance.uris import ENTITY_BASE
from tracegraph.base.provenance.vocab import RDF, TG
from tracegraph.base.stores.protocol import SOURCE_GRAPH, CollectionRef, TripleStore
from tracegraph.base.temporal.records import instant
from tracegraph.schemas.ingest import Metadata
from tracegraph.schemas.rdf import IriTerm, Triple, iri
from tracegraph.schemas.triples import TriplesQueryRequest, TriplesQueryResponse

_MANY = 1_000_000


def tombstone(document: str, at: str) -> Triple:
    return Triple(s=iri(document), p=TG.removedAt, o=instant(at), g=SOURCE_GRAPH)


async def removed_at(store: TripleStore, ref: CollectionRef, document: str) -> str | None:
    """When the document was removed (its first tombstone), or None while it is live (or unnamed: work
    that names no document, such as a bulk load or a question's explain event, has nothing to be refused for)."""
    if ":" not in document:  # not a document IRI: a question id, or nothing
        return None
    found = await store.match(ref, s=iri(document), p=TG.removedAt, g=SOURCE_GRAPH, limit=_MANY)
    return min((t.o.value for t in found), default=None)


def lifts_tombstone(document: str, triples: Iterable[Triple]) -> bool:
    """Whether these quads describe the document anew (the librarian's `add-processing` of a re-added
    document), which makes it live again."""
    return any(t.s == iri(document) and t.p == RDF.type and t.o == TG.Document for t in triples)


async def lift(store: TripleStore, ref: CollectionRef, document: str) -> None:
    await store.remove(ref, await store.match(ref, s=iri(document), p=TG.removedAt, g=SOURCE_GRAPH, limit=_MANY))


def named_entities(triples: Iterable[Triple]) -> list[str]:
    """The graph's entities that these quads name (as subject or object)."""
    return sorted({term.iri for t in triples for term in (t.s, t.o)
                   if isinstance(term, IriTerm) and term.iri.startswith(ENTITY_BASE)})


def refused_mentions(document: str, entities: Iterable[str]) -> list[Triple]:
    return [Triple(s=iri(document), p=TG.refusedMention, o=iri(e), g=SOURCE_GRAPH) for e in entities]


async def refused_entities(store: TripleStore, ref: CollectionRef, document: str) -> list[str]:
    found = await store.match(ref, s=iri(document), p=TG.refusedMention, g=SOURCE_GRAPH, limit=_MANY)
    return [t.o.iri for t in found if isinstance(t.o, IriTerm)]


async def mark_removed(store: TripleStore, ref: CollectionRef, document: str, at: str) -> str | None:
    """Write the tombstone unless there is one; returns the earlier removal's time (None the first time)."""
    earlier = await removed_at(store, ref, document)
    if earlier is None:
        await store.add(ref, [tombstone(document, at)])
    return earlier


async def refused(store: TripleStore, ref: CollectionRef, root: str, triples: list[Triple]) -> bool:
    """Whether quads derived from document `root` are refused because it was removed; the entities refused
    quads name are noted for the removal's sweep. The document described anew is live again."""
    if await removed_at(store, ref, root) is None:
        return False
    if lifts_tombstone(root, triples):
        await lift(store, ref, root)
        return False
    if mentions := refused_mentions(root, named_entities(triples)):
        await store.add(ref, mentions)
    return True


async def removed_upstream(triples: RequestClient[TriplesQueryRequest, TriplesQueryResponse], meta: Metadata) -> bool:
    """For a stage before the writer (kg-extract): whether the document this work derives from was removed,
    so the work can be dropped instead of done and refused."""
    if ":" not in meta.root:
        return False
    found = await triples.request(TriplesQueryRequest(s=iri(meta.root), p=TG.removedAt, g=SOURCE_GRAPH, limit=1,
                                                      user=meta.user, collection=meta.collection))
    return bool(found.triples)


class WritesInFlight:
    """Counts the writes under way per document, so a removal that has written its tombstone can wait for
    the writes that checked before it landed: a write counts itself *before* it checks, so any write the
    removal does not wait for is one that sees the tombstone."""

    def __init__(self) -> None:
        self._count: Counter[tuple[CollectionRef, str]] = Counter()
        self._changed = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def writing(self, ref: CollectionRef, document: str) -> AsyncIterator[None]:
        key = (ref, document)
        self._count[key] += 1
        try:
            yield
        finally:
            async with self._changed:
                self._count[key] -= 1
                if not self._count[key]:
                    del self._count[key]
                self._changed.notify_all()

    async def drained(self, ref: CollectionRef, document: str) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: not self._count[(ref, document)])
