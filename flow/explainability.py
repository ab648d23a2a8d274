"""explainability writer: files the explain events of GraphRAG, Document RAG and the agent into the
`urn:graph:retrieval` graph of the caller's collection, for later audit.

It owns no store: the events go on to the triples processor over the flow's triples-store topic,
as upstream does, so the triples processor stays the one writer of every collection's store and
this writer can run as a process of its own. Writes there are set-like, so a redelivered event
changes nothing."""

from __future__ import annotations

from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Consumer, Producer
from tracegraph.base.stores.protocol import RETRIEVAL_GRAPH
from tracegraph.schemas.ingest import Triples


class ExplainabilityWriter(FlowProcessor):
    name = "explainability"
    input = Consumer("input", Triples, prefetch=16)
    triples = Producer("triples", Triples)

    @input.handler
    async def file(self, event: Triples, flow: Flow) -> None:
        # Whatever graph a sender named, explanations live in the retrieval graph only.
        triples = [t if t.g == RETRIEVAL_GRAPH else t.model_copy(update={"g": RETRIEVAL_GRAPH}) for t in event.triples]
        await flow[self.triples].send(Triples(metadata=event.metadata, triples=triples))
