"""Institutional memory extracted by an LLM through the whole stack: the real `openai` client against a
scripted server answering the typed-records prompt. The records land as the offline ones do, marked as
the LLM's in their subgraph, and a name the document never mentions is dropped."""

from __future__ import annotations

import json

import pytest

from tracegraph.base.architecture import memory_llm

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.openai_stub import OpenAIStub
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(300)

RECORDS = json.dumps({"records": [{
    "kind": "decision", "title": "ADR 0012: Run Skyline in two regions",
    "text": "Skyline runs in two regions, Port Sable and Eastmarch.", "author": "Tomas Brandt", "date": "2025-10-02",
    "status": "accepted", "rationale": "The June 2024 outage stopped every forecast.",
    "relations": {"why": ["Skyline"], "concerns": ["Zorbex Cloud"]}}]})
NO_FACTS = json.dumps({"entities": [], "relationships": []})
EXTRACTOR = """
PREFIX tg: <https://trustgraph.ai/ns/> PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT ?extractor ?model WHERE { GRAPH <urn:graph:source> {
  ?sg tg:contains <<( ?m tg:why <https://trustgraph.ai/e/skyline> )>> ; tg:extractor ?extractor .
  OPTIONAL { ?sg prov:wasGeneratedBy ?a . ?a tg:llmModel ?model } } }"""


def reply(body: dict) -> str:
    """The typed-records prompt gets the records; kg-extract's prompt no facts (not what is tested here)."""
    return RECORDS if body["messages"][0]["content"] == memory_llm.SYSTEM else NO_FACTS


async def test_an_adr_read_by_the_llm_gives_typed_records_without_invented_names(tmp_path):
    async with OpenAIStub(replies=[reply] * 20) as stub:
        async with ingest_stack(tmp_path, llm_url=stub.base_url, llm_model="stub-model", extractor="llm") as (api, _):
            await load_and_wait(api, CORPUS / "adr-0012-skyline-two-regions.md")
            found = await wait_until_async(lambda: _remembered(api), timeout=60, what="the LLM's decision stored")
            (item,) = found
            assert (item["kind"], item["title"], item["source"]["author"], item["source"]["date"]) == (
                "decision", "ADR 0012: Run Skyline in two regions", "Tomas Brandt", "2025-10-02")
            assert item["why"] == "The June 2024 outage stopped every forecast." and item["source"]["line"] > 1
            with pytest.raises(Exception, match="Zorbex"):  # the name the model invented was dropped
                await api.get("memory/Zorbex Cloud", {})
            rows = (await api.flow_service("default", "sparql", {"query": EXTRACTOR}))["bindings"]
            assert [(r["extractor"]["v"], r["model"]["v"]) for r in rows] == [("llm", "stub-model")]
            prompts = [r.body["messages"][0]["content"] for r in stub.requests_to("/v1/chat/completions")]
            assert memory_llm.SYSTEM in prompts


async def _remembered(api) -> list[dict]:
    try:
        return (await api.get("memory/Skyline", {}))["memory"]["items"]
    except Exception:  # Skyline is not in the graph until the records arrive
        return []
