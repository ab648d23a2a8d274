"""The review queue: extracted facts below a flow's confidence threshold wait in urn:graph:review until
a reviewer approves or rejects them. Pattern queries only (match, add, remove), so every engine keeps it.

The queue never writes a fact into the graph: an approval returns what the caller (the triples
processor) needs to do that itself, with history and attribution — the fact, where it was stated,
the chunk's extraction subgraph, its labels, and who approved it when."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from tracegraph.base.provenance.uris import review_item_uri, subgraph_uri
from tracegraph.base.provenance.vocab import RDFS, TG
from tracegraph.base.review.items import (
    APPROVED, DECISION_PREDICATES, EXTRACTORS, PENDING, REJECTED, StoredItem, decision_quads, item_iri, item_quads,
    read_item, term_text,
)
from tracegraph.base.stores.protocol import REVIEW_GRAPH, SOURCE_GRAPH, CollectionRef, TripleStore
from tracegraph.base.temporal.records import bare
from tracegraph.schemas.dates import now
from tracegraph.schemas.ingest import Triples
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Triple, fact_key, iri
from tracegraph.schemas.temporal import ReviewItem

log = logging.getLogger(__name__)

SCAN_LIMIT = 1_000_000  # review-graph quads of one predicate read to sort the queue: far above any real queue
_ITEM_QUADS = 100  # an item has a dozen quads; this bounds a damaged one


@dataclass(frozen=True, slots=True)
class Approved:
    """An approved item: everything the caller needs to write its fact into the graph, with attribution."""

    item: str  # the review item's IRI
    fact: Triple  # default graph
    document: str
    chunk: str
    subgraph: str | None  # the chunk's extraction subgraph the fact joins (tg:contains); None if never named
    confidence: float
    labels: tuple[Triple, ...]  # rdfs:label of the fact's subject, predicate and object, default graph
    reviewer: str
    reviewed_at: str


@dataclass
class Enqueued:
    """What `enqueue` did with a message's doubtful facts: `queued` new items; items already known
    (pending, or decided either way) were left as they were, and the approved ones among them come back
    in `approved_again` (re-processing a document puts them in the graph again)."""

    queued: int = 0
    already_pending: int = 0
    already_decided: int = 0
    approved_again: list[Approved] = field(default_factory=list)


@dataclass
class Decision:
    """`changed`: item IRIs whose status this decision changed (a repeated verdict changes nothing);
    `unknown`: ids as given that name no item. `approved`: the facts to write into the graph;
    `withdrawn`: items approved before and now rejected (with that earlier approval), whose facts the
    caller may take out of the graph again."""

    changed: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    approved: list[Approved] = field(default_factory=list)
    withdrawn: list[Approved] = field(default_factory=list)


async def enqueue(store: TripleStore, ref: CollectionRef, message: Triples, at: str | None = None) -> Enqueued:
    """Queue the message's `review` facts as pending items (queued `at`, default now), each once per
    (fact, chunk) whatever its fate."""
    result = Enqueued()
    chunk, document = message.metadata.id, message.metadata.root
    subgraph = extraction_subgraph(message)
    queued_at = at or now()
    labels = _labels_in(message.triples)
    writes: list[Triple] = []
    for key, fact in {fact_key(f): bare(f) for f in message.review}.items():
        uri = review_item_uri(key, chunk)
        known = await _read(store, ref, uri)
        if known is not None:
            if known.status == PENDING:
                result.already_pending += 1
                continue
            result.already_decided += 1
            if known.status == APPROVED:
                result.approved_again.append(await _approved(store, ref, known))
            continue
        confidence = min(max(message.confidence.get(key, 0.0), 0.0), 1.0)
        item = StoredItem(uri=uri, fact=fact, confidence=confidence, document=document, chunk=chunk,
                          queued_at=queued_at, reason=message.reasons.get(key, ""), subgraph=subgraph)
        writes += item_quads(item)
        writes += [label.model_copy(update={"g": REVIEW_GRAPH})
                   for term in _iris(fact) for label in labels.get(term, [])]
        result.queued += 1
    if writes:
        await store.add(ref, writes)
    return result


async def list_items(store: TripleStore, ref: CollectionRef,
                     status: Literal["pending", "approved", "rejected", "all"] = PENDING,
                     limit: int = 1000) -> tuple[list[ReviewItem], bool]:
    """Items of a status (or all), least confident first, then oldest first; and whether more than
    `limit` existed."""
    statuses = await store.match(ref, p=TG.reviewStatus, g=REVIEW_GRAPH, limit=SCAN_LIMIT)
    wanted = {q.s.iri for q in statuses
              if isinstance(q.s, IriTerm) and (status == "all" or term_text(q.o) == status)}
    confidence = await _values(store, ref, TG.extractionConfidence, wanted)
    queued = await _values(store, ref, TG.queuedAt, wanted)
    order = sorted(wanted, key=lambda u: (_number(confidence.get(u)), queued.get(u, ""), u))
    items: list[ReviewItem] = []
    names: dict[str, list[str]] = {}
    for uri in order[:limit]:
        item = await _read(store, ref, uri)
        if item is not None:
            items.append(await _as_review_item(store, ref, item, names))
    return items, len(order) > limit


async def decide(store: TripleStore, ref: CollectionRef, ids: Sequence[str], approve: bool, reviewer: str,
                 at: str) -> Decision:
    """Approve or reject items by id (IRI or its last segment), as `reviewer` at `at` (canonical UTC).

    A verdict replaces the item's status, reviewer and time; giving the same verdict again is a no-op,
    the other verdict is recorded like the first."""
    if not reviewer:
        raise ValueError("reviewer: a decision needs the name of who made it")
    verdict = APPROVED if approve else REJECTED
    decision = Decision()
    for given in dict.fromkeys(ids):
        uri = item_iri(given)
        quads = await store.match(ref, s=iri(uri), g=REVIEW_GRAPH, limit=_ITEM_QUADS)
        item = read_item(uri, quads)
        if item is None:
            decision.unknown.append(given)
            continue
        if item.status == verdict:
            continue
        was_approved = item.status == APPROVED
        await store.remove(ref, [q for q in quads if q.p.iri in DECISION_PREDICATES])
        await store.add(ref, decision_quads(uri, verdict, reviewer, at))
        decision.changed.append(uri)
        if approve:
            item.status, item.reviewer, item.reviewed_at = verdict, reviewer, at
            decision.approved.append(await _approved(store, ref, item))
        elif was_approved:
            decision.withdrawn.append(await _approved(store, ref, item))
    return decision


def extraction_subgraph(message: Triples) -> str | None:
    """The chunk's extraction subgraph: the one in urn:graph:source minted from its own tg:extractor,
    else a subgraph of the chunk (by either extractor) the message says anything about."""
    chunk = message.metadata.id
    for t in message.triples:
        if (t.p == TG.extractor and t.g == SOURCE_GRAPH and isinstance(t.s, IriTerm) and isinstance(t.o, LiteralTerm)
                and t.s.iri == subgraph_uri(chunk, t.o.value)):
            return t.s.iri
    subjects = {t.s.iri for t in message.triples if isinstance(t.s, IriTerm)}
    for extractor in EXTRACTORS:
        if subgraph_uri(chunk, extractor) in subjects:
            return subgraph_uri(chunk, extractor)
    if message.review:
        log.warning("no extraction subgraph for chunk %s: its review items will not name one", chunk)
    return None


async def _read(store: TripleStore, ref: CollectionRef, uri: str) -> StoredItem | None:
    return read_item(uri, await store.match(ref, s=iri(uri), g=REVIEW_GRAPH, limit=_ITEM_QUADS))


async def _approved(store: TripleStore, ref: CollectionRef, item: StoredItem) -> Approved:
    labels = [Triple(s=iri(term), p=RDFS.label, o=label.o)
              for term in _iris(item.fact) for label in await _stored_labels(store, ref, term)]
    return Approved(item=item.uri, fact=item.fact, document=item.document, chunk=item.chunk, subgraph=item.subgraph,
                    confidence=item.confidence, labels=tuple(labels), reviewer=item.reviewer or "",
                    reviewed_at=item.reviewed_at or "")


async def _as_review_item(store: TripleStore, ref: CollectionRef, item: StoredItem,
                          names: dict[str, list[str]]) -> ReviewItem:
    """The wire item, with the first label (alphabetically) of each of s, p, o; `names` caches labels."""
    labels: dict[str, str] = {}
    for position, term in zip("spo", (item.fact.s, item.fact.p, item.fact.o)):
        if isinstance(term, IriTerm):
            if term.iri not in names:
                names[term.iri] = sorted(term_text(t.o) for t in await _stored_labels(store, ref, term.iri))
            if names[term.iri]:
                labels[position] = names[term.iri][0]
    return ReviewItem(id=item.uri, s=item.fact.s, p=item.fact.p, o=item.fact.o, labels=labels,
                      confidence=item.confidence, reason=item.reason, document=item.document, chunk=item.chunk,
                      extractor=item.extractor, status=item.status, queued_at=item.queued_at or None,
                      reviewed_by=item.reviewer, reviewed_at=item.reviewed_at)


async def _stored_labels(store: TripleStore, ref: CollectionRef, term: str) -> list[Triple]:
    return await store.match(ref, s=iri(term), p=RDFS.label, g=REVIEW_GRAPH, limit=_ITEM_QUADS)


async def _values(store: TripleStore, ref: CollectionRef, predicate: IriTerm, items: set[str]) -> dict[str, str]:
    quads = await store.match(ref, p=predicate, g=REVIEW_GRAPH, limit=SCAN_LIMIT)
    return {q.s.iri: term_text(q.o) for q in quads if isinstance(q.s, IriTerm) and q.s.iri in items}


def _labels_in(triples: Iterable[Triple]) -> dict[str, list[Triple]]:
    """The message's rdfs:label triples by the IRI they name."""
    labels: dict[str, list[Triple]] = {}
    for t in triples:
        if t.p == RDFS.label and isinstance(t.s, IriTerm) and isinstance(t.o, LiteralTerm):
            labels.setdefault(t.s.iri, []).append(t)
    return labels


def _iris(fact: Triple) -> list[str]:
    """The fact's subject, predicate and object that are IRIs, each once."""
    return list(dict.fromkeys(term.iri for term in (fact.s, fact.p, fact.o) if isinstance(term, IriTerm)))


def _number(text: str | None) -> float:
    try:
        return float(text) if text is not None else 0.0
    except ValueError:
        return 0.0
