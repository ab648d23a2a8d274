"""Ingest end to end on the embedded defaults: library → chunks → offline extraction → triples and
vectors, every edge traceable to its document by one SPARQL query; removal; bad input; idempotence."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

from tracegraph.base.errors import RemoteError

from support.ingest import CORPUS, ingest_stack, load_and_wait

pytestmark = pytest.mark.timeout(300)

EDGE_TO_DOCUMENT = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
SELECT ?subgraph ?chunk ?document ?title ?extractor WHERE {
  GRAPH <urn:graph:source> {
    ?subgraph tg:contains <<( <https://trustgraph.ai/e/helios-grid> <https://trustgraph.ai/r/depends-on>
                              <https://trustgraph.ai/e/corvid-analytics> )>> ;
              tg:extractor ?extractor ;
              prov:wasDerivedFrom ?chunk .
    ?chunk a tg:Chunk ; prov:wasDerivedFrom+ ?document .
  }
  ?document a tg:Document ; dc:title ?title .
}"""


ORPHAN_LABELS = """
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?e WHERE {
  ?e rdfs:label ?l . FILTER(STRSTARTS(STR(?e), "https://trustgraph.ai/e/"))
  FILTER NOT EXISTS { ?e ?p ?o . FILTER(?p != rdfs:label) }
  FILTER NOT EXISTS { ?s ?q ?e }
  FILTER NOT EXISTS { GRAPH <urn:graph:source> { ?sg <https://trustgraph.ai/ns/mentions> ?e } }
}"""


async def count(api, graph: str = "*") -> int:
    r = await api.flow_service("default", "sparql", {"query": f"SELECT (COUNT(*) AS ?n) WHERE {{ "
                               + ("GRAPH ?g { ?s ?p ?o }" if graph == "*" else "?s ?p ?o") + " }"})
    return int(r["bindings"][0]["n"]["v"])


async def test_corpus_ingest_traces_an_edge_to_its_document_and_removal_cleans_up(tmp_path):
    async with ingest_stack(tmp_path) as (api, stack):
        doc = await load_and_wait(api, CORPUS / "helios-grid.md")
        other = await load_and_wait(api, CORPUS / "corvid-analytics.md")

        rows = (await api.flow_service("default", "sparql", {"query": EDGE_TO_DOCUMENT}))["bindings"]
        assert rows, "the edge should resolve to its chunk and document"
        assert {r["document"]["i"] for r in rows} == {doc}
        assert rows[0]["title"]["v"] == "helios-grid" and rows[0]["extractor"]["v"] == "offline"

        hits = (await api.flow_service("default", "document-embeddings", {
            "vector": (await api.flow_service("default", "embeddings", {"texts": ["who forecasts load?"]}))
            ["vectors"][0], "limit": 3}))["matches"]
        assert hits and hits[0]["document"] in {doc, other} and "forecast" in hits[0]["text"].lower()

        entity = (await api.flow_service("default", "graph-embeddings", {
            "vector": (await api.flow_service("default", "embeddings", {"texts": ["Helios Grid"]}))["vectors"][0],
            "limit": 1}))["matches"][0]
        assert entity["id"] == "https://trustgraph.ai/e/helios-grid" and entity["score"] > 0.9

        before = await count(api)
        again = await api.request("librarian", {"operation": "add-processing", "processing-metadata": {
            "document-id": doc, "flow": "default"}})
        assert again["processing-metadatas"][0]["document-id"] == doc
        await asyncio.sleep(3)  # let the re-run pass through every processor
        assert await count(api) == before, "re-processing the same document must write nothing new"

        removed = (await api.request("librarian", {"operation": "remove-document", "document-id": doc}))["removed"]
        assert removed["chunks"] >= 1 and removed["triples"] > 0 and removed["vectors"] >= removed["chunks"]
        assert removed["flows"] == ["default"]
        assert not (await api.flow_service("default", "sparql", {"query": EDGE_TO_DOCUMENT}))["bindings"]
        # Facts the other document also states survive; its chain is untouched.
        shared = await api.flow_service("default", "sparql", {"query": EDGE_TO_DOCUMENT.replace(
            "helios-grid> <https://trustgraph.ai/r/depends-on", "corvid-analytics> <https://trustgraph.ai/r/was-acquired-by"
        ).replace("corvid-analytics> )>>", "tarn-holdings> )>>")})
        assert {r["document"]["i"] for r in shared["bindings"]} == {other}
        listed = await api.request("librarian", {"operation": "list-documents"})
        assert [d["id"] for d in listed["document-metadatas"]] == [other]
        # Names no fact and no other chunk uses go with the document; so do its passages' BM25 entries.
        assert not (await api.flow_service("default", "sparql", {"query": ORPHAN_LABELS}))["bindings"]
        passages = await api.flow_service("default", "passage-keywords", {"query": "Helios Grid load forecasting"})
        assert passages["matches"] and all(m["document"] == other for m in passages["matches"])


@pytest.mark.parametrize("content, kind, message", [
    (b"", "text/plain", "document is empty"),
    (b"\x00\x01garbage", "text/plain", "looks binary"),
    (b"%PDF-1.4 nonsense", "application/pdf", "unreadable PDF"),
])
async def test_bad_documents_get_a_clear_error_and_nothing_is_stored(tmp_path, content, kind, message):
    async with ingest_stack(tmp_path) as (api, _):
        with pytest.raises(RemoteError, match=message):
            await api.request("librarian", {"operation": "add-document", "content": base64.b64encode(content).decode(),
                                            "document-metadata": {"id": "urn:bad", "kind": kind}})
        assert (await api.request("librarian", {"operation": "list-documents"})).get("document-metadatas") == []


async def test_oversize_document_is_refused(tmp_path):
    async with ingest_stack(tmp_path, max_document_bytes=1000) as (api, _):
        with pytest.raises(RemoteError, match="over the limit of 1,000"):
            await api.request("librarian", {"operation": "add-document", "document-metadata": {"kind": "text/plain"},
                                            "content": base64.b64encode(b"word " * 1000).decode()})


async def test_broken_sparql_and_updates_are_refused_and_the_store_keeps_working(tmp_path):
    async with ingest_stack(tmp_path) as (api, _):
        with pytest.raises(RemoteError, match="(?i)syntax|parse|expected"):
            await api.flow_service("default", "sparql", {"query": "SELEKT nothing"})
        with pytest.raises(RemoteError, match="(?i)read-only|update"):
            await api.flow_service("default", "sparql", {"query": "INSERT DATA { <urn:a> <urn:b> <urn:c> }"})
        assert (await api.flow_service("default", "sparql", {"query": "ASK { ?s ?p ?o }"}))["boolean"] is False


async def test_a_hops_neighbourhood_comes_in_one_request_and_bad_ones_are_refused(tmp_path):
    async with ingest_stack(tmp_path) as (api, _):
        await load_and_wait(api, CORPUS / "helios-grid.md")
        helios, corvid = "https://trustgraph.ai/e/helios-grid", "https://trustgraph.ai/e/corvid-analytics"
        found = (await api.flow_service("default", "triples", {"around": [helios, corvid], "limit": 50}))["response"]
        assert found and all(helios in (t["s"].get("i"), t["o"].get("i")) or corvid in (t["s"].get("i"), t["o"].get("i"))
                             for t in found)
        assert any(t["s"].get("i") == helios and t["o"].get("i") == corvid for t in found)
        assert len({json.dumps(t, sort_keys=True) for t in found}) == len(found), "each triple once"
        with pytest.raises(RemoteError, match="either a pattern"):
            await api.flow_service("default", "triples", {"around": [helios], "s": {"t": "i", "i": helios}})
        with pytest.raises(RemoteError, match="exceeds"):
            await api.flow_service("default", "triples", {"around": [helios] * 600, "limit": 1000})
        for bad in ("not an iri", ""):
            with pytest.raises(RemoteError, match="(?i)invalid|at least 1 character"):
                await api.flow_service("default", "triples", {"around": [bad]})
        assert (await api.flow_service("default", "triples", {"around": [helios], "limit": 1}))["response"]


async def test_a_body_over_the_gateway_limit_gets_a_json_error(tmp_path):
    import aiohttp

    async with ingest_stack(tmp_path, max_document_bytes=1000) as (api, _):
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{api.url}api/v1/librarian", data=b"x" * 3_000_000,
                                    headers={"Content-Type": "application/json"}) as response:
                body = await response.json()
        assert response.status == 413 and body["error"]["type"] == "too-large"
        assert (await api.request("librarian", {"operation": "list-documents"})).get("document-metadatas") == []


PAGE_CHAIN = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?pageLabel ?chunkLabel ?document WHERE {
  GRAPH <urn:graph:source> {
    ?subgraph tg:contains <<( <https://trustgraph.ai/e/orbis-cloud> <https://trustgraph.ai/r/is-operated-by>
                              <https://trustgraph.ai/e/orbis-systems> )>> ;
              prov:wasDerivedFrom ?chunk .
    ?chunk a tg:Chunk ; rdfs:label ?chunkLabel ; prov:wasDerivedFrom ?page .
    ?page a tg:Page ; rdfs:label ?pageLabel ; tg:pageNumber ?number ; prov:wasDerivedFrom ?document .
  }
}"""


async def test_pdf_pages_sit_between_chunks_and_the_document(tmp_path):
    from support.pdf import make_pdf

    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(make_pdf(["Helios Grid depends on Corvid Analytics.", "Orbis Systems operates Orbis Cloud."]))
    async with ingest_stack(tmp_path) as (api, _):
        doc = await load_and_wait(api, pdf)
        rows = (await api.flow_service("default", "sparql", {"query": PAGE_CHAIN}))["bindings"]
        assert [(r["pageLabel"]["v"], r["chunkLabel"]["v"], r["document"]["i"]) for r in rows] == \
            [("Page 2", "Chunk 1", doc)]
