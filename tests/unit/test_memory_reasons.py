"""A decision's why, part by part with its lines: the rules read a MADR's context, drivers, considered
options and the chosen one with the lines each is written on; the triples put each part on its own line
group; the memory answer reads them back in order, the chosen option marked. A record without lines of
its own (as an LLM gives them) keeps its parts, without lines."""

from __future__ import annotations

import pytest

from tracegraph.base.architecture import memory_docs
from tracegraph.base.architecture.graph import resolve
from tracegraph.base.architecture.memory import memory
from tracegraph.base.architecture.memory_docs import MemoryRecord
from tracegraph.base.architecture.triples import memory_facts, memory_spans, with_provenance
from tracegraph.base.provenance.extraction import document_triples
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import CollectionRef
from tracegraph.flow.triples.temporal import store_rows

TIME = "2026-11-01T10:00:00Z"
REF = CollectionRef("alice", "arch")
ADR = """# ADR 0031: Use Kafka for Ledger events

Status: Accepted
Date: 2025-02-11
Deciders: Ada Kern

## Context and Problem Statement

The Ledger publishes every booking. Consumers fall behind when
traffic doubles at month end.

## Decision Drivers

- Replay of a day of events
- Ordering per account

## Considered Options

- Kafka - partitions keep per-account order
- RabbitMQ - simple, but no replay
- Polling the Ledger database

## Decision Outcome

Chosen option: "Kafka", because it replays a day of events
and keeps the order per account.

## Consequences

- The Ledger team runs a Kafka cluster.
"""


def test_the_rules_read_each_part_with_its_lines():
    (decision,) = memory_docs.extract(ADR, "text/markdown")
    assert decision.fields["drivers"].split("\n") == ["Replay of a day of events", "Ordering per account"]
    assert decision.fields["options"].split("\n") == [
        "Kafka - partitions keep per-account order", "RabbitMQ - simple, but no replay", "Polling the Ledger database"]
    assert decision.fields["chosen"] == "Kafka - partitions keep per-account order"
    assert dict(decision.lines) == {"text": ((23, 26),), "rationale": ((9, 26),), "consequence": ((30, 30),),
                                    "drivers": ((14, 14), (15, 15)), "options": ((19, 19), (20, 20), (21, 21)),
                                    "chosen": ((19, 19),)}


def test_an_option_marked_chosen_wins_over_names_in_the_decision():
    text = ADR.replace("- RabbitMQ - simple, but no replay", "- RabbitMQ - simple, but no replay (selected)")
    (decision,) = memory_docs.extract(text, "text/markdown")
    assert decision.fields["chosen"] == "RabbitMQ - simple, but no replay (selected)"
    unnamed = ADR.replace('Chosen option: "Kafka", because', "We went with the first one, because")
    (decision,) = memory_docs.extract(unnamed, "text/markdown")
    assert "chosen" not in decision.fields and "chosen" not in decision.lines


def test_each_part_is_grouped_on_its_first_line():
    (decision,) = memory_docs.extract(ADR, "text/markdown")
    lines = memory_facts("urn:doc:adr-31", [decision])
    assert sorted(lines) == [9, 14, 15, 19, 20, 21, 23, 30]
    assert memory_spans([decision]) == {23: 26, 9: 26, 30: 30, 14: 14, 15: 15, 19: 19, 20: 20, 21: 21}
    assert {t.p.iri.rsplit("/", 1)[-1] for t in lines[19]} == {"consideredOption", "chosenOption"}


async def embed(texts):
    return [[1.0, float(len(t))] for t in texts]


@pytest.fixture
async def rows(tmp_path):
    store = OxigraphTripleStore(tmp_path / "triples")
    records = memory_docs.extract(ADR, "text/markdown")
    # As an LLM reads a post-mortem: its parts, but no lines of their own.
    told = MemoryRecord("failure-pattern", "Ledger outage", "The Ledger stopped for an hour.", 3, date="2025-03-01",
                        fields={"root-cause": "A full disk.", "action-items": "Alert on disk use\nAdd a second disk"},
                        relations={"affected": ("Ledger",)})
    written = [*document_triples("urn:doc:adr-31", title="adr-0031.md", mime_type="text/markdown", date=TIME),
               *with_provenance("urn:doc:adr-31", memory_facts("urn:doc:adr-31", records), timestamp=TIME,
                                extractor="offline", spans=memory_spans(records)),
               *document_triples("urn:doc:pm", title="pm.md", mime_type="text/markdown", date=TIME),
               *with_provenance("urn:doc:pm", memory_facts("urn:doc:pm", [told]), timestamp=TIME, extractor="llm",
                                spans=memory_spans([told]))]
    await store.add(REF, written)
    yield store_rows(store, REF)
    await store.aclose()


async def test_the_answer_reads_the_why_back_with_its_lines(rows):
    found = await memory(rows, await resolve(rows, "Ledger"), embed)
    decision = next(i for i in found.items if i.kind == "decision")
    assert (decision.source.line, decision.source.last_line) == (23, 26)
    assert [(r.part, r.line, r.last_line, r.chosen) for r in decision.reasons] == [
        ("context", 9, 26, False), ("driver", 14, None, False), ("driver", 15, None, False),
        ("option", 19, None, True), ("option", 20, None, False), ("option", 21, None, False),
        ("consequence", 30, None, False)]
    assert decision.reasons[0].text.startswith("it replays a day of events and keeps the order per account. The Ledger")

    outage = next(i for i in found.items if i.kind == "failure-pattern")
    assert [(r.part, r.text, r.line) for r in outage.reasons] == [
        ("root-cause", "A full disk.", None), ("action-item", "Add a second disk", None),
        ("action-item", "Alert on disk use", None)]
    assert outage.source.last_line is None
