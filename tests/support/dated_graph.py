"""A small collection with history: the Payments API was owned by Team Alpha (an ADR of 2023) until
an ADR of 2025 gave it to Team Beta, written as the triples processor keeps it — the current graph
holds the new owner, urn:graph:history a record per (fact, document) with the supersession, and
urn:graph:history-facts both owners — and opened as LocalRetrievalTools over real stores."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from tracegraph.base.provenance.extraction import Component, chunk_triples, document_triples, subgraph_triples
from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import RDFS, TG
from tracegraph.base.retrieval.local import LocalRetrievalTools
from tracegraph.base.stores.keyword import KeywordIndex
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import HISTORY_GRAPH, CollectionRef, VectorItem
from tracegraph.base.stores.qdrant import QdrantVectorStore
from tracegraph.base.temporal.records import instant, record_quads, record_uri, supersession
from tracegraph.schemas.rdf import Triple, iri, literal

REF = CollectionRef("default", "dated")
OLD_DOC, NEW_DOC = "urn:trustgraph:doc:adr-2023", "urn:trustgraph:doc:adr-2025"
OLD_DATE, NEW_DATE = "2023-01-15T00:00:00Z", "2025-03-01T00:00:00Z"
OLD_RECORDED, NEW_RECORDED = "2023-01-20T10:00:00Z", "2025-03-02T10:00:00Z"
BETWEEN = "2024-06-01T00:00:00Z"  # after the 2023 ADR, before the 2025 one
OLD_CHUNK, NEW_CHUNK = f"{OLD_DOC}/c1", f"{NEW_DOC}/c1"
OLD_TEXT = "Decision: the Payments API is owned by Team Alpha, which also runs the Ledger Service."
NEW_TEXT = "Decision: the Payments API is owned by Team Beta from now on."
COMPONENT = Component("test", "1")
NAMES = ["Payments API", "Team Alpha", "Team Beta", "Ledger Service"]


def fact(s: str, p: str, o: str) -> Triple:
    return Triple(s=iri(entity_uri(s)), p=iri(relation_uri(p)), o=iri(entity_uri(o)))


ALPHA = fact("Payments API", "is owned by", "Team Alpha")
BETA = fact("Payments API", "is owned by", "Team Beta")
LEDGER = fact("Payments API", "depends on", "Ledger Service")  # stated in 2023, never superseded
OLD_RECORD = record_uri(ALPHA, OLD_DOC, OLD_RECORDED)
NEW_RECORD = record_uri(BETA, NEW_DOC, NEW_RECORDED)


def history() -> list[Triple]:
    """The records, the supersession and each document's own dates."""
    quads = [*record_quads(OLD_RECORD, ALPHA, OLD_DOC, OLD_RECORDED, OLD_DATE),
             *record_quads(record_uri(LEDGER, OLD_DOC, OLD_RECORDED), LEDGER, OLD_DOC, OLD_RECORDED, OLD_DATE),
             *record_quads(NEW_RECORD, BETA, NEW_DOC, NEW_RECORDED, NEW_DATE),
             *supersession(OLD_RECORD, NEW_DATE, NEW_RECORD, NEW_RECORDED)]
    for doc, recorded, valid in ((OLD_DOC, OLD_RECORDED, OLD_DATE), (NEW_DOC, NEW_RECORDED, NEW_DATE)):
        quads += [Triple(s=iri(doc), p=TG.recordedAt, o=instant(recorded), g=HISTORY_GRAPH),
                  Triple(s=iri(doc), p=TG.validFrom, o=instant(valid), g=HISTORY_GRAPH)]
    return quads


def current() -> list[Triple]:
    """The default graph: the current owner and the dependency, with labels."""
    labels = {entity_uri(n): n for n in NAMES} | {relation_uri(p): p for p in ("is owned by", "depends on")}
    return [BETA, LEDGER, *[Triple(s=iri(u), p=RDFS.label, o=literal(label)) for u, label in labels.items()]]


def passages() -> list[Triple]:
    """Each ADR as a document with one chunk, whose extraction subgraph contains its facts."""
    out: list[Triple] = []
    for doc, chunk, text, facts, date in ((OLD_DOC, OLD_CHUNK, OLD_TEXT, [ALPHA, LEDGER], OLD_DATE),
                                          (NEW_DOC, NEW_CHUNK, NEW_TEXT, [BETA], NEW_DATE)):
        out += document_triples(doc, title=f"ADR of {date[:4]}", mime_type="text/plain", date=date)
        out += chunk_triples(chunk, doc, index=1, char_offset=0, char_length=len(text), chunk_size=1000,
                             chunk_overlap=100, component=COMPONENT, timestamp=date)
        out += subgraph_triples(f"{chunk}/subgraph", chunk, facts, component=COMPONENT, timestamp=date,
                                extractor="offline")
    return out


class CountingTools(LocalRetrievalTools):
    """LocalRetrievalTools that count the SPARQL queries reading the history."""

    history_queries = 0

    async def sparql(self, query: str, *, limit: int, timeout: float):
        if HISTORY_GRAPH in query:
            self.history_queries += 1
        return await super().sparql(query, limit=limit, timeout=timeout)


@contextlib.asynccontextmanager
async def dated_tools(folder: Path, embedder, *, with_history: bool = True, with_passages: bool = False
                      ) -> AsyncIterator[CountingTools]:
    """CountingTools over the dated collection (without its history, or with its two ADRs as passages)."""
    triples = OxigraphTripleStore(folder / "triples")
    vectors = QdrantVectorStore(path=folder / "vectors")
    keywords = KeywordIndex(folder / "keywords")
    try:
        await triples.add(REF, [*current(), *(history() if with_history else []),
                                *(passages() if with_passages else [])])
        await keywords.apply(REF, added=current())
        await vectors.upsert(REF, "entity", [VectorItem(entity_uri(n), v, {"label": n})
                                             for n, v in zip(NAMES, await embedder.embed(NAMES))])
        if with_passages:
            texts: Sequence[tuple[str, str, str]] = ((OLD_CHUNK, OLD_DOC, OLD_TEXT), (NEW_CHUNK, NEW_DOC, NEW_TEXT))
            vectors_of = await embedder.embed([t for _, _, t in texts])
            await vectors.upsert(REF, "chunk", [VectorItem(c, v, {"text": t, "document": d})
                                                for (c, d, t), v in zip(texts, vectors_of)])
        yield CountingTools(REF, triples, vectors, keywords, embedder)
    finally:
        for store in (triples, vectors, keywords):
            await store.aclose()
