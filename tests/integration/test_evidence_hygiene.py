"""A library document's description and our provenance are never evidence: on the whole in-process
stack, with the sample corpus loaded under titles, an author and a source, neither the keyword index,
nor `search`, nor GraphRAG's focus ever hands back a dc:, tg: or prov: triple, a triple typing a node
as a provenance record, or text such as "has title", "mimeType" or "is a Document".

One document is filed under the IRI of the entity it is about, as a user naming documents after their
subject would: its description then sits on a node GraphRAG and every search strategy walk from, which
is how "Helios Grid has title Helios Grid" reached answers before."""

from __future__ import annotations

import re

import pytest

from tracegraph.base.provenance.uris import entity_uri
from tracegraph.base.provenance.vocab import RDF, is_knowledge, is_knowledge_class
from tracegraph.cli.library_upload import add_document, process, wait_for_extraction
from tracegraph.schemas.rdf import IriTerm, Triple

from support.ingest import CORPUS, ingest_stack
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(120)

DOCUMENTS = [("helios-grid.md", "Helios Grid", entity_uri("Helios Grid")),  # (file, title, id the user chose)
             ("corvid-analytics.md", "Corvid Analytics company profile", None),
             ("orbis-systems.md", "Orbis Systems incident review", None)]
TITLES = [title for _, title, _ in DOCUMENTS]
METADATA_NAMESPACES = ("http://purl.org/dc/elements/1.1/", "http://purl.org/dc/terms/", "https://trustgraph.ai/ns/",
                       "http://www.w3.org/ns/prov#")
METADATA_WORDS = ("has title", "mimeType", "mime type", "is a Document", "is a Entity", "text/markdown")
QUESTIONS = ["What is Helios Grid?", "What does Helios Grid depend on?", "Helios Grid title, date and type",
             "Who wrote the Corvid Analytics company profile, and when?", "Orbis Systems incident review title"]
TITLES_QUERY = """
PREFIX dc: <http://purl.org/dc/elements/1.1/>
SELECT ?title WHERE { ?doc a <https://trustgraph.ai/ns/Document> ; dc:title ?title ; dc:creator ?who }"""
FOCUS_EDGES = """
PREFIX tg: <https://trustgraph.ai/ns/>
SELECT ?edge WHERE { GRAPH <urn:graph:retrieval> { ?focus a tg:Focus ; tg:selectedEdge/tg:edge ?edge } }"""


def metadata(t: Triple) -> bool:
    """A triple this test must never see as evidence, judged independently of `is_knowledge`."""
    if t.p.iri.startswith(METADATA_NAMESPACES):
        return True
    return t.p == RDF.type and isinstance(t.o, IriTerm) and not is_knowledge_class(t.o.iri)


def assert_clean(triples: list[Triple], texts: list[str], where: str) -> None:
    bad = [t for t in triples if metadata(t) or not is_knowledge(t)]
    assert not bad, f"{where}: metadata as evidence: {bad}"
    said = [text for text in texts if any(word.lower() in text.lower() for word in METADATA_WORDS)]
    assert not said, f"{where}: evidence reads as metadata: {said}"


@pytest.fixture
async def stack(tmp_path):
    async with ingest_stack(tmp_path) as (api, running):
        documents = []
        for name, title, document_id in DOCUMENTS:
            meta = await add_document(api, CORPUS / name, collection="default", title=title, document_id=document_id,
                                      author="Vale Research Desk", source=f"https://example.org/reports/{name}")
            await process(api, meta["id"], "default", "default")
            documents.append(meta["id"])
        await wait_for_extraction(api, "default", documents, "default", 60)
        await wait_until_async(lambda: indexed(api), timeout=30, what="the keyword index to hold the corpus")
        yield api, running


async def indexed(api) -> bool:
    """Every document's facts are searchable by keyword (the index follows the graph asynchronously)."""
    for word in ("Skyline", "Meridian Dam", "Eastmarch"):
        found = await api.flow_service("default", "keyword-query", {"query": word, "limit": 5})
        if not found.get("matches"):
            return False
    return True


async def test_the_keyword_index_never_returns_a_documents_description(stack):
    api, _ = stack
    stored = await api.flow_service("default", "sparql", {"query": TITLES_QUERY})
    assert sorted(b["title"]["v"] for b in stored["bindings"]) == sorted(TITLES), \
        "the descriptions are in the default graph, so there is something that could leak"
    words = sorted({w for title in TITLES for w in re.findall(r"\w+", title)} | {"title", "document"})
    for word in words:
        found = await api.flow_service("default", "keyword-query", {"query": word, "limit": 100})
        matches = found.get("matches", [])
        assert_clean([Triple.model_validate(m["triple"]) for m in matches], [m["text"] for m in matches],
                     f"keyword-query {word!r}")
    assert (await api.flow_service("default", "keyword-query", {"query": "Helios Grid"}))["matches"], \
        "the index does hold the facts"


async def test_search_evidence_is_only_facts(stack):
    api, _ = stack
    for question in QUESTIONS:
        for strategies in (None, ["bm25"], ["graph"]):  # all the router picks, then one strategy alone
            reply = await api.request("search", {"query": question, "use-cache": False, "strategies": strategies})
            evidence = reply.get("evidence") or []
            where = f"search {question!r} ({strategies or 'routed'})"
            assert_clean([Triple.model_validate(e["triple"]) for e in evidence], [e["text"] for e in evidence], where)
            assert_clean([], [reply.get("response", "")], where)
    reply = await api.request("search", {"query": "What does Helios Grid depend on?"})
    assert any("Corvid Analytics" in e["text"] for e in reply["evidence"]), "real facts still make evidence"


async def test_graph_rag_focus_selects_only_facts(stack):
    api, _ = stack
    for question in QUESTIONS:
        events = [m async for m in api.stream("default", "graph-rag", {"query": question})]
        selected = [Triple.model_validate(t["o"]["tr"]) for m in events if m.get("message_type") == "explain"
                    for t in m["explain_triples"] if t["p"].get("i") == "https://trustgraph.ai/ns/edge"]
        answer = "".join(m.get("response") or "" for m in events if m.get("message_type") == "chunk")
        assert_clean(selected, [answer], f"graph-rag {question!r}")
    stored = await api.flow_service("default", "sparql", {"query": FOCUS_EDGES})
    edges = [Triple.model_validate(b["edge"]["tr"]) for b in stored["bindings"]]
    assert edges, "the focus edges are stored"
    assert_clean(edges, [], "stored focus edges")
