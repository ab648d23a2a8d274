"""The explainability writer on every backend: events reach the triples processor (the one writer of
the store) and land in urn:graph:retrieval of the caller's collection, whatever graph the sender
named, and a redelivered event changes nothing."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from tracegraph.base.bus import codec
from tracegraph.base.bus.topic import Topic
from tracegraph.base.provenance.query import question_triples
from tracegraph.base.stores.protocol import ALL_GRAPHS, CollectionRef
from tracegraph.flow.explainability import ExplainabilityWriter
from tracegraph.flow.triples.processor import TriplesProcessor
from tracegraph.launch.stack import Stack
from tracegraph.schemas.ingest import Metadata, Triples

from support.names import unique
from support.stack import config_factory, settings_for, start_flow, wait_until_async

pytestmark = pytest.mark.timeout(90)

BLUEPRINT = {"processors": {
    "explainability": {"input": "persistent://tg/flow/explainability:{id}",
                       "triples": "persistent://tg/flow/triples-store:{id}"},
    "triples": {"input": "persistent://tg/flow/triples-store:{id}",
                "bulk": "persistent://tg/flow/triples-bulk:{id}",
                "query": {"request": "non-persistent://tg/request/triples:{id}",
                          "response": "non-persistent://tg/response/triples:{id}"},
                "sparql": {"request": "non-persistent://tg/request/sparql:{id}",
                           "response": "non-persistent://tg/response/sparql:{id}"},
                "remove": {"request": "non-persistent://tg/request/triples-remove:{id}",
                           "response": "non-persistent://tg/response/triples-remove:{id}"},
                "edit": {"request": "non-persistent://tg/request/graph-edit:{id}",
                         "response": "non-persistent://tg/response/graph-edit:{id}"},
                "temporal": {"request": "non-persistent://tg/request/temporal:{id}",
                             "response": "non-persistent://tg/response/temporal:{id}"},
                "review": {"request": "non-persistent://tg/request/review:{id}",
                           "response": "non-persistent://tg/response/review:{id}"},
                "graph-updates": "persistent://tg/flow/graph-updates:{id}"}}}


@contextlib.asynccontextmanager
async def writer_and_store(bus, tmp_path, prefix: str):
    """The writer and the triples processor in a fresh flow of BLUEPRINT: (flow id, writer, store)."""
    flow_id = unique(prefix)
    async with Stack(bus, settings_for(tmp_path), [config_factory({"writer": BLUEPRINT}), TriplesProcessor,
                                                   ExplainabilityWriter]) as stack:
        await start_flow(bus, flow_id, blueprint="writer")
        writer, store = stack["explainability"], stack["triples"]
        await wait_until_async(lambda: flow_id in writer.flows and flow_id in store.flows, what="both to join")
        yield flow_id, writer, store


async def test_events_are_stored_once_in_the_callers_retrieval_graph(connect, tmp_path):
    bus = await connect()
    async with writer_and_store(bus, tmp_path, "explain") as (flow_id, writer, store):
        event = Triples(metadata=Metadata(id="q", root="q", user="alice", collection="audit"),
                        triples=[t.model_copy(update={"g": None}) for t in question_triples(
                            "urn:trustgraph:question:s1", "Why?", "2026-01-01T00:00:00Z")])
        body, props = codec.encode(event)
        topic = Topic.parse(f"persistent://tg/flow/explainability:{flow_id}")
        for _ in range(2):  # a redelivery
            await bus.publish(topic, body, props)
        ref = CollectionRef("alice", "audit")
        await wait_until_async(lambda: writer.stats.handled >= 2 and store.stats.handled >= 2, what="both events stored")
        stored = await store.store.match(ref, g=ALL_GRAPHS, limit=100)
        assert len(stored) == len(event.triples)
        assert {t.g for t in stored} == {"urn:graph:retrieval"}
        assert await store.store.count(CollectionRef("bob", "audit")) == 0
        assert not hasattr(writer, "store"), "the writer must own no store: the triples processor writes"


async def test_an_event_in_the_retrieval_graph_goes_on_as_it_came_and_a_bad_one_is_dropped(connect, tmp_path):
    """The writer parses an event only for its graphs: one already in urn:graph:retrieval reaches the
    triples topic as the very bytes sent; one it cannot read is counted undecodable, not passed on."""
    bus = await connect()
    async with writer_and_store(bus, tmp_path, "relay") as (flow_id, writer, store):
        event = Triples(metadata=Metadata(id="q", root="q", user="carol", collection="audit"),
                        triples=question_triples("urn:trustgraph:question:s2", "How?", "2026-01-01T00:00:00Z"))
        assert {t.g for t in event.triples} == {"urn:graph:retrieval"}
        body, props = codec.encode(event)
        body = b" " + body  # valid, but not what encoding it again would give
        source = Topic.parse(f"persistent://tg/flow/explainability:{flow_id}")
        async with bus.subscribe(Topic.parse(f"persistent://tg/flow/triples-store:{flow_id}"), "observer") as seen:
            await bus.publish(source, b'{"triples": "not a list"}', props)
            await bus.publish(source, body, props)
            [passed] = await asyncio.wait_for(_first(seen), 10)
        assert passed == body
        await wait_until_async(lambda: store.stats.handled >= 1, what="the event stored")
        stored = await store.store.match(CollectionRef("carol", "audit"), g=ALL_GRAPHS, limit=100)
        assert len(stored) == len(event.triples)
        assert writer.stats.undecodable == 1 and writer.stats.handled == 1


async def _first(deliveries) -> list[bytes]:
    async for delivery in deliveries:
        await delivery.ack()
        return [delivery.body]
    return []
