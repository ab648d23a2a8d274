"""The offline extractor in worker processes (TG_EXTRACT_WORKERS, 1 by default): chunks are parsed in a real
spawned process, and a worker killed mid-ingest costs nothing: kg-extract starts new ones and the chunk is
extracted again on redelivery."""

from __future__ import annotations

import os
import signal

import pytest

from tracegraph.base.provenance.uris import entity_uri, relation_uri

from support.ingest import ingest_stack, load_and_wait

pytestmark = pytest.mark.timeout(300)


async def facts(api, subject: str) -> set[tuple[str, str]]:
    reply = await api.flow_service("default", "triples", {"s": {"t": "i", "i": entity_uri(subject)}, "limit": 100})
    return {(t["p"]["i"], t["o"].get("i", "")) for t in reply["response"]}


async def test_chunks_are_parsed_in_worker_processes_and_a_killed_worker_is_replaced(tmp_path):
    (tmp_path / "billing.md").write_text("# Billing\n\nBilling calls Ledger and Tax.\n")
    (tmp_path / "orders.md").write_text("# Orders\n\nOrders depends on the Ledger service.\n")
    async with ingest_stack(tmp_path / "data", extract_workers=1) as (api, stack):
        await load_and_wait(api, tmp_path / "billing.md")
        assert (relation_uri("calls"), entity_uri("Ledger")) in await facts(api, "Billing")
        extractor = stack["kg-extract"].offline
        workers = list(extractor._pool._processes.values())
        assert len(workers) == 1 and workers[0].pid != os.getpid() and workers[0].is_alive()

        os.kill(workers[0].pid, signal.SIGKILL)
        workers[0].join(10)
        await load_and_wait(api, tmp_path / "orders.md")
        assert (relation_uri("depends on"), entity_uri("Ledger")) in await facts(api, "Orders")
        replaced = list(extractor._pool._processes.values())
        assert replaced and replaced[0].pid != workers[0].pid
