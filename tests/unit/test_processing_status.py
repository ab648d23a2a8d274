"""`tg-show-processing`: the stage rows the gateway builds from the bus's backlog counts (a publisher-only
processor left out, an uncountable bus said as unknown), per-collection document counts, and the text
and JSON the command prints."""

from __future__ import annotations

import json

import pytest

from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.bus.topic import Topic
from tracegraph.base.errors import ConfigError
from tracegraph.cli.processing_status import CollectionStatus, Processing, render, summary
from tracegraph.flow.gateway.processing import stage_backlogs

CHUNKS = "persistent://tg/flow/chunk-load:f1"
BINDINGS = {
    "chunker": json.dumps({"f1": {"topics": {"input": "persistent://tg/flow/document-load:f1", "output": CHUNKS,
                                             "chunk-size": "1000"}}}),
    "kg-extract": json.dumps({"f1": {"topics": {"input": CHUNKS, "text-completion": {
        "request": "non-persistent://tg/request/text-completion:f1",
        "response": "non-persistent://tg/response/text-completion:f1"}}}}),
    "other-flow-only": json.dumps({"f2": {"topics": {"input": "persistent://tg/flow/chunk-load:f2"}}}),
}


class Uncountable(InprocBackend):
    async def backlog(self, topic: Topic, subscription: str) -> int | None:
        return None


async def test_stage_rows_count_what_waits_for_each_consuming_processor():
    async with InprocBackend() as bus:
        async with bus.subscribe(Topic.parse(CHUNKS), "kg-extract"):
            pass  # kg-extract's subscription exists (persistent) though it is away now
        for i in range(4):
            await bus.publish(Topic.parse(CHUNKS), str(i).encode(), {})
        rows = await stage_backlogs(bus, BINDINGS, "f1")
    # chunk-load is published by the chunker and consumed by kg-extract; document-load has no subscriber yet
    assert rows == [{"queue": "chunk-load", "processor": "kg-extract", "waiting": 4, "consumers": 0}]


async def test_a_bus_that_cannot_count_gives_one_unknown_row_per_queue():
    async with Uncountable() as bus:
        rows = await stage_backlogs(bus, BINDINGS, "f1")
    assert [(row["queue"], row["waiting"]) for row in rows] == [("chunk-load", None), ("document-load", None)]


async def test_an_unknown_flow_is_refused_by_name():
    async with InprocBackend() as bus:
        with pytest.raises(ConfigError, match="no running flow 'nope'"):
            await stage_backlogs(bus, BINDINGS, "nope")


def test_a_document_counts_as_extracted_pending_or_given_up():
    status = CollectionStatus("notes", submitted=4)
    status.count(3, 3, 0)  # every chunk has its subgraph
    status.count(2, 1, 0)  # one chunk to go
    status.count(0, 0, 1)  # the chunker gave up: no chunks will come
    assert (status.extracted, status.gave_up, status.pending) == (1, 1, 2)  # the 4th has no chunk record yet
    assert (status.chunks, status.chunks_extracted) == (5, 4)


def test_text_report_lists_stages_and_collections_and_says_what_is_pending():
    report = Processing("default", [{"queue": "chunk-load", "processor": "kg-extract", "waiting": 12,
                                     "consumers": 1}],
                        [CollectionStatus("notes", submitted=3, extracted=1, chunks=9, chunks_extracted=4)])
    text = render(report)
    assert text.splitlines()[2:4] == ["----------  ----------  -------  ---------",
                                      "chunk-load  kg-extract  12       1"]
    assert "notes       3          1          0        2        4/9" in text
    assert text.endswith("2 document(s) not yet extracted; 12 message(s) waiting in stage queues")
    assert report.as_json()["collections"][0] == {"collection": "notes", "submitted": 3, "extracted": 1,
                                                  "gave-up": 0, "chunks": 9, "chunks-extracted": 4, "pending": 2}
    assert report.as_json()["pending"] is True


def test_an_uncounted_queue_is_unknown_never_nothing_pending():
    report = Processing("default", [{"queue": "chunk-load", "processor": "", "waiting": None, "consumers": None}],
                        [CollectionStatus("notes", submitted=2, extracted=2)])
    text = render(report)
    assert "chunk-load  ?          unknown  unknown" in text
    assert summary(report) == "no document pending; stage queues: unknown on this bus"
    assert report.pending is None and report.as_json()["waiting"] is None


def test_everything_settled_reads_nothing_pending():
    report = Processing("default", [{"queue": "chunk-load", "processor": "kg-extract", "waiting": 0,
                                     "consumers": 1}], [CollectionStatus("notes", submitted=2, extracted=2)])
    assert render(report).endswith("\nnothing pending") and report.pending is False
