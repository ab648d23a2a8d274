"""The review queue over a real embedded store: doubtful facts queued once per chunk whatever their
fate, listed least confident first, approved (with what the graph needs) or rejected, per collection."""

from __future__ import annotations

import doctest

import pytest

from tracegraph.base.provenance import extraction
from tracegraph.base.provenance.uris import entity_uri, relation_uri, review_item_uri, subgraph_uri, user_uri
from tracegraph.base.provenance.vocab import PROV, RDFS, TG
from tracegraph.base.review import Approved, decide, enqueue, list_items
from tracegraph.base.review import items as item_module
from tracegraph.base.review.items import ITEM_PREFIX, read_item
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import REVIEW_GRAPH, CollectionRef
from tracegraph.schemas.ingest import Metadata, Triples
from tracegraph.schemas.rdf import Triple, fact_key, iri, literal

REF = CollectionRef("alice", "services")
OTHER = CollectionRef("alice", "archive")
DOC, CHUNK = "urn:trustgraph:doc:ops-notes", "urn:chunk:ops-notes-1"
SUBGRAPH = subgraph_uri(CHUNK, "llm")
CHECKOUT, LEDGER, VAULT = (iri(entity_uri(name)) for name in ("Checkout", "Ledger", "Vault"))
DEPENDS_ON, OWNED_BY = iri(relation_uri("depends on")), iri(relation_uri("owned by"))
PAYMENTS = iri(entity_uri("Payments team"))

SURE = Triple(s=CHECKOUT, p=DEPENDS_ON, o=LEDGER)
DOUBT_LOW = Triple(s=CHECKOUT, p=DEPENDS_ON, o=VAULT)  # 0.1
DOUBT_MID = Triple(s=CHECKOUT, p=OWNED_BY, o=PAYMENTS)  # 0.2
NAMES = {CHECKOUT: "Checkout", LEDGER: "Ledger", VAULT: "Vault", PAYMENTS: "Payments team",
         DEPENDS_ON: "depends on", OWNED_BY: "owned by"}
AT = "2026-11-05T09:00:00Z"


def message(ref: CollectionRef = REF, review: tuple[Triple, ...] = (DOUBT_LOW, DOUBT_MID)) -> Triples:
    """What kg-extract sends for a chunk: accepted facts, labels, the extraction subgraph, doubtful facts."""
    meta = Metadata(id=CHUNK, root=DOC, user=ref.user, collection=ref.collection, time="2026-11-01T10:00:00Z")
    labels = [Triple(s=term, p=RDFS.label, o=literal(name)) for term, name in NAMES.items()]
    provenance = extraction.subgraph_triples(SUBGRAPH, CHUNK, [SURE], component=extraction.Component("kg-extract", "1"),
                                             timestamp=meta.time, extractor="llm", llm_model="stub")
    return Triples(metadata=meta, triples=[SURE, *labels, *provenance],
                   confidence={fact_key(SURE): 0.9, fact_key(DOUBT_LOW): 0.1, fact_key(DOUBT_MID): 0.2},
                   review=list(review),
                   reasons={fact_key(DOUBT_LOW): "'Vault' is not in the text", fact_key(DOUBT_MID): "inferred"})


def item_of(fact: Triple) -> str:
    return review_item_uri(fact_key(fact), CHUNK)


@pytest.fixture
async def store(tmp_path):
    opened = OxigraphTripleStore(tmp_path / "triples")
    yield opened
    await opened.aclose()


async def test_enqueue_writes_pending_items_with_labels(store):
    done = await enqueue(store, REF, message())
    assert (done.queued, done.already_pending, done.already_decided, done.approved_again) == (2, 0, 0, [])

    quads = await store.match(REF, s=iri(item_of(DOUBT_LOW)), g=REVIEW_GRAPH)
    item = read_item(item_of(DOUBT_LOW), quads)
    assert item.fact == DOUBT_LOW and item.status == "pending" and item.confidence == pytest.approx(0.1)
    assert (item.document, item.chunk, item.subgraph, item.extractor) == (DOC, CHUNK, SUBGRAPH, "llm")
    assert item.reason == "'Vault' is not in the text" and item.queued_at.endswith("Z")
    assert {q.o for q in await store.match(REF, s=VAULT, p=RDFS.label, g=REVIEW_GRAPH)} == {literal("Vault")}
    # Held back: neither the doubtful fact nor anything else is written into the default graph.
    assert await store.match(REF, s=CHECKOUT, p=DEPENDS_ON, o=VAULT) == []
    assert await store.count(REF, g=None) == 0

    items, truncated = await list_items(store, REF)
    assert not truncated
    assert [i.id for i in items] == [item_of(DOUBT_LOW), item_of(DOUBT_MID)]
    assert items[0].labels == {"s": "Checkout", "p": "depends on", "o": "Vault"}
    assert items[0].reason and items[0].queued_at and items[0].document == DOC and items[0].extractor == "llm"


async def test_enqueue_again_queues_nothing_new(store):
    await enqueue(store, REF, message())
    before = await store.count(REF)
    again = await enqueue(store, REF, message())
    assert (again.queued, again.already_pending, again.already_decided) == (0, 2, 0)
    assert await store.count(REF) == before


async def test_approve_returns_the_fact_with_attribution(store):
    await enqueue(store, REF, message())
    short = item_of(DOUBT_MID).removeprefix(ITEM_PREFIX)  # the last segment works as well as the IRI
    decision = await decide(store, REF, [short], approve=True, reviewer="bob", at=AT)

    assert decision.changed == [item_of(DOUBT_MID)] and decision.unknown == []
    (approved,) = decision.approved
    assert approved == Approved(
        item=item_of(DOUBT_MID), fact=DOUBT_MID, document=DOC, chunk=CHUNK, subgraph=SUBGRAPH,
        confidence=pytest.approx(0.2), reviewer="bob", reviewed_at=AT,
        labels=approved.labels)
    assert approved.fact.g is None
    assert set(approved.labels) == {Triple(s=term, p=RDFS.label, o=literal(NAMES[term]))
                                    for term in (CHECKOUT, OWNED_BY, PAYMENTS)}

    node = iri(item_of(DOUBT_MID))
    assert [q.o for q in await store.match(REF, s=node, p=TG.reviewStatus, g=REVIEW_GRAPH)] == [literal("approved")]
    attributed = await store.match(REF, s=node, p=PROV.wasAttributedTo, g=REVIEW_GRAPH)
    assert [q.o for q in attributed] == [iri(user_uri("bob"))]
    (listed,), _ = await list_items(store, REF, status="approved")
    assert (listed.status, listed.reviewed_by, listed.reviewed_at) == ("approved", "bob", AT)
    # Approving again is a no-op.
    assert (await decide(store, REF, [item_of(DOUBT_MID)], approve=True, reviewer="carol", at=AT)).changed == []
    (listed,), _ = await list_items(store, REF, status="approved")
    assert listed.reviewed_by == "bob"


async def test_rejected_stays_rejected_when_the_document_is_processed_again(store):
    await enqueue(store, REF, message())
    rejected = await decide(store, REF, [item_of(DOUBT_LOW)], approve=False, reviewer="bob", at=AT)
    assert rejected.changed == [item_of(DOUBT_LOW)] and rejected.approved == []

    again = await enqueue(store, REF, message())
    assert (again.queued, again.already_pending, again.already_decided, again.approved_again) == (0, 1, 1, [])
    (item,), _ = await list_items(store, REF, status="rejected")
    assert item.id == item_of(DOUBT_LOW) and item.reviewed_by == "bob"
    assert [i.id for i in (await list_items(store, REF))[0]] == [item_of(DOUBT_MID)]


async def test_approved_comes_back_when_the_document_is_processed_again(store):
    await enqueue(store, REF, message())
    await decide(store, REF, [item_of(DOUBT_LOW)], approve=True, reviewer="bob", at=AT)
    again = await enqueue(store, REF, message())
    assert (again.queued, again.already_pending, again.already_decided) == (0, 1, 1)
    (back,) = again.approved_again
    assert (back.item, back.fact, back.reviewer, back.reviewed_at, back.subgraph) == (
        item_of(DOUBT_LOW), DOUBT_LOW, "bob", AT, SUBGRAPH)
    assert Triple(s=VAULT, p=RDFS.label, o=literal("Vault")) in back.labels


async def test_the_other_verdict_is_recorded(store):
    await enqueue(store, REF, message())
    await decide(store, REF, [item_of(DOUBT_LOW)], approve=False, reviewer="bob", at=AT)
    later = "2026-11-06T09:00:00Z"
    decision = await decide(store, REF, [item_of(DOUBT_LOW)], approve=True, reviewer="carol", at=later)
    assert decision.changed == [item_of(DOUBT_LOW)]
    assert [a.reviewer for a in decision.approved] == ["carol"]
    (item,), _ = await list_items(store, REF, status="approved")
    assert (item.reviewed_by, item.reviewed_at) == ("carol", later)
    node = iri(item_of(DOUBT_LOW))
    assert len(await store.match(REF, s=node, p=TG.reviewStatus, g=REVIEW_GRAPH)) == 1
    assert len(await store.match(REF, s=node, p=TG.reviewedAt, g=REVIEW_GRAPH)) == 1
    withdrawn = await decide(store, REF, [item_of(DOUBT_LOW)], approve=False, reviewer="bob", at=later)
    assert [a.fact for a in withdrawn.withdrawn] == [DOUBT_LOW] and withdrawn.approved == []


async def test_unknown_ids_are_reported(store):
    await enqueue(store, REF, message())
    missing = review_item_uri(fact_key(SURE), CHUNK)  # the accepted fact was never queued
    decision = await decide(store, REF, ["nope", missing, item_of(DOUBT_LOW)], approve=False, reviewer="bob", at=AT)
    assert decision.unknown == ["nope", missing]
    assert decision.changed == [item_of(DOUBT_LOW)]


async def test_a_decision_needs_a_reviewer(store):
    await enqueue(store, REF, message())
    with pytest.raises(ValueError, match="reviewer"):
        await decide(store, REF, [item_of(DOUBT_LOW)], approve=True, reviewer="", at=AT)


async def test_collections_do_not_see_each_others_items(store):
    await enqueue(store, REF, message(review=(DOUBT_LOW,)))
    assert (await list_items(store, OTHER, status="all")) == ([], False)
    decision = await decide(store, OTHER, [item_of(DOUBT_LOW)], approve=True, reviewer="bob", at=AT)
    assert decision.unknown == [item_of(DOUBT_LOW)] and decision.approved == []
    # The same chunk in the other collection is queued there on its own.
    assert (await enqueue(store, OTHER, message(OTHER, review=(DOUBT_LOW,)))).queued == 1
    assert [i.status for i in (await list_items(store, REF, status="all"))[0]] == ["pending"]


async def test_listing_orders_by_confidence_then_queued_time_and_filters_by_status(store):
    third = Triple(s=VAULT, p=OWNED_BY, o=PAYMENTS)  # as unsure as DOUBT_MID
    # The one with the later IRI is queued first, so the order shown is the queued time's, not the IRI's.
    older, newer = sorted([DOUBT_MID, third], key=item_of, reverse=True)
    both = {fact_key(DOUBT_MID): 0.2, fact_key(third): 0.2}
    for fact, at in ((older, "2026-11-01T10:00:00Z"), (newer, "2026-11-01T11:00:00Z")):
        await enqueue(store, REF, message(review=(fact,)).model_copy(update={"confidence": both}), at=at)
    later_chunk = "urn:chunk:ops-notes-2"
    later = message(review=(DOUBT_LOW,))
    later = later.model_copy(update={"metadata": later.metadata.model_copy(update={"id": later_chunk})})
    await enqueue(store, REF, later, at="2026-11-02T10:00:00Z")  # no subgraph of this chunk: the item names none

    low = review_item_uri(fact_key(DOUBT_LOW), later_chunk)
    items, truncated = await list_items(store, REF)
    assert [i.id for i in items] == [low, item_of(older), item_of(newer)] and not truncated
    assert items[0].extractor == "" and [i.confidence for i in items] == pytest.approx([0.1, 0.2, 0.2])
    assert (await store.match(REF, s=iri(low), p=TG.extractionSubgraph, g=REVIEW_GRAPH)) == []

    first, truncated = await list_items(store, REF, limit=2)
    assert [i.id for i in first] == [low, item_of(older)] and truncated

    await decide(store, REF, [item_of(older)], approve=False, reviewer="bob", at=AT)
    assert [i.id for i in (await list_items(store, REF))[0]] == [low, item_of(newer)]
    assert [i.id for i in (await list_items(store, REF, status="rejected"))[0]] == [item_of(older)]
    assert [i.id for i in (await list_items(store, REF, status="approved"))[0]] == []
    assert len((await list_items(store, REF, status="all"))[0]) == 3


async def test_what_the_queue_stores_conforms_to_the_shapes(store):
    import asyncio

    from tracegraph.base.provenance.shacl import validate_trace

    await enqueue(store, REF, message())
    await decide(store, REF, [item_of(DOUBT_LOW)], approve=True, reviewer="bob", at=AT)
    stored = await store.match(REF, g=REVIEW_GRAPH)
    report = await asyncio.to_thread(validate_trace, stored)
    assert report.conforms, report.messages


def test_item_helpers_doctests():
    assert doctest.testmod(item_module).failed == 0
