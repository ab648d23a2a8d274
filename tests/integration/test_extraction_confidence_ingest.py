"""Extraction confidence through the whole ingest stack: the real `openai` client against a scripted
server, a fact about a name the chunk never mentions sent to review instead of the graph; and a flow
started with its own review-threshold queueing offline facts the default flow keeps."""

from __future__ import annotations

import contextlib
import json

import pytest

from tracegraph.base.extraction.clauses import CANONICAL
from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import SKOS
from tracegraph.cli.library_upload import add_document, process, wait_for_extraction
from tracegraph.schemas.ingest import Triples
from tracegraph.schemas.rdf import Triple, fact_key, iri, literal

from support.observe import observed
from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.openai_stub import OpenAIStub
from support.stack import start_flow

pytestmark = pytest.mark.timeout(300)

TEXT = "Helios Grid depends on Corvid Analytics, which supplies Helios Grid with load forecasts."
REPLY = json.dumps({
    "entities": [{"name": "Helios Grid", "definition": "A regional energy operator."},
                 {"name": "Zorbex", "definition": "A moon of Jupiter."}],
    "relationships": [
        {"subject": "Helios Grid", "predicate": "depends on", "object": "Corvid Analytics", "confidence": 0.9},
        {"subject": "Corvid Analytics", "predicate": "supplies", "object": "Helios Grid"},
        {"subject": "Helios Grid", "predicate": "orbits", "object": "Zorbex", "confidence": 0.9}],
})


def relation(subject: str, predicate: str, obj: str) -> Triple:
    return Triple(s=iri(entity_uri(subject)), p=iri(relation_uri(predicate)), o=iri(entity_uri(obj)))


DEPENDS = relation("Helios Grid", "depends on", "Corvid Analytics")
SUPPLIES = relation("Corvid Analytics", "supplies", "Helios Grid")
ORBITS = relation("Helios Grid", "orbits", "Zorbex")
ZORBEX = Triple(s=iri(entity_uri("Zorbex")), p=SKOS.definition, o=literal("A moon of Jupiter."))

CONTAINED = """
PREFIX tg: <https://trustgraph.ai/ns/>
SELECT (COUNT(?fact) AS ?n) WHERE { GRAPH <urn:graph:source> { ?sg a tg:Subgraph ; tg:contains ?fact } }"""


@contextlib.asynccontextmanager
async def extractions(backend, flow_id: str):
    """The Triples kg-extract sends in `flow_id` from now on: those that carry confidences."""
    async with observed(backend, f"persistent://tg/flow/triples-store:{flow_id}", Triples) as seen:
        yield seen
    seen[:] = [message for message in seen if message.confidence]


async def in_default_graph(api, fact: Triple, flow: str = "default", collection: str = "default") -> bool:
    query = f"ASK {{ {fact.s} {fact.p} {fact.o} }}"
    return (await api.flow_service(flow, "sparql", {"query": query, "collection": collection}))["boolean"]


async def test_a_fact_about_a_name_not_in_the_chunk_goes_to_review_with_its_reason(tmp_path):
    (tmp_path / "helios.md").write_text(TEXT)
    async with OpenAIStub(replies=[REPLY]) as stub:
        async with ingest_stack(tmp_path / "data", llm_url=stub.base_url, llm_model="stub-model",
                                extractor="llm") as (api, stack):
            async with extractions(stack.backend, "default") as sent:
                await load_and_wait(api, tmp_path / "helios.md")
            [message] = sent
            assert message.review == [ZORBEX, ORBITS]
            assert message.reasons[fact_key(ORBITS)] == "object 'Zorbex' not in the text; model rated 0.9"
            assert message.reasons[fact_key(ZORBEX)].startswith("entity 'Zorbex' not in the text; ")
            assert message.confidence[fact_key(DEPENDS)] == 0.9 and message.confidence[fact_key(SUPPLIES)] == 0.7
            assert message.confidence[fact_key(ORBITS)] == 0.27 and len(message.confidence) == 5
            [chat] = stub.requests_to("/v1/chat/completions")
            assert '"confidence": number' in chat.body["messages"][0]["content"]  # the model is asked to rate

            assert await in_default_graph(api, DEPENDS) and await in_default_graph(api, SUPPLIES)
            assert not await in_default_graph(api, ORBITS) and not await in_default_graph(api, ZORBEX)
            contained = await api.flow_service("default", "sparql", {"query": CONTAINED})
            assert contained["bindings"][0]["n"]["v"] == "3"  # Helios Grid's definition, depends on, supplies
            label = await api.flow_service("default", "triples", {"s": {"t": "i", "i": entity_uri("Zorbex")}})
            assert [t["o"]["v"] for t in label["response"]] == ["Zorbex"]  # still named, nothing claimed


async def ingest(api, path, flow: str, collection: str) -> None:
    """Load `path` through `flow` into `collection`, as a document of its own there (the library knows a
    document by its id across collections)."""
    meta = await add_document(api, path, collection=collection, document_id=f"urn:doc:{collection}:{path.stem}")
    await process(api, meta["id"], flow, collection)
    await wait_for_extraction(api, flow, [meta["id"]], collection, 120)


async def test_the_review_threshold_is_a_flow_parameter(tmp_path):
    async with ingest_stack(tmp_path) as (api, stack):  # no LLM configured: offline extraction
        await start_flow(stack.backend, "strict", "default", {"review-threshold": "0.86"})
        await stack.joined("strict")
        async with extractions(stack.backend, "strict") as strict, extractions(stack.backend, "default") as lenient:
            await ingest(api, CORPUS / "helios-grid.md", "strict", "strict")
            await ingest(api, CORPUS / "helios-grid.md", "default", "default")

        queued = {fact_key(f) for m in strict for f in m.review}
        rated = {k: v for m in strict for k, v in m.confidence.items()}
        assert fact_key(DEPENDS) in queued and rated[fact_key(DEPENDS)] == CANONICAL.value
        assert queued == {k for k, v in rated.items() if v < 0.86}
        assert all(m.reasons.keys() == {fact_key(f) for f in m.review} for m in strict)
        assert not await in_default_graph(api, DEPENDS, "strict", "strict")
        assert await in_default_graph(api, relation("Helios Grid", "is a", "regional energy operator"),
                                      "strict", "strict")

        assert lenient and all(m.review == [] for m in lenient)  # the default flow: 0.3
        assert {k for m in lenient for k in m.confidence} == set(rated)
        assert await in_default_graph(api, DEPENDS)
