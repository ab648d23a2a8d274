"""The review queue end to end, through the gateway: a strict flow queues doubtful facts instead of
writing them; approving one puts it in the graph with its record attributed to the reviewer; a
rejected one stays out when the document is processed again; the queue survives a restart."""

from __future__ import annotations

import pytest

from tracegraph.base.extraction.clauses import CANONICAL
from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.cli.library_upload import add_document, process, wait_for_extraction

from support.ingest import CORPUS, ingest_stack
from support.stack import start_flow, wait_until_async

pytestmark = pytest.mark.timeout(300)

DEPENDS = (entity_uri("Helios Grid"), relation_uri("depends on"), entity_uri("Corvid Analytics"))
ATTRIBUTED = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
SELECT ?who ?when ?item WHERE { GRAPH <urn:graph:history> {
  ?r rdf:reifies <<( <%s> <%s> <%s> )>> ; prov:wasAttributedTo ?who ; tg:reviewedAt ?when ; tg:reviewedItem ?item } }"""


async def in_graph(api, fact: tuple[str, str, str]) -> bool:
    query = "ASK { <%s> <%s> <%s> }" % fact
    return (await api.flow_service("strict", "sparql", {"query": query, "collection": "strict"}))["boolean"]


async def queue(api, status: str = "pending") -> list[dict]:
    reply = await api.flow_service("strict", "review", {"operation": "list", "status": status, "collection": "strict"})
    return reply.get("items", [])


def find(items: list[dict], fact: tuple[str, str, str]) -> dict:
    return next(i for i in items if (i["s"].get("i"), i["p"].get("i"), i["o"].get("i")) == fact)


async def ingest(api, document_path) -> str:
    meta = await add_document(api, document_path, collection="strict")
    await process(api, meta["id"], "strict", "strict")
    await wait_for_extraction(api, "strict", [meta["id"]], "strict", 120)
    return meta["id"]


async def test_queued_approved_rejected_and_kept_across_processing_and_restart(tmp_path):
    async with ingest_stack(tmp_path) as (api, stack):
        await start_flow(stack.backend, "strict", "default", {"review-threshold": "0.86"})
        await stack.joined("strict")
        document = await ingest(api, CORPUS / "helios-grid.md")

        pending = await wait_until_async(lambda: queue(api), what="doubtful facts queued")
        depends = find(pending, DEPENDS)
        assert depends["confidence"] == CANONICAL.value and depends["document"] == document and depends["reason"]
        assert depends["labels"]["s"] == "Helios Grid"
        assert not await in_graph(api, DEPENDS)
        rejected = next(i for i in pending if i["id"] != depends["id"])

        approved = await api.flow_service("strict", "review", {"operation": "approve", "ids": [depends["id"]],
                                                               "collection": "strict"})
        assert approved["changed"] and not approved["unknown"]
        assert await in_graph(api, DEPENDS)
        row = (await api.flow_service("strict", "sparql", {"query": ATTRIBUTED % DEPENDS,
                                                            "collection": "strict"}))["bindings"]
        assert row and row[0]["who"]["i"] == "urn:trustgraph:user:admin" and row[0]["item"]["i"].endswith(
            depends["id"].rsplit(":", 1)[-1])
        await api.flow_service("strict", "review", {"operation": "reject", "ids": [rejected["id"]],
                                                    "collection": "strict"})
        unknown = await api.flow_service("strict", "review", {"operation": "approve", "ids": ["no-such-item"],
                                                              "collection": "strict"})
        assert unknown["unknown"] == ["no-such-item"]

        await process(api, document, "strict", "strict")  # processed again: nothing re-queued
        await wait_for_extraction(api, "strict", [document], "strict", 120)
        still = await queue(api)
        assert rejected["id"] not in {i["id"] for i in still} and depends["id"] not in {i["id"] for i in still}
        assert {i["id"] for i in await queue(api, "rejected")} == {rejected["id"]}
        assert await in_graph(api, DEPENDS)
        left = len(still)

    async with ingest_stack(tmp_path) as (api, stack):  # the queue is stored with the collection
        await stack.joined("strict")
        assert len(await queue(api)) == left
        assert find(await queue(api, "approved"), DEPENDS)["reviewed-by"] == "admin"
