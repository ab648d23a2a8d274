"""A full disk is a transient fault: the data folder on a small filesystem is filled mid-ingest, then
freed, and every document ends up complete (its chunk records, a subgraph for every chunk, every chunk's
vector) without restarting anything, while the librarian refused new documents meanwhile in one clear
line. Before, the triples processor's RocksDB store kept its background error while it stayed open, so
every write for the collection failed until each message was given up (the chunk records of whole
documents lost), and document-embeddings treated SQLite's `database or disk is full` as permanent."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
from pathlib import Path

import pytest

from tracegraph.base.errors import RemoteError, TraceGraphError
from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import add_document, process

from support.cluster import Cluster
from support.procs import tg
from support.fault_corpus import write_corpus

pytestmark = [pytest.mark.rabbitmq, pytest.mark.faults, pytest.mark.timeout(300)]

PROCESSES = ["config", "librarian", "triples", "keyword-index", "embeddings", "graph-embeddings",
             "document-embeddings", "text-completion", "kg-extract", "chunker", "gateway"]
MODULES = ["json", "heapq", "csv", "uuid", "wave", "sched", "timeit", "shelve"]
FILESYSTEM_MB = 96
FULL_SECONDS = 10.0  # how long the disk stays full: far longer than a message's attempts without the fix
SETTLE_TIMEOUT = 150.0
COLLECTION = "disk-full"

CHUNKS_OF_DOCUMENTS = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX tg: <https://trustgraph.ai/ns/>
SELECT ?doc ?chunk (COUNT(?subgraph) AS ?n) WHERE { GRAPH <urn:graph:source> {
  ?chunk a tg:Chunk ; prov:wasDerivedFrom ?doc .
  OPTIONAL { ?subgraph a tg:Subgraph ; prov:wasDerivedFrom ?chunk } } } GROUP BY ?doc ?chunk"""
FAILURES = """PREFIX tg: <https://trustgraph.ai/ns/>
SELECT ?s ?error WHERE { GRAPH <urn:graph:source> { ?s tg:indexingError ?error } }"""


@contextlib.contextmanager
def small_filesystem(folder: Path, megabytes: int):
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs for the data folder (needs root): {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder: Path) -> Path:
    """Take every free byte of `folder`'s filesystem with one file."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        for size in (1 << 20, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return filler


def _value(term: dict) -> str:
    return term.get("i") or term.get("v") or ""


async def sparql(api: Api, query: str) -> list[dict]:
    reply = await api.flow_service("default", "sparql", {"query": query, "collection": COLLECTION, "limit": 100_000})
    return reply["bindings"]


async def load(api: Api, path: Path, refusals: list[str]) -> str:
    """Add and process one document as a careful client does: a refusal for a full disk (or a service
    briefly away) is tried again a moment later."""
    while True:
        try:
            meta = await add_document(api, path, collection=COLLECTION, document_id=f"urn:disk-full:{path.stem}")
            await process(api, meta["id"], "default", COLLECTION)
            return meta["id"]
        except RemoteError as exc:
            if exc.type == "out-of-space" or "no space left" in exc.message.lower():
                refusals.append(exc.message)
            elif exc.type != "unavailable":
                raise
        except TraceGraphError as exc:
            if "unavailable" not in str(exc):
                raise
        await asyncio.sleep(1.0)


async def completeness(api: Api, documents: list[str]) -> list[str]:
    """What is missing: documents without chunk records, chunks without a subgraph or a vector, failures."""
    per_doc: dict[str, dict[str, int]] = {doc: {} for doc in documents}
    for row in await sparql(api, CHUNKS_OF_DOCUMENTS):
        doc = _value(row["doc"])
        if doc in per_doc:
            per_doc[doc][_value(row["chunk"])] = int(_value(row["n"]))
    probe = (await api.flow_service("default", "embeddings", {"texts": ["probe"]}))["vectors"][0]
    vectors = {m["id"] for m in (await api.flow_service("default", "document-embeddings", {
        "vector": probe, "limit": 1000, "collection": COLLECTION}))["matches"]}
    gaps = [f"{doc}: no chunk records" for doc, chunks in per_doc.items() if not chunks]
    chunks = {chunk: n for of_doc in per_doc.values() for chunk, n in of_doc.items()}
    gaps += [f"{chunk}: no subgraph" for chunk, n in chunks.items() if n == 0]
    gaps += [f"{chunk}: no vector" for chunk in chunks if chunk not in vectors]
    gaps += [f"recorded failure {_value(r['s'])}: {_value(r['error'])}" for r in await sparql(api, FAILURES)]
    return gaps


def test_a_disk_filled_mid_ingest_then_freed_loses_nothing(rabbitmq_url, tmp_path):
    data = tmp_path / "data"
    with small_filesystem(data, FILESYSTEM_MB):
        cluster = Cluster(rabbitmq_url, data, tmp_path / "logs", TG_RETRY_BACKOFF="0.25", TG_MAX_ATTEMPTS="5",
                          TG_MIN_FREE_MB="1", TG_UNAVAILABLE_TIMEOUT="3", TG_REQUEST_TIMEOUT="60")
        corpus = write_corpus(tmp_path / "corpus", MODULES)

        async def scenario() -> tuple[list[str], list[str], str]:
            await cluster.start_all(PROCESSES)
            api = Api(cluster.gateway, token=cluster.tokens["user0"], timeout=120)
            refusals: list[str] = []
            ids = [await load(api, path, refusals) for path in corpus[:3]]
            filler = fill(data)  # documents 1-3 are still being chunked, extracted and indexed

            async def free_later() -> None:
                await asyncio.sleep(FULL_SECONDS)
                filler.unlink()

            freeing = asyncio.create_task(free_later())
            refused = await asyncio.to_thread(  # what a user loading a file meanwhile sees
                tg, "tg-load-text", "-u", cluster.gateway, "--token", cluster.tokens["user1"], "-C", COLLECTION,
                str(corpus[-1]))
            ids += [await load(api, path, refusals) for path in corpus[3:]]
            await freeing
            deadline = time.monotonic() + SETTLE_TIMEOUT
            while (gaps := await completeness(api, ids)) and time.monotonic() < deadline:
                await asyncio.sleep(2.0)
            return gaps, refusals, refused.stderr

        try:
            gaps, refusals, refused = asyncio.run(scenario())
        finally:
            asyncio.run(cluster.stop_all())
        logs = {name: cluster.log_of(name).read_text(errors="replace") for name in PROCESSES}

    full = [name for name in ("triples", "document-embeddings") if "no space left" in logs[name].lower()
            or "disk is full" in logs[name].lower() or "disk full" in logs[name].lower()]
    assert full, "the fault did not strike: no store write met the full disk"
    assert not gaps, f"{len(gaps)} gap(s) after the disk was freed: {gaps[:5]}"
    assert refusals, "the librarian took documents while its disk was full"
    assert refusals[0].startswith(("not enough free disk space", "the librarian's disk is full")), refusals[0]
    assert "\n" not in refusals[0] and "/" not in refusals[0], refusals[0]
    assert refused.startswith("tg-load-text: error: out-of-space: ") and refused.count("\n") == 1, refused
    for name in PROCESSES:
        assert "giving up on" not in logs[name], f"{name} gave a message up:\n{cluster.tail(name)}"
