"""A review item as quads in urn:graph:review, and read back: the one place that knows an item's shape.

    <item> a tg:ReviewItem ; rdf:reifies <<( s p o )>> ; tg:extractionConfidence "0.250"^^xsd:decimal ;
           tg:reviewReason "…" ; tg:statedIn <document> ; prov:wasDerivedFrom <chunk> ;
           tg:extractionSubgraph <subgraph> ; tg:reviewStatus "pending" ; tg:queuedAt "…"^^xsd:dateTime
           [ ; prov:wasAttributedTo <urn:trustgraph:user:…> ; tg:reviewedAt "…"^^xsd:dateTime ]   (once decided)

No tg:extractor on the item: the ontology keeps that to subgraphs, and the subgraph's IRI, minted from
(chunk, extractor), already tells which extractor it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

from tracegraph.base.provenance.uris import review_item_uri, subgraph_uri, user_uri
from tracegraph.base.provenance.vocab import PROV, RDF, TG, XSD
from tracegraph.base.stores.protocol import REVIEW_GRAPH
from tracegraph.base.temporal.records import bare, instant, quoted_fact
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Term, Triple, TripleTerm, iri, literal

Status = Literal["pending", "approved", "rejected"]
PENDING: Status = "pending"
APPROVED: Status = "approved"
REJECTED: Status = "rejected"

# Derived from the minting functions, so the prefixes are written down once (in uris.py).
ITEM_PREFIX = review_item_uri("", "").rpartition(":")[0] + ":"
USER_PREFIX = user_uri("")

EXTRACTORS = ("llm", "offline")

# What a decision writes, and a new decision replaces.
DECISION_PREDICATES = frozenset({TG.reviewStatus.iri, PROV.wasAttributedTo.iri, TG.reviewedAt.iri})


@dataclass
class StoredItem:
    """A review item: written by `item_quads`, read back by `read_item`."""

    uri: str
    fact: Triple  # without a graph
    confidence: float
    document: str
    chunk: str
    queued_at: str
    reason: str = ""
    subgraph: str | None = None  # None: the message named no extraction subgraph for the chunk
    status: Status = PENDING
    reviewer: str | None = None
    reviewed_at: str | None = None

    @property
    def extractor(self) -> str:
        """"llm" or "offline", read from the subgraph's IRI; "" without a subgraph."""
        return next((e for e in EXTRACTORS if self.subgraph == subgraph_uri(self.chunk, e)), "")


def item_iri(item_id: str) -> str:
    """An item as a caller names it: its IRI, or the part after `urn:trustgraph:review:`.

    >>> item_iri("0f3a"), item_iri("urn:trustgraph:review:0f3a")
    ('urn:trustgraph:review:0f3a', 'urn:trustgraph:review:0f3a')
    """
    return item_id if item_id.startswith(ITEM_PREFIX) else ITEM_PREFIX + item_id


def reviewer_of(agent: str) -> str:
    """The user name a reviewer's agent IRI was minted from (`user_uri` backwards).

    >>> reviewer_of(user_uri("ada lovelace"))
    'ada lovelace'
    """
    return unquote(agent.removeprefix(USER_PREFIX))


def _r(item: str, p: IriTerm, o: Term) -> Triple:
    return Triple(s=iri(item), p=p, o=o, g=REVIEW_GRAPH)


def decision_quads(item: str, status: Status, reviewer: str | None, at: str | None) -> list[Triple]:
    """The status, and for a decided item who decided and when."""
    quads = [_r(item, TG.reviewStatus, literal(status))]
    if reviewer is not None:
        quads.append(_r(item, PROV.wasAttributedTo, iri(user_uri(reviewer))))
    if at is not None:
        quads.append(_r(item, TG.reviewedAt, instant(at)))
    return quads


def item_quads(item: StoredItem) -> list[Triple]:
    u = item.uri
    quads = [_r(u, RDF.type, TG.ReviewItem), _r(u, RDF.reifies, quoted_fact(item.fact)),
             _r(u, TG.extractionConfidence, literal(f"{item.confidence:.3f}", XSD.decimal.iri)),
             _r(u, TG.statedIn, iri(item.document)), _r(u, PROV.wasDerivedFrom, iri(item.chunk)),
             _r(u, TG.queuedAt, instant(item.queued_at))]
    if item.reason:
        quads.append(_r(u, TG.reviewReason, literal(item.reason)))
    if item.subgraph:
        quads.append(_r(u, TG.extractionSubgraph, iri(item.subgraph)))
    return quads + decision_quads(u, item.status, item.reviewer, item.reviewed_at)


def term_text(term: Term) -> str:
    """An IRI's or a literal's text."""
    return term.iri if isinstance(term, IriTerm) else term.value if isinstance(term, LiteralTerm) else str(term)


_FIELDS = {TG.extractionConfidence.iri: "confidence", TG.statedIn.iri: "document", PROV.wasDerivedFrom.iri: "chunk",
           TG.queuedAt.iri: "queued_at", TG.reviewReason.iri: "reason", TG.extractionSubgraph.iri: "subgraph",
           TG.reviewStatus.iri: "status", TG.reviewedAt.iri: "reviewed_at"}


def read_item(uri: str, quads: list[Triple]) -> StoredItem | None:
    """A StoredItem from its quads (`store.match(s=item, g=REVIEW_GRAPH)`); None if it is no review item."""
    if not any(q.p == RDF.type and q.o == TG.ReviewItem for q in quads):
        return None
    fact = next((q.o.triple for q in quads if q.p == RDF.reifies and isinstance(q.o, TripleTerm)), None)
    if fact is None:
        return None
    values = {_FIELDS[q.p.iri]: term_text(q.o) for q in quads if q.p.iri in _FIELDS}
    agent = next((q.o.iri for q in quads if q.p == PROV.wasAttributedTo and isinstance(q.o, IriTerm)), None)
    return StoredItem(uri=uri, fact=bare(fact), confidence=float(values.get("confidence", 0.0)),
                      document=values.get("document", ""), chunk=values.get("chunk", ""),
                      queued_at=values.get("queued_at", ""), reason=values.get("reason", ""),
                      subgraph=values.get("subgraph"), status=values.get("status", PENDING),
                      reviewer=reviewer_of(agent) if agent else None,
                      reviewed_at=values.get("reviewed_at"))
