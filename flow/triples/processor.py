"""triples: writes the quads other processors send, answers pattern and read-only SPARQL queries,
and forgets a document on the librarian's request. The engine comes from settings."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Consumer, Service
from tracegraph.base.stores.protocol import CollectionRef, TripleStore
from tracegraph.base.stores.triples_registry import triple_store_for
from tracegraph.flow.triples.removal import remove_document
from tracegraph.schemas.ingest import Metadata, Triples, TriplesBatch
from tracegraph.schemas.triples import (
    DocumentRemovalRequest, DocumentRemovalResponse, SparqlQueryRequest, SparqlQueryResponse,
    TriplesQueryRequest, TriplesQueryResponse,
)

log = logging.getLogger(__name__)


def _ref(meta: Metadata | TriplesQueryRequest | SparqlQueryRequest | DocumentRemovalRequest) -> CollectionRef:
    return CollectionRef(meta.user, meta.collection)


class TriplesProcessor(FlowProcessor):
    name = "triples"
    input = Consumer("input", Triples, prefetch=16)
    bulk = Consumer("bulk", TriplesBatch, prefetch=1)  # one bulk load at a time: RocksDB ingests faster so
    query = Service("query", TriplesQueryRequest, TriplesQueryResponse, prefetch=32)
    sparql = Service("sparql", SparqlQueryRequest, SparqlQueryResponse, prefetch=8)
    remove = Service("remove", DocumentRemovalRequest, DocumentRemovalResponse, prefetch=2)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.store: TripleStore | None = None

    async def start(self) -> None:
        self.store = triple_store_for(self.settings)
        self._stack.push_async_callback(self.store.aclose)
        await super().start()

    @input.handler
    async def write(self, message: Triples, flow: Flow) -> None:
        await self.store.add(_ref(message.metadata), message.triples)

    @bulk.handler
    async def write_bulk(self, message: TriplesBatch, flow: Flow) -> None:
        await self.store.add_nquads(_ref(message.metadata), message.nquads)

    @query.handler
    async def answer_query(self, req: TriplesQueryRequest, flow: Flow) -> AsyncIterator[TriplesQueryResponse]:
        yield TriplesQueryResponse(triples=await self.store.match(_ref(req), req.s, req.p, req.o, req.g, req.limit))

    @sparql.handler
    async def answer_sparql(self, req: SparqlQueryRequest, flow: Flow) -> AsyncIterator[SparqlQueryResponse]:
        result = await self.store.query(_ref(req), req.query, limit=req.limit)
        yield SparqlQueryResponse(kind=result.kind, variables=list(result.variables),
                                  bindings=[dict(row) for row in result.rows], boolean=result.boolean,
                                  triples=list(result.triples), truncated=result.truncated)

    @remove.handler
    async def forget(self, req: DocumentRemovalRequest, flow: Flow) -> AsyncIterator[DocumentRemovalResponse]:
        removal = await remove_document(self.store, _ref(req), req.document)
        log.info("removed %s from %s/%s: %d quads, %d chunks, %d orphaned entities", req.document, req.user,
                 req.collection, removal.removed, len(removal.chunks), len(removal.orphaned_entities))
        yield DocumentRemovalResponse(removed=removal.removed, chunks=removal.chunks,
                                      orphaned_entities=removal.orphaned_entities)
