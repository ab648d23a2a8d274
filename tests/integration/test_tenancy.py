"""Two users behind one gateway: neither can read nor list the other's documents, facts or traces."""

from __future__ import annotations

import pytest

from tracegraph.base.errors import RemoteError
from tracegraph.cli.api import Api
from tracegraph.cli.socket_client import SocketClient

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(240)

QUESTION = {"query": "What does Helios Grid depend on?", "collection": "research", "streaming": True}


async def test_users_see_only_their_own_collections_and_traces(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("alice alice-token admin\nbob bob-token\n")
    async with ingest_stack(tmp_path, gateway_tokens=tokens) as (_api, stack):
        url = f"http://127.0.0.1:{stack['gateway'].port}/"
        alice, bob = Api(url, token="alice-token"), Api(url, token="bob-token")
        document = await load_and_wait(alice, CORPUS / "helios-grid.md", collection="research")

        async with SocketClient(url, token="alice-token") as socket:
            events = [r async for r in socket.stream("graph-rag", QUESTION, flow="default")]
        question = events[0]["explain_id"]
        assert events[-1]["sources"], "alice's question should find her document"

        # Alice sees her document, facts and trace.
        listed = await alice.request("librarian", {"operation": "list-documents", "collection": "research"})
        assert {d["id"] for d in listed["document-metadatas"] if d["document-type"] == "source"} == {document}
        traces = {"p": {"t": "i", "i": "https://trustgraph.ai/ns/query"}, "g": "urn:graph:retrieval",
                  "collection": "research"}
        async def questions(api: Api) -> list[str]:
            return [t["s"]["i"] for t in (await api.flow_service("default", "triples", traces))["response"]]

        assert await wait_until_async(lambda: questions(alice), what="alice's stored trace") == [question]

        # Bob, asking for the same collection by name, finds nothing of hers anywhere.
        listed = await bob.request("librarian", {"operation": "list-documents", "collection": "research"})
        assert listed.get("document-metadatas", []) == []
        assert (await bob.flow_service("default", "triples", traces))["response"] == []
        everything = await bob.flow_service("default", "triples", {"g": "*", "collection": "research", "limit": 10})
        assert everything["response"] == []
        count = await bob.flow_service("default", "sparql", {
            "collection": "research", "query": "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"})
        assert count["bindings"][0]["n"]["v"] == "0"
        with pytest.raises(RemoteError, match="not-found|no document"):
            await bob.request("librarian", {"operation": "get-document-content", "document-id": document})
        # Asking it, bob is told his own "research" does not exist; nothing of hers answers him.
        async with SocketClient(url, token="bob-token") as socket:
            with pytest.raises(RemoteError, match="unknown-collection"):
                [r async for r in socket.stream("graph-rag", QUESTION, flow="default")]
        with pytest.raises(RemoteError, match="unknown-collection"):
            await bob.request("search", {"query": "What are the top risks?", "collection": "research", "global": True})
        # Once he loads a document of his own there, his answers come from it alone.
        own = await load_and_wait(bob, CORPUS / "corvid-analytics.md", collection="research")
        async with SocketClient(url, token="bob-token") as socket:
            theirs = [r async for r in socket.stream("graph-rag", QUESTION, flow="default")]
        assert {s["uri"] for s in theirs[-1].get("sources") or []} <= {own}

        # Naming alice explicitly is refused, in the body or in the nested metadata.
        for body in ({"operation": "list-documents", "user": "alice"},
                     {"operation": "add-document", "document-metadata": {"user": "alice", "title": "x"},
                      "content": ""}):
            with pytest.raises(RemoteError, match="access-denied"):
                await bob.request("librarian", body)
        with pytest.raises(RemoteError, match="access-denied"):
            await bob.flow_service("default", "triples", {**traces, "workspace": "alice"})
        # Bob's own question leaves a trace only bob can see.
        assert await wait_until_async(lambda: questions(bob), what="bob's stored trace") == [theirs[0]["explain_id"]]
        assert await questions(alice) == [question]

        # Communities and the RAPTOR tree are per user too: bob's come from his document only, his global
        # answer never cites hers, and he cannot ask for hers by name.
        async def reports(api: Api) -> int:
            found = await api.flow_service("default", "community", {"operation": "status", "collection": "research"})
            return found["counts"].get("reports", 0)
        assert await wait_until_async(lambda: reports(alice), timeout=30, what="alice's community reports")
        assert await wait_until_async(lambda: reports(bob), timeout=30, what="bob's community reports")
        strangers = ("ASK { GRAPH <urn:graph:community> { ?c <https://trustgraph.ai/ns/member> ?e } "
                     "FILTER NOT EXISTS { { ?e ?p ?o } UNION { ?s ?q ?e } } }")
        assert (await bob.flow_service("default", "sparql", {"collection": "research", "query": strangers}))[
            "boolean"] is False, "bob's communities hold only entities of his own graph"
        answer = await bob.request("search", {"query": "What are the top risks?", "collection": "research",
                                              "global": True})
        assert document not in {s["uri"] for s in answer.get("sources") or []}
        with pytest.raises(RemoteError, match="access-denied"):
            await bob.flow_service("default", "community", {"operation": "rebuild", "collection": "research",
                                                            "user": "alice"})
