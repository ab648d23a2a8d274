"""Knowledge extraction with an LLM: the real `openai` client over HTTP to a scripted server.
A malformed reply is retried; one that stays malformed is recorded as a failed chunk, not a gap."""

from __future__ import annotations

import re

import json

import pytest

from tracegraph.cli.library_upload import failed_chunks

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.openai_stub import Fail, OpenAIStub
from support.procs import tg_async

pytestmark = pytest.mark.timeout(300)

GOOD = json.dumps({
    "entities": [{"name": "Helios Grid", "definition": "A regional energy operator."}],
    "relationships": [{"subject": "Helios Grid", "predicate": "depends on", "object": "Corvid Analytics"},
                      {"subject": "Meridian Dam", "predicate": "supplies power to", "object": "Helios Grid"}],
})

SUBGRAPHS = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT ?extractor ?status ?error ?model (COUNT(?fact) AS ?facts) WHERE {
  GRAPH <urn:graph:source> {
    ?sg a tg:Subgraph ; tg:extractor ?extractor ; prov:wasDerivedFrom/prov:wasDerivedFrom+ <%s> ;
        prov:wasGeneratedBy ?activity .
    OPTIONAL { ?activity tg:llmModel ?model }
    OPTIONAL { ?sg tg:extractionStatus ?status ; tg:extractionError ?error }
    OPTIONAL { ?sg tg:contains ?fact }
  }
} GROUP BY ?extractor ?status ?error ?model"""


def values(row: dict) -> dict:
    return {k: v.get("v") or v.get("i") for k, v in row.items()}


def one_chunk(tmp_path, name: str, text: str):
    """A document short enough to be a single chunk, so the script has one reply per attempt."""
    path = tmp_path / name
    path.write_text(text)
    return path


async def test_llm_extraction_retries_malformed_json_and_records_failures(tmp_path):
    async with OpenAIStub(replies=["Sure! Here are the facts: Helios Grid...", GOOD]) as stub:
        async with ingest_stack(tmp_path, llm_url=stub.base_url, llm_model="stub-model", extractor="llm") as (api, _):
            doc = await load_and_wait(api, one_chunk(tmp_path, "helios.md", "Helios Grid depends on Corvid Analytics. "
                                                                    "Meridian Dam supplies power to Helios Grid."))
            [row] = [values(r) for r in (await api.flow_service("default", "sparql", {"query": SUBGRAPHS % doc}))
                     ["bindings"]]
            assert row["extractor"] == "llm" and row["model"] == "stub-model" and row["facts"] == "3"
            assert "status" not in row
            chats = stub.requests_to("/v1/chat/completions")
            assert len(chats) == 2 and "previous answer was invalid" in chats[1].body["messages"][-1]["content"]

            edge = await api.flow_service("default", "triples", {
                "s": {"t": "i", "i": "https://trustgraph.ai/e/meridian-dam"}})
            assert any(t["p"]["i"] == "https://trustgraph.ai/r/supplies-power-to" for t in edge["response"])

            stub.script("not json", "still not json", "{\"entities\": 7}")
            failed = await load_and_wait(api, one_chunk(tmp_path, "orbis.md", "Orbis Systems runs the Orbis Cloud."))
            [row] = [values(r) for r in (await api.flow_service("default", "sparql", {"query": SUBGRAPHS % failed}))
                     ["bindings"]]
            assert row["status"] == "failed" and "no valid JSON after 3 attempts" in row["error"]
            assert row["facts"] == "0"
            [(chunk, error)] = await failed_chunks(api, "default", [failed], "default")
            assert chunk.startswith("urn:") and error.startswith("kg-extract: no valid JSON")

            # `tg-load-text --wait` ends by naming the failed chunk, not with a timeout or a success.
            stub.script("not json", "still not json", "{\"entities\": 7}")
            code, out, err = await tg_async("tg-load-text", "-u", api.url, str(tmp_path / "orbis.md"), "--wait",
                                            "--timeout", "60")
            # (the CLI loads the file by its path: its own document and chunk, failing the same way)
            assert code == 1 and re.search(r"^failed: \S*orbis\.md \(urn:\S+\): 1 of 1 chunk\(s\) not fully processed: "
                                           r"kg-extract: no valid JSON", out, re.M), (out, err)
            assert re.search(r"^  urn:chunk:\S+: kg-extract: no valid JSON", out, re.M), out
            assert "1 failed of 1 document(s)" in err

            stub.fail("/v1/chat/completions", *[Fail(503)] * 12)
            down = await load_and_wait(api, one_chunk(tmp_path, "corvid.md", "Corvid Analytics builds Skyline."))
            [row] = [values(r) for r in (await api.flow_service("default", "sparql", {"query": SUBGRAPHS % down}))
                     ["bindings"]]
            assert row["status"] == "failed" and "unavailable" in row["error"]


async def test_auto_mode_without_an_endpoint_extracts_offline_and_says_so(tmp_path):
    async with ingest_stack(tmp_path) as (api, stack):
        doc = await load_and_wait(api, CORPUS / "helios-grid.md")
        rows = [values(r) for r in (await api.flow_service("default", "sparql", {"query": SUBGRAPHS % doc}))
                ["bindings"]]
        assert rows and all(r["extractor"] == "offline" and "model" not in r for r in rows)
        assert stack["kg-extract"].failed_chunks == 0
