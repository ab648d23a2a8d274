"""explainability writer: files the explain events of GraphRAG, Document RAG and the agent into the
`urn:graph:retrieval` graph of the caller's collection, for later audit.

It owns no store: the events go on to the triples processor over the flow's triples-store topic,
as upstream does, so the triples processor stays the one writer of every collection's store and
this writer can run as a process of its own. Writes there are set-like, so a redelivered event
changes nothing."""

from __future__ import annotations

from pydantic import TypeAdapter
from typing_extensions import TypedDict  # pydantic reads typing's TypedDict only from Python 3.12

from tracegraph.base.bus import codec
from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Consumer, Producer
from tracegraph.base.stores.protocol import RETRIEVAL_GRAPH
from tracegraph.schemas.ingest import Triples


class _Graph(TypedDict, total=False):
    g: str | None


class _Graphs(TypedDict):
    triples: list[_Graph]


GRAPHS = TypeAdapter(_Graphs)  # the one field of each triple the writer decides on


class ExplainabilityWriter(FlowProcessor):
    name = "explainability"
    input = Consumer("input", Triples, prefetch=16, parsed=False)
    triples = Producer("triples", Triples)

    @input.handler
    async def file(self, event: codec.Encoded[Triples], flow: Flow) -> None:
        # Whatever graph a sender named, explanations live in the retrieval graph only. The answering
        # services name it already: then the event goes on as the bytes it came in, and only the
        # triples processor parses it in full (parsing and encoding it here too was a seventh of a
        # GraphRAG answer's CPU time at 50 concurrent questions).
        if all(t.get("g") == RETRIEVAL_GRAPH for t in codec.peek(event, GRAPHS)["triples"]):
            await flow[self.triples].send(event)
            return
        message = event.decode()
        triples = [t if t.g == RETRIEVAL_GRAPH else t.model_copy(update={"g": RETRIEVAL_GRAPH})
                   for t in message.triples]
        await flow[self.triples].send(Triples(metadata=message.metadata, triples=triples))
