"""What `tg-show-processing` reads and prints: the bus's backlog per stage queue of a flow (through the
gateway's processing route), and per collection the documents submitted to the flow against those whose
chunks are all extracted (the provenance reads that `tg-load-text --wait` polls, grouped per document)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from tracegraph.cli._client import table
from tracegraph.cli.api import Api

BATCH = 100  # documents per grouped SPARQL query

GROUPED_PROGRESS_QUERY = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX tg: <https://trustgraph.ai/ns/>
SELECT ?document (COUNT(DISTINCT ?chunk) AS ?chunks) (COUNT(DISTINCT ?extracted) AS ?done)
       (COUNT(DISTINCT ?error) AS ?errors) WHERE {
  VALUES ?document { %s }
  GRAPH <urn:graph:source> {
    OPTIONAL { ?chunk a tg:Chunk ; prov:wasDerivedFrom+ ?document .
               OPTIONAL { ?subgraph a tg:Subgraph ; prov:wasDerivedFrom ?chunk BIND(?chunk AS ?extracted) } }
    OPTIONAL { ?document tg:indexingError ?error }
  }
} GROUP BY ?document"""


@dataclass
class CollectionStatus:
    """Documents of one collection submitted to the flow: how many have every chunk extracted, how many a
    processor gave up on as a whole (no chunks will come), and how many are still pending."""

    collection: str
    submitted: int = 0
    extracted: int = 0
    gave_up: int = 0
    chunks: int = 0
    chunks_extracted: int = 0

    @property
    def pending(self) -> int:
        return self.submitted - self.extracted - self.gave_up

    def count(self, chunks: int, done: int, errors: int) -> None:
        """One document's counts, as read from its provenance."""
        self.chunks += chunks
        self.chunks_extracted += min(done, chunks)
        if chunks and done >= chunks:
            self.extracted += 1
        elif errors and not chunks:
            self.gave_up += 1


async def submitted_documents(api: Api, flow: str, collection: str | None) -> dict[str, list[str]]:
    """collection -> ids of the documents the librarian sent into `flow` (its processing records)."""
    records = (await api.request("librarian", {"operation": "list-processing"})).get("processing-metadatas") or []
    found: dict[str, dict[str, None]] = {}
    for record in records:
        if record.get("flow", "default") == flow and collection in (None, record.get("collection", "default")):
            found.setdefault(record.get("collection", "default"), {})[record["document-id"]] = None
    return {name: list(ids) for name, ids in sorted(found.items())}


async def collection_status(api: Api, flow: str, collection: str, documents: Sequence[str]) -> CollectionStatus:
    status = CollectionStatus(collection, submitted=len(documents))
    for start in range(0, len(documents), BATCH):
        values = " ".join(f"<{document}>" for document in documents[start:start + BATCH])
        response = await api.flow_service(flow, "sparql", {"query": GROUPED_PROGRESS_QUERY % values,
                                                           "collection": collection})
        for row in response.get("bindings") or []:
            status.count(*(int(row.get(name, {}).get("v", 0)) for name in ("chunks", "done", "errors")))
    return status


@dataclass
class Processing:
    """Everything `tg-show-processing` reports; `stages` as the gateway's processing route gave them."""

    flow: str
    stages: list[dict[str, Any]]
    collections: list[CollectionStatus]

    @property
    def waiting(self) -> int | None:
        """Messages waiting in the stage queues; None when the bus cannot count one of them."""
        counts = [stage.get("waiting") for stage in self.stages]
        return None if any(count is None for count in counts) else sum(counts)

    @property
    def pending(self) -> bool | None:
        """Anything left to do: True, False, or None when only the unknown stage counts could tell."""
        if any(status.pending for status in self.collections) or self.waiting:
            return True
        return None if self.waiting is None else False

    def as_json(self) -> dict[str, Any]:
        return {"flow": self.flow, "stages": self.stages, "waiting": self.waiting, "pending": self.pending,
                "collections": [{**{k.replace("_", "-"): v for k, v in asdict(status).items()},
                                 "pending": status.pending} for status in self.collections]}


async def read_processing(api: Api, flow: str, collection: str | None) -> Processing:
    stages = (await api.get("processing", {"flow": flow})).get("stages") or []
    submitted = await submitted_documents(api, flow, collection)
    if collection is not None:
        submitted.setdefault(collection, [])
    return Processing(flow, stages, [await collection_status(api, flow, name, ids) for name, ids in submitted.items()])


def _count(value: int | None) -> str:
    return "unknown" if value is None else f"{value:,}"


def render(report: Processing) -> str:
    """The report as text: the stage queues, the collections, and one closing line saying what is pending."""
    lines = [f"flow {report.flow}: messages waiting per stage queue (shared by every collection)"]
    if report.stages:
        lines.append(table([[stage["queue"], stage.get("processor") or "?", _count(stage.get("waiting")),
                             _count(stage.get("consumers"))] for stage in report.stages],
                           ["queue", "processor", "waiting", "consumers"]))
    else:
        lines.append("  (no stage queue has a subscriber)")
    lines.append("")
    if report.collections:
        lines.append(table([[status.collection, f"{status.submitted:,}", f"{status.extracted:,}",
                             f"{status.gave_up:,}", f"{status.pending:,}",
                             f"{status.chunks_extracted:,}/{status.chunks:,}"] for status in report.collections],
                           ["collection", "submitted", "extracted", "gave up", "pending", "chunks extracted"]))
    else:
        lines.append(f"no documents submitted to flow {report.flow}")
    lines.append(summary(report))
    return "\n".join(lines)


def summary(report: Processing) -> str:
    """The closing line.

    >>> summary(Processing("default", [{"queue": "chunk-load", "waiting": 0}], []))
    'nothing pending'
    >>> summary(Processing("default", [{"queue": "chunk-load", "waiting": None}], []))
    'no document pending; stage queues: unknown on this bus'
    """
    documents = sum(status.pending for status in report.collections)
    if report.pending is False:
        return "nothing pending"
    parts = [f"{documents:,} document(s) not yet extracted" if documents else "no document pending"]
    waiting = report.waiting
    parts.append("stage queues: unknown on this bus" if waiting is None else
                 f"{waiting:,} message(s) waiting in stage queues" if waiting else "stage queues empty")
    return "; ".join(parts)

