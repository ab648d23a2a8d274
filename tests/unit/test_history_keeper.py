"""The history keeper and its queries over a real embedded store: records, supersession of a
single-valued predicate in either arrival order, retraction that brings the older value back, and
point-in-time / diff answers on both time axes."""

from __future__ import annotations

import pytest

from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import RDFS, TG
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import HISTORY_GRAPH, CollectionRef
from tracegraph.base.temporal import query
from tracegraph.base.temporal.keeper import HistoryKeeper
from tracegraph.flow.triples.temporal import store_rows
from tracegraph.schemas.ingest import Metadata
from tracegraph.schemas.rdf import Triple, iri, literal

REF = CollectionRef("alice", "services")
CHECKOUT, OWNED_BY = iri(entity_uri("Checkout")), iri(relation_uri("owned by"))
DEPENDS_ON = iri(relation_uri("depends on"))
PAYMENTS, PLATFORM, LEDGER = iri(entity_uri("Payments team")), iri(entity_uri("Platform team")), iri(entity_uri("Ledger"))
OLD = Metadata(id="urn:doc:2024", root="urn:doc:2024", user="alice", collection="services",
               time="2026-11-01T10:00:00Z", date="2024-01-10T00:00:00Z")
NEW = Metadata(id="urn:doc:2025", root="urn:doc:2025", user="alice", collection="services",
               time="2026-11-02T10:00:00Z", date="2025-06-01T00:00:00Z")


def owned(team) -> Triple:
    return Triple(s=CHECKOUT, p=OWNED_BY, o=team)


@pytest.fixture
async def keeper(tmp_path):
    store = OxigraphTripleStore(tmp_path / "triples")
    keeper = HistoryKeeper(store)
    keeper.functional = frozenset({OWNED_BY.iri})
    yield keeper
    await store.aclose()


async def write(keeper: HistoryKeeper, meta: Metadata, facts: list[Triple]) -> None:
    label = Triple(s=CHECKOUT, p=RDFS.label, o=literal("Checkout"))
    admission = await keeper.admit(REF, meta, [*facts, label])
    await admission.store(keeper.store, REF)


async def current_owners(keeper: HistoryKeeper) -> set[str]:
    return {t.o.iri for t in await keeper.store.match(REF, s=CHECKOUT, p=OWNED_BY)}


async def owners_at(keeper: HistoryKeeper, at: str, known: str | None = None) -> set[str]:
    states, _ = await query.snapshot(store_rows(keeper.store, REF), at, known, subject=CHECKOUT.iri)
    return {s.fact.o.iri for s in states if s.fact.p == OWNED_BY}


@pytest.mark.parametrize("order", ["old-first", "new-first"])
async def test_the_newer_document_supersedes_in_either_order(keeper, order):
    first, second = ((OLD, PAYMENTS), (NEW, PLATFORM)) if order == "old-first" else ((NEW, PLATFORM), (OLD, PAYMENTS))
    await write(keeper, first[0], [owned(first[1]), Triple(s=CHECKOUT, p=DEPENDS_ON, o=LEDGER)])
    await write(keeper, second[0], [owned(second[1])])

    assert await current_owners(keeper) == {PLATFORM.iri}
    assert await owners_at(keeper, "2024-06-01T00:00:00Z") == {PAYMENTS.iri}
    assert await owners_at(keeper, "2026-01-01T00:00:00Z") == {PLATFORM.iri}
    assert await owners_at(keeper, "2023-01-01T00:00:00Z") == set()
    # The non-functional fact is untouched by the slot.
    assert await keeper.store.match(REF, s=CHECKOUT, p=DEPENDS_ON)
    old = (await query.records_for(store_rows(keeper.store, REF), [owned(PAYMENTS)]))
    (record,) = next(iter(old.values()))
    assert record.valid_until == NEW.date and record.superseded_at is not None
    assert record.document == OLD.root


async def test_processing_again_changes_nothing(keeper):
    await write(keeper, OLD, [owned(PAYMENTS)])
    await write(keeper, NEW, [owned(PLATFORM)])
    before = await keeper.store.count(REF)
    await write(keeper, OLD, [owned(PAYMENTS)])
    await write(keeper, NEW, [owned(PLATFORM)])
    assert await keeper.store.count(REF) == before
    assert await current_owners(keeper) == {PLATFORM.iri}


async def test_diff_lists_the_change_with_both_documents(keeper):
    await write(keeper, OLD, [owned(PAYMENTS)])
    await write(keeper, NEW, [owned(PLATFORM)])
    changes, truncated = await query.diff(store_rows(keeper.store, REF), "2025-01-01T00:00:00Z", "2025-12-31T00:00:00Z")
    assert not truncated
    (change,) = changes
    assert change.change == "changed"
    assert change.fact.fact.o == PLATFORM and change.previous.fact.o == PAYMENTS
    assert {r.document for r in change.fact.records} == {NEW.root}
    assert {r.document for r in change.previous.records} == {OLD.root}
    nothing, _ = await query.diff(store_rows(keeper.store, REF), "2025-07-01T00:00:00Z", "2025-12-31T00:00:00Z")
    assert nothing == []


async def test_removal_retracts_keeps_history_and_brings_the_older_value_back(keeper):
    await write(keeper, OLD, [owned(PAYMENTS)])
    await write(keeper, NEW, [owned(PLATFORM)])
    retraction = await keeper.retract(REF, NEW.root, at="2026-11-10T00:00:00Z")
    await keeper.store.add(REF, retraction.write)
    await keeper.store.remove(REF, retraction.remove)
    await keeper.store.remove(REF, [owned(PLATFORM)])  # what remove_document does to the current graph

    assert retraction.current == [owned(PAYMENTS)]
    assert await current_owners(keeper) == {PAYMENTS.iri}
    assert await owners_at(keeper, "2026-01-01T00:00:00Z") == {PAYMENTS.iri}
    # As known before the removal, the newer value held: history is kept.
    assert await owners_at(keeper, "2026-01-01T00:00:00Z", known="2026-11-05T00:00:00Z") == {PLATFORM.iri}
    assert await keeper.store.match(REF, p=TG.retractedAt, g=HISTORY_GRAPH)
    changes, _ = await query.diff(store_rows(keeper.store, REF), "2026-11-05T00:00:00Z", "2026-11-20T00:00:00Z",
                                  axis="recorded")
    assert [(c.change, c.fact.fact.o, c.previous and c.previous.fact.o) for c in changes] == \
        [("changed", PAYMENTS, PLATFORM)]


async def test_without_functional_predicates_values_accumulate(keeper):
    keeper.functional = frozenset()
    await write(keeper, OLD, [owned(PAYMENTS)])
    await write(keeper, NEW, [owned(PLATFORM)])
    assert await current_owners(keeper) == {PAYMENTS.iri, PLATFORM.iri}


async def test_the_temporal_answer_names_sources_superseder_and_labels(keeper):
    from tracegraph.flow.triples.temporal import answer
    from tracegraph.schemas.temporal import TemporalRequest

    await write(keeper, OLD, [owned(PAYMENTS)])
    await write(keeper, NEW, [owned(PLATFORM)])
    earlier = await answer(keeper.store, REF, TemporalRequest(at="2024-06-01", subject=CHECKOUT.iri,
                                                              user="alice", collection="services"))
    (fact,) = [f for f in earlier.facts if f.p == OWNED_BY]
    assert fact.o == PAYMENTS and fact.sources == [OLD.root] and fact.superseded_by == NEW.root
    assert fact.valid_from == OLD.date and fact.valid_until == NEW.date
    assert earlier.labels[CHECKOUT.iri] == "Checkout"
    diff = await answer(keeper.store, REF, TemporalRequest(operation="diff", **{"from": "2025-01-01"}, to="2025-12-31",
                                                           user="alice", collection="services"))
    assert [(c.change, c.fact.sources, c.previous.sources) for c in diff.changes] == [("changed", [NEW.root], [OLD.root])]


async def test_trace_and_derived_writes_leave_no_history(keeper):
    from tracegraph.base.stores.protocol import RETRIEVAL_GRAPH
    event = Metadata(id="urn:trustgraph:question:1", root="urn:trustgraph:question:1", user="alice",
                     collection="services")
    admission = await keeper.admit(REF, event, [Triple(s=iri("urn:trustgraph:question:1"), p=RDFS.label,
                                                       o=literal("q"), g=RETRIEVAL_GRAPH)])
    assert not [t for t in admission.write if t.g == HISTORY_GRAPH] and not admission.records


@pytest.mark.parametrize("subject", ["x> } ?s ?p ?o . { <y", "Skyline", "urn:a b", 'urn:a"'])
def test_a_subject_that_is_not_an_iri_is_refused_before_any_query(subject):
    from pydantic import ValidationError

    from tracegraph.schemas.temporal import TemporalRequest
    with pytest.raises(ValidationError, match="subject: .* is not an IRI"):
        TemporalRequest(subject=subject)


async def test_a_bulk_load_named_by_its_file_gets_records_under_an_iri(keeper):
    load = Metadata(id="data/x.ttl", root="data/x.ttl", user="alice", collection="services")
    fact = Triple(s=CHECKOUT, p=DEPENDS_ON, o=LEDGER)
    admission = await keeper.admit(REF, load, [fact])
    await admission.store(keeper.store, REF)
    (records,) = (await query.records_for(store_rows(keeper.store, REF), [fact])).values()
    assert [r.document for r in records] == ["urn:trustgraph:load:data%2Fx.ttl"]


async def test_values_stated_together_hold_together(keeper):
    """"Ann and Bo own Checkout": two owners valid from the same instant; neither supersedes the other."""
    await write(keeper, OLD, [owned(PAYMENTS), owned(PLATFORM)])
    assert await current_owners(keeper) == {PAYMENTS.iri, PLATFORM.iri}
    await write(keeper, NEW, [owned(LEDGER)])
    assert await current_owners(keeper) == {LEDGER.iri}


async def test_a_fact_holds_from_the_date_its_own_text_states(keeper):
    """A later document restating history: "Platform owned Checkout from 2023" is older than the 2024 value."""
    from tracegraph.schemas.rdf import fact_key

    await write(keeper, OLD, [owned(PAYMENTS)])
    label = Triple(s=CHECKOUT, p=RDFS.label, o=literal("Checkout"))
    admission = await keeper.admit(REF, NEW, [owned(PLATFORM), label],
                                   stated={fact_key(owned(PLATFORM)): "2023-02-01T00:00:00Z"})
    await admission.store(keeper.store, REF)
    assert await current_owners(keeper) == {PAYMENTS.iri}


async def test_documents_written_at_once_leave_one_value(tmp_path):
    """The triples processor decides a slot and stores the decision in one step per collection: two documents
    arriving together cannot both read the slot empty and both win (the race tg-demo's 2024 and 2025 reviews
    once lost)."""
    import asyncio

    from tracegraph.base.bus.inproc import InprocBackend
    from tracegraph.base.settings import RuntimeSettings
    from tracegraph.flow.triples.processor import TriplesProcessor

    processor = TriplesProcessor(InprocBackend(), RuntimeSettings(data_dir=tmp_path))
    processor.store = OxigraphTripleStore(tmp_path / "triples")
    processor.history = HistoryKeeper(processor.store)
    processor.history.functional = frozenset({OWNED_BY.iri})
    try:
        for _ in range(3):
            await asyncio.gather(processor.store_admitted(REF, NEW, [owned(PLATFORM)]),
                                 processor.store_admitted(REF, OLD, [owned(PAYMENTS)]))
            assert await current_owners(processor.history) == {PLATFORM.iri}
    finally:
        await processor.store.aclose()
