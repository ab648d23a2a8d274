"""Adding documents to the library and sending them into a flow: shared by tg-add-library-document
and tg-load-text / tg-load-pdf."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from tracegraph.base.errors import ConfigError
from tracegraph.cli.api import Api
from tracegraph.cli.document_files import kind_of
from tracegraph.cli.document_settle import DocumentState, Settlement

DATE_HELP = ("the document's own date, when its facts start to hold: YYYY-MM-DD or ISO 8601 "
             "(default: a dating line in its text, such as \"Date: …\")")

PROGRESS_QUERY = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX tg: <https://trustgraph.ai/ns/>
SELECT (COUNT(DISTINCT ?chunk) AS ?chunks) (COUNT(DISTINCT ?extracted) AS ?done) WHERE {
  GRAPH <urn:graph:source> {
    ?chunk a tg:Chunk ; prov:wasDerivedFrom+ <%s> .
    OPTIONAL { ?subgraph a tg:Subgraph ; prov:wasDerivedFrom ?chunk BIND(?chunk AS ?extracted) }
  }
}"""


FAILURES_QUERY = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX tg: <https://trustgraph.ai/ns/>
SELECT DISTINCT ?chunk ?error WHERE {
  GRAPH <urn:graph:source> {
    { <%(document)s> tg:indexingError ?error BIND(<%(document)s> AS ?chunk) }
    UNION { ?chunk a tg:Chunk ; prov:wasDerivedFrom+ <%(document)s> ; tg:indexingError ?error }
    UNION { ?chunk a tg:Chunk ; prov:wasDerivedFrom+ <%(document)s> .
            ?subgraph prov:wasDerivedFrom ?chunk ; tg:extractionStatus "failed" ; tg:extractionError ?extraction .
            BIND(CONCAT("kg-extract: ", ?extraction) AS ?error) }
  }
}"""


class Stored(NamedTuple):
    """What the librarian stored: the document's metadata, and the ids of the older documents at the
    same path that it replaced."""

    meta: dict
    replaced: list[str]


async def store_document(api: Api, file: Path, *, collection: str, path: str = "", kind: str | None = None,
                         title: str | None = None, document_id: str | None = None, author: str = "",
                         source: str = "", tags: list[str] | None = None, date: str = "") -> Stored:
    """Upload one file. `path` is its identity in the collection: the librarian stores it as the title
    when none is given, and replaces the document stored at that path before, if its content differed.
    Without a path the title defaults to the file's stem. The librarian checks `date`."""
    try:
        content, uri = await asyncio.to_thread(lambda: (file.read_bytes(), file.resolve().as_uri()))
    except OSError as exc:
        raise ConfigError(f"cannot read {file}: {exc.strerror or exc}") from None
    meta = {"id": document_id or "", "kind": kind_of(file, kind), "title": title or ("" if path else file.stem),
            "path": path, "author": author, "date": date, "source-url": source or uri, "tags": tags or [],
            "collection": collection}
    response = await api.request("librarian", {
        "operation": "add-document", "document-metadata": meta, "collection": collection,
        "content": base64.b64encode(content).decode()})
    return Stored(response["document-metadata"], list(response.get("replaced") or []))


async def add_document(api: Api, file: Path, *, collection: str, kind: str | None = None, title: str | None = None,
                       document_id: str | None = None, author: str = "", source: str = "",
                       tags: list[str] | None = None, date: str = "", path: str = "") -> dict:
    """Upload one file; returns the stored document metadata (see `store_document`)."""
    return (await store_document(api, file, collection=collection, path=path, kind=kind, title=title,
                                 document_id=document_id, author=author, source=source, tags=tags, date=date)).meta


async def process(api: Api, document_id: str, flow: str, collection: str) -> None:
    await api.request("librarian", {"operation": "add-processing", "processing-metadata": {
        "document-id": document_id, "flow": flow, "collection": collection}})


async def extraction_progress(api: Api, flow: str, document_id: str, collection: str) -> tuple[int, int]:
    """(chunks, chunks with a subgraph) of a document, from its provenance in urn:graph:source."""
    response = await api.flow_service(flow, "sparql", {"query": PROGRESS_QUERY % document_id,
                                                       "collection": collection})
    row = (response.get("bindings") or [{}])[0]
    return int(row.get("chunks", {}).get("v", 0)), int(row.get("done", {}).get("v", 0))


async def failed_chunks(api: Api, flow: str, documents: list[str], collection: str) -> list[tuple[str, str]]:
    """(chunk, what failed and why) for every chunk of these documents that a processor gave up on:
    its extraction failed, or an indexer could not store its vectors."""
    failed = []
    for document in documents:
        failed += await document_failures(api, flow, document, collection)
    return failed


async def document_failures(api: Api, flow: str, document: str, collection: str) -> list[tuple[str, str]]:
    """(chunk, reason) for each chunk of one document a processor gave up on, and (document, reason)
    when a processor gave up on the document itself (the chunker, which leaves no chunk to mark)."""
    response = await api.flow_service(flow, "sparql", {"query": FAILURES_QUERY % {"document": document},
                                                       "collection": collection})
    return [(row["chunk"].get("i", ""), row["error"].get("v", "")) for row in response.get("bindings") or []]


async def wait_for_extraction(api: Api, flow: str, documents: list[str], collection: str, timeout: float,
                              on_progress: Callable[[int, int], None] | None = None) -> int:
    """Wait until every document has settled (see `settle`) and the vectors are indexed;
    `on_progress(done, chunks)` hears each poll. Returns the number of chunks. Documents that
    failed are not an error here (`failed_chunks` names them); documents still unsettled at the
    timeout are."""
    deadline = time.monotonic() + timeout
    settlement = await settle(api, flow, documents, collection, timeout, on_progress)
    if settlement.unsettled:
        raise ConfigError(f"extraction not finished after {timeout:g}s: {settlement.unsettled_summary()}")
    await wait_for_vectors(api, flow, collection, settlement.indexable_chunks, max(1.0, deadline - time.monotonic()))
    return settlement.chunks


async def settle(api: Api, flow: str, documents: list[str], collection: str, timeout: float,
                 on_progress: Callable[[int, int], None] | None = None,
                 on_settled: Callable[[int, int], None] | None = None) -> Settlement:
    """Poll each document until it has settled or `timeout` passes: a document settles once it has
    chunk records and every chunk has its subgraph, the same on two polls in a row, or once a
    processor recorded giving up on the document. A document with no chunk record yet keeps the
    wait going: it may still be queued, or its chunks lost, and only the timeout tells which.
    Each poll tells `on_progress(chunks done, chunks)` and `on_settled(documents settled, documents)`."""
    deadline = time.monotonic() + timeout
    states = {document: DocumentState(document) for document in dict.fromkeys(documents)}
    while True:
        for state in states.values():
            if not state.settled:
                await poll_document(api, flow, collection, state)
        if on_progress is not None:
            on_progress(sum(s.done for s in states.values()), sum(s.chunks for s in states.values()))
        if on_settled is not None:
            on_settled(sum(s.settled for s in states.values()), len(states))
        if all(state.settled for state in states.values()):
            return Settlement(list(states.values()), timed_out=False)
        if time.monotonic() > deadline:
            return Settlement(list(states.values()), timed_out=True)
        await asyncio.sleep(0.3)


async def poll_document(api: Api, flow: str, collection: str, state: DocumentState) -> None:
    """One look at one document; its failures are read when it looks finished or has no chunks yet
    (the chunker's give-up is then the only sign), so a busy document costs one query a poll."""
    state.observe(*await extraction_progress(api, flow, state.document, collection))
    if state.complete or not state.chunks:
        state.failures = await document_failures(api, flow, state.document, collection)


async def wait_for_vectors(api: Api, flow: str, collection: str, chunks: int, timeout: float) -> None:
    """Wait until the chunk vectors are all indexed and the entity index has stopped growing:
    GraphRAG finds its seed entities there, so a question asked earlier could miss them."""
    probe = (await api.flow_service(flow, "embeddings", {"texts": ["probe"]}))["vectors"][0]
    deadline = time.monotonic() + timeout
    previous, steady = -1, 0
    while True:
        indexed = len((await api.flow_service(flow, "document-embeddings", {
            "vector": probe, "limit": 1000, "collection": collection})).get("matches", []))
        entities = len((await api.flow_service(flow, "graph-embeddings", {
            "vector": probe, "limit": 1000, "collection": collection})).get("matches", []))
        steady = steady + 1 if indexed >= min(chunks, 1000) and entities == previous else 0
        if steady >= 2:
            return
        if time.monotonic() > deadline:
            raise ConfigError(f"vector indexing not finished after {timeout:g}s ({indexed}/{chunks} chunks)")
        previous = entities
        await asyncio.sleep(0.5)
