"""Derived structures converge: with the triples processor stopped for longer than the community and
RAPTOR processors' retry window while documents are loaded, RAPTOR gives up the chunks it could not
place. Once the triples processor is back, the tree and the communities cover every passage and entity
of the collection without a manual rebuild (graph updates announce the passages, and the periodic
reconciliation repairs what is still missing), and `tg-rebuild-communities --status` says so.
Without it, 14 passages of the four documents loaded during the outage stayed out of the tree for good."""

from __future__ import annotations

import asyncio
import time

import pytest

from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import add_document, process, wait_for_extraction

from faults.test_faults import COLLECTION, assert_derived_complete, derived_gaps, ingest
from support.cluster import Cluster
from support.fault_corpus import write_corpus
from support.procs import tg

pytestmark = [pytest.mark.rabbitmq, pytest.mark.faults, pytest.mark.timeout(240)]

DERIVED = ["community", "raptor"]
REST = ["config", "librarian", "triples", "embeddings", "graph-embeddings", "document-embeddings",
        "text-completion", "kg-extract", "chunker", "gateway"]
# A retry window of about a second, a reconciliation every few: the outage outlasts the one by far.
DERIVED_ENV = {"TG_MAX_ATTEMPTS": "2", "TG_RETRY_BACKOFF": "0.2", "TG_DERIVED_SETTLE": "0.5",
               "TG_DERIVED_RECONCILE": "4"}


async def start_derived(cluster: Cluster) -> None:
    """The two derived processors, with their short retry window (the others keep the defaults)."""
    everyone = cluster.env
    cluster.env = {**everyone, **DERIVED_ENV}
    try:
        for name in DERIVED:
            cluster.start(name)
    finally:
        cluster.env = everyone
    await cluster.wait_joined(DERIVED)


async def wait_for_give_up(cluster: Cluster, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while "giving up on 'chunks'" not in cluster.log_of("raptor").read_text(errors="replace"):
        assert time.monotonic() < deadline, "raptor never gave up a chunk while the triples processor was down"
        await asyncio.sleep(0.5)


async def test_the_tree_and_communities_cover_everything_after_an_outage_longer_than_the_retry_window(
        rabbitmq_url, tmp_path):
    cluster = Cluster(rabbitmq_url, tmp_path / "data", tmp_path / "logs", TG_UNAVAILABLE_TIMEOUT="2",
                      TG_REQUEST_TIMEOUT="30")
    corpus = write_corpus(tmp_path / "corpus", ["json", "heapq", "csv", "uuid", "sched"])
    try:
        await cluster.start_all(REST)
        await start_derived(cluster)
        api = Api(cluster.gateway, token=cluster.tokens["user0"], timeout=60)
        first = await ingest(api, corpus[:1])
        await wait_for_extraction(api, "default", first, COLLECTION, 90)
        await assert_derived_complete(api, timeout=60)  # a tree and communities to keep current

        await cluster.terminate("triples")
        later = []
        for path in corpus[1:]:
            meta = await add_document(api, path, collection=COLLECTION, document_id=f"urn:fault-corpus:{path.stem}")
            await process(api, meta["id"], "default", COLLECTION)
            later.append(meta["id"])
        await wait_for_give_up(cluster)
        await cluster.restart("triples", after=0)

        await wait_for_extraction(api, "default", first + later, COLLECTION, 90)
        await assert_derived_complete(api, timeout=60)
        assert not await derived_gaps(api)
        status = tg("tg-rebuild-communities", "-u", cluster.gateway, "--token", cluster.tokens["user0"],
                    "-C", COLLECTION, "--raptor", "--status")
        assert status.returncode == 0, status.stderr
        covered = [line for line in status.stdout.splitlines() if "coverage:" in line]
        assert covered and covered[0].endswith("passages in the tree (current)"), status.stdout
        counted = covered[0].split("coverage:")[1].split()
        assert counted[0] == counted[2], status.stdout  # "N of N passages"
    finally:
        await cluster.stop_all()
