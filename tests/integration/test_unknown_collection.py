"""A question for a collection nothing was ever loaded into fails with `unknown-collection`, naming it,
on every answering service, and leaves nothing behind there: no answer document, no trace. A collection
is known once anything was loaded into it, a library document or triples imported into its graph."""

from __future__ import annotations

import pytest

from tracegraph.base.errors import RemoteError
from tracegraph.cli.library_upload import add_document

from support.ingest import CORPUS, ingest_stack
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(300)

QUESTION = "What does Helios Grid depend on?"
REQUESTS = {  # service -> the body of a question for it
    "graph-rag": {"query": QUESTION},
    "document-rag": {"query": QUESTION},
    "search": {"query": QUESTION},
    "agent": {"question": QUESTION},
}


async def ask(api, service: str, collection: str) -> list[dict]:
    return [m async for m in api.stream("default", service, {**REQUESTS[service], "collection": collection})]


async def left_in(api, collection: str) -> tuple[list, list]:
    """(library documents, triples of any graph) of a collection."""
    documents = await api.request("librarian", {"operation": "list-documents", "collection": collection})
    triples = await api.flow_service("default", "triples", {"collection": collection, "g": "*", "limit": 10})
    return documents.get("document-metadatas") or [], triples["response"]


@pytest.mark.parametrize("service", list(REQUESTS))
async def test_an_unknown_collection_is_refused_and_left_empty(tmp_path, service):
    async with ingest_stack(tmp_path) as (api, _):
        await add_document(api, CORPUS / "helios-grid.md", collection="default")  # another collection is known
        with pytest.raises(RemoteError) as refused:
            await ask(api, service, "never-loaded")
        assert refused.value.type == "unknown-collection"
        assert "'never-loaded'" in refused.value.message
        assert await left_in(api, "never-loaded") == ([], [])


async def test_a_collection_is_known_by_a_library_document_or_by_imported_triples(tmp_path):
    async with ingest_stack(tmp_path) as (api, _):
        await add_document(api, CORPUS / "helios-grid.md", collection="added")
        for service in REQUESTS:
            last = (await ask(api, service, "added"))[-1]
            assert last.get("end_of_session") or last.get("end_of_dialog"), (service, last)

        await api.request("flow/default/import/triples-bulk", {
            "metadata": {"id": "urn:test:fact", "root": "urn:test:fact", "collection": "imported"},
            "nquads": "<https://trustgraph.ai/e/helios-grid> <https://trustgraph.ai/r/depends-on> "
                      "<https://trustgraph.ai/e/corvid-analytics> .\n", "count": 1})

        async def imported() -> list:
            return (await left_in(api, "imported"))[1]
        await wait_until_async(imported, what="the imported fact stored")
        for service in REQUESTS:  # the agent too: it looks in the graph before the library
            last = (await ask(api, service, "imported"))[-1]
            assert last.get("end_of_session") or last.get("end_of_dialog"), (service, last)
