"""explainability writer: stores the explain events of GraphRAG, Document RAG and the agent in the
`urn:graph:retrieval` graph of the caller's collection, for later audit. Writes are set-like,
so a redelivered event changes nothing."""

from __future__ import annotations

from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Consumer
from tracegraph.base.stores.protocol import RETRIEVAL_GRAPH, CollectionRef, TripleStore
from tracegraph.base.stores.triples_registry import triple_store_for
from tracegraph.schemas.ingest import Triples


class ExplainabilityWriter(FlowProcessor):
    name = "explainability"
    input = Consumer("input", Triples, prefetch=16)

    async def start(self) -> None:
        self.store: TripleStore = triple_store_for(self.settings)
        self._stack.push_async_callback(self.store.aclose)
        await super().start()

    @input.handler
    async def write(self, event: Triples, flow: Flow) -> None:
        # Whatever graph a sender named, explanations live in the retrieval graph only.
        triples = [t if t.g == RETRIEVAL_GRAPH else t.model_copy(update={"g": RETRIEVAL_GRAPH}) for t in event.triples]
        await self.store.add(CollectionRef(event.metadata.user, event.metadata.collection), triples)
