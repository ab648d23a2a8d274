"""The explainability writer on every backend: events land in urn:graph:retrieval of the caller's
collection, whatever graph the sender named, and a redelivered event changes nothing."""

from __future__ import annotations

import asyncio

import pytest

from tracegraph.base.bus import codec
from tracegraph.base.bus.topic import Topic
from tracegraph.base.provenance.query import question_triples
from tracegraph.base.stores.protocol import ALL_GRAPHS, CollectionRef
from tracegraph.flow.explainability import ExplainabilityWriter
from tracegraph.launch.stack import Stack
from tracegraph.schemas.ingest import Metadata, Triples

from support.names import unique
from support.stack import config_factory, settings_for, start_flow

pytestmark = pytest.mark.timeout(90)

BLUEPRINT = {"processors": {"explainability": {"input": "persistent://tg/flow/explainability:{id}"}}}


async def test_events_are_stored_once_in_the_callers_retrieval_graph(connect, tmp_path):
    bus = await connect()
    flow_id = unique("explain")
    async with Stack(bus, settings_for(tmp_path), [config_factory({"writer": BLUEPRINT}), ExplainabilityWriter]) as stack:
        await start_flow(bus, flow_id, blueprint="writer")
        writer = stack["explainability"]
        for _ in range(100):
            if flow_id in writer.flows:
                break
            await asyncio.sleep(0.05)
        event = Triples(metadata=Metadata(id="q", root="q", user="alice", collection="audit"),
                        triples=[t.model_copy(update={"g": None}) for t in question_triples(
                            "urn:trustgraph:question:s1", "Why?", "2026-01-01T00:00:00Z")])
        body, props = codec.encode(event)
        topic = Topic.parse(f"persistent://tg/flow/explainability:{flow_id}")
        for _ in range(2):  # a redelivery
            await bus.publish(topic, body, props)
        ref = CollectionRef("alice", "audit")
        for _ in range(100):
            if writer.stats.handled >= 2:
                break
            await asyncio.sleep(0.05)
        stored = await writer.store.match(ref, g=ALL_GRAPHS, limit=100)
        assert len(stored) == len(event.triples)
        assert {t.g for t in stored} == {"urn:graph:retrieval"}
        assert await writer.store.count(CollectionRef("bob", "audit")) == 0
