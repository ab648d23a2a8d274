"""The provenance an export carries beside its trace (cli/trace_export.py), read through the gateway's
`triples` service over a real oxigraph store: an edge's fact, its subgraph → chunk → page → document
records, the chunks an answer used and a kept community report with its community, detection run and
facts; enough for the shapes to pass on the export alone, each record read once."""

from __future__ import annotations

import asyncio

import pytest

from tracegraph.base.communities.detect import Community, DetectionParams
from tracegraph.base.communities.rdf import community_triples, detection_triples, report_triples
from tracegraph.base.communities.reports import Report
from tracegraph.base.provenance import docrag, extraction, global_search, query
from tracegraph.base.provenance.shacl import validate_trace
from tracegraph.base.provenance.uris import agent_uri, chunk_uri, entity_uri, relation_uri, subgraph_uri
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import COMMUNITY_GRAPH, SOURCE_GRAPH, CollectionRef
from tracegraph.cli.trace_export import provenance_of
from tracegraph.schemas.rdf import Triple, iri
from tracegraph.schemas.triples import TriplesQueryRequest, TriplesQueryResponse

REF = CollectionRef("default", "default")
STAMP = "2026-01-01T00:00:00Z"
COMPONENT = extraction.Component("chunker", "1.2")
DOC = "urn:trustgraph:doc:helios-pages"
PAGE = f"{DOC}/p2"
CHUNK = chunk_uri(PAGE, 1, 1000, 100)
SUBGRAPH = subgraph_uri(CHUNK, "offline")
FACT = Triple(s=iri(entity_uri("Helios Grid")), p=iri(relation_uri("depends on")), o=iri(entity_uri("Corvid")))
UNSOURCED = Triple(s=iri(entity_uri("Corvid")), p=iri(relation_uri("owns")), o=iri(entity_uri("Orbis")))
COMMUNITY = "urn:trustgraph:community:0:c1"
RUN = "urn:trustgraph:community-detection:r1"
REPORT = "urn:trustgraph:community-report:0:c1"


def source() -> list[Triple]:
    """A PDF's page 2, its chunk and the subgraph the chunk's facts went into, as extraction writes them."""
    return [*extraction.document_triples(DOC, title="helios-pages", mime_type="application/pdf", date="2026-01-01"),
            *extraction.page_triples(PAGE, DOC, number=2, component=COMPONENT, timestamp=STAMP, char_length=40),
            *extraction.chunk_triples(CHUNK, PAGE, index=1, char_offset=0, char_length=40, chunk_size=1000,
                                      chunk_overlap=100, component=COMPONENT, timestamp=STAMP),
            *extraction.subgraph_triples(SUBGRAPH, CHUNK, [FACT], component=COMPONENT, timestamp=STAMP,
                                         extractor="offline"),
            FACT, UNSOURCED]


def communities() -> list[Triple]:
    report = Report(community=COMMUNITY, title="Helios and its suppliers", summary="…", key_entities=(),
                    key_facts=(FACT,), rating=5.0, rating_reason="central", method="offline: test")
    return [*detection_triples(RUN, DetectionParams(), "full", STAMP, STAMP, 2, 3, "f1", None),
            *community_triples(Community(COMMUNITY, 0, (entity_uri("Helios Grid"),)), RUN),
            *report_triples(report, RUN, None)]


def answer_trace(sid: str, edges: tuple[Triple, ...] = (), reports: tuple[str, ...] = ()) -> list[Triple]:
    """A GraphRAG (or global) trace whose Focus kept these edges (or community reports)."""
    steps = {step: query.step_uri(step, sid) for step in ("grounding", "exploration", "focus", "synthesis")}
    selected = [query.SelectedEdge(s=e.s, p=e.p, o=e.o, reasoning="why", score=0.5) for e in edges]
    kept = [global_search.ScoredReport(r, COMMUNITY, 0, "Helios and its suppliers", 0.8, "closest") for r in reports]
    return [*query.question_triples(query.question_uri(sid), "What does Helios Grid depend on?", STAMP),
            *query.grounding_triples(steps["grounding"], query.question_uri(sid), ["Helios Grid"], None, "offline"),
            *query.exploration_triples(steps["exploration"], steps["grounding"], len(edges), []),
            *query.focus_triples(steps["focus"], steps["exploration"], sid, selected, None, "offline"),
            *global_search.report_selection_triples(steps["focus"], sid, kept),
            *query.synthesis_triples(steps["synthesis"], steps["focus"], None, None, "offline")]


def doc_rag_trace(sid: str) -> list[Triple]:
    question, grounding, exploration = (docrag.question_uri(sid), docrag.step_uri("grounding", sid),
                                        docrag.step_uri("exploration", sid))
    return [*docrag.question_triples(question, "What does Helios Grid depend on?", STAMP),
            *query.grounding_triples(grounding, question, ["Helios Grid"], None, "offline"),
            *docrag.exploration_triples(exploration, grounding, question, [CHUNK], "offline")]


class TriplesService:
    """The gateway's `triples` flow service over a store, as `Api.flow_service` reaches it; counts the calls."""

    def __init__(self, store: OxigraphTripleStore) -> None:
        self.store = store
        self.patterns: list[dict] = []

    async def flow_service(self, flow: str, kind: str, body: dict) -> dict:
        assert kind == "triples", kind
        self.patterns.append(body)
        req = TriplesQueryRequest.model_validate(body)
        found = await self.store.match(REF, req.s, req.p, req.o, req.g, req.limit)
        return TriplesQueryResponse(triples=found).model_dump(by_alias=True, exclude_none=True, mode="json")


@pytest.fixture
async def service(tmp_path):
    store = OxigraphTripleStore(tmp_path)
    await store.add(REF, [*source(), *communities()])
    yield TriplesService(store)
    await store.aclose()


def wire(triples: list[Triple]) -> list[dict]:
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in triples]


async def exported(service: TriplesService, trace: list[Triple]) -> list[Triple]:
    found = await provenance_of(service, "default", "default", wire(trace))
    return list(dict.fromkeys(Triple.model_validate(t) for t in found))


async def test_an_edge_brings_its_fact_and_its_chain_to_the_document(service) -> None:
    trace = answer_trace("s1", edges=(FACT, UNSOURCED))
    found = await exported(service, trace)
    assert set(found) == set(source()), "both facts; the extracted one's subgraph, chunk, page, document, activities"
    assert {t.g for t in found if t.s == iri(PAGE)} == {SOURCE_GRAPH} and {t.g for t in found if t.s == iri(DOC)} == {None}
    assert agent_uri("chunker") in {t.s.iri for t in found}, "the agent the activities name"
    report = await asyncio.to_thread(validate_trace, trace + found)
    assert report.conforms, report.messages
    described = [p for p in service.patterns if "s" in p and "p" not in p]
    assert len(described) == len({(p["s"]["i"], p.get("g")) for p in described}), "each record is read once"


async def test_a_document_rag_trace_alone_fails_the_shapes_and_with_its_chunks_passes(service) -> None:
    trace = doc_rag_trace("d1")
    alone = await asyncio.to_thread(validate_trace, trace)
    assert not alone.conforms and any("tg:selectedChunk" in m for m in alone.messages)
    found = await exported(service, trace)
    assert not any(t.g is None and t.s.iri != DOC for t in found), "no facts: the trace quotes no edge"
    report = await asyncio.to_thread(validate_trace, trace + found)
    assert report.conforms, report.messages


async def test_a_kept_report_brings_its_community_run_and_the_facts_behind_it(service) -> None:
    trace = answer_trace("g1", reports=(REPORT,))
    alone = await asyncio.to_thread(validate_trace, trace)
    assert alone.conforms, "a global trace alone passes the shapes; it just does not reach a document"
    found = await exported(service, trace)
    statements = {(t.s, t.p, t.g) for t in found}  # the store writes xsd:double 1.0 as "1"
    assert statements == {(t.s, t.p, t.g) for t in [*communities(), *source()] if t != UNSOURCED}
    assert {t.g for t in found if t.s.iri in (REPORT, COMMUNITY, RUN)} == {COMMUNITY_GRAPH}
    report = await asyncio.to_thread(validate_trace, trace + found)
    assert report.conforms, report.messages
