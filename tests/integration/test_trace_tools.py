"""The trace tools on a store holding all three kinds of trace — GraphRAG, Document RAG and an agent
session whose tool ran GraphRAG — and SHACL validation of every kind, as stored."""

from __future__ import annotations

import asyncio
import json

import pyoxigraph
import pytest

from tracegraph.base.provenance.shacl import validate_trace
from tracegraph.cli.socket_client import SocketClient
from tracegraph.schemas.rdf import Triple

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.procs import tg_async
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(300)

QUESTION = "What does Helios Grid depend on?"


async def ask_all_three(url: str) -> dict[str, str]:
    """Question URI per kind, each asked offline (no LLM configured)."""
    asked = {}
    async with SocketClient(url) as socket:
        for kind, service, body in (("GraphRAG", "graph-rag", {"query": QUESTION}),
                                    ("DocRAG", "document-rag", {"query": QUESTION}),
                                    ("Agent", "agent", {"question": QUESTION})):
            frames = [f async for f in socket.stream(service, {**body, "streaming": True}, flow="default")]
            asked[kind] = next(f["explain_id"] for f in frames if f.get("message_type") == "explain")
    return asked


async def test_list_show_export_and_validate_every_trace_kind(tmp_path):
    async with ingest_stack(tmp_path) as (api, stack):
        url = f"http://127.0.0.1:{stack['gateway'].port}/"
        u = ("-u", url)
        await load_and_wait(api, CORPUS / "helios-grid.md")
        asked = await ask_all_three(url)

        async def listed(*extra: str) -> list[dict]:
            status, out, err = await tg_async("tg-list-explain-traces", *u, "--json", *extra)
            assert status == 0, err
            return json.loads(out)

        top = await wait_until_async(lambda: _when(listed(), lambda r: len(r) == 3), what="three stored traces")
        assert {t["kind"]: t["id"] for t in top} == asked
        assert all(t["question"] == QUESTION and t["parent"] is None for t in top)
        everything = await listed("--all")
        sub = [t for t in everything if t["parent"]]
        assert len(everything) == 4 and len(sub) == 1 and sub[0]["kind"] == "GraphRAG"
        assert sub[0]["parent"].startswith(asked["Agent"] + "/i")
        assert [t["kind"] for t in await listed("--type", "agent")] == ["Agent"]
        assert await listed("--since", "2999-01-01") == []
        status, _, err = await tg_async("tg-list-explain-traces", *u, "--since", "yesterday")
        assert status == 1 and "ISO date" in err
        status, table, _ = await tg_async("tg-list-explain-traces", *u)
        assert "DocRAG" in table and "Agent" in table and QUESTION in table

        status, shown, err = await tg_async("tg-show-explain-trace", *u, asked["Agent"])
        assert status == 0, err
        steps = [line.strip().split("]")[0] + "]" for line in shown.splitlines() if line.strip().startswith("[")]
        assert steps[0] == "[question]" and steps[1] == "[analysis]" and steps[-1] == "[conclusion]"
        assert "↳ sub-trace" in shown and "[focus]" in shown  # the GraphRAG run the tool made, nested
        assert "Source: Chunk" in shown and "helios-grid" in shown

        status, sources, err = await tg_async("tg-show-explain-trace", *u, asked["Agent"], "--sources")
        assert status == 0 and "→ helios-grid" in sources, (sources, err)
        status, docrag, err = await tg_async("tg-show-explain-trace", *u, asked["DocRAG"] + "/exploration")
        assert status == 0 and "[exploration]" in docrag and "Chunk: Chunk" in docrag and "helios-grid" in docrag

        status, trig, err = await tg_async("tg-export-explain-trace", *u, asked["Agent"], "--format", "trig")
        assert status == 0, err
        quads = list(pyoxigraph.parse(trig.encode(), format=pyoxigraph.RdfFormat.TRIG))
        subjects = {q.subject.value for q in quads if isinstance(q.subject, pyoxigraph.NamedNode)}
        assert any(s.startswith("urn:trustgraph:question:") for s in subjects), "the sub-trace is exported too"
        status, prov_json, err = await tg_async("tg-export-explain-trace", *u, asked["DocRAG"], "--format",
                                                "prov-json")
        assert status == 0 and json.loads(prov_json)["entity"]

        # Every kind of trace, as stored, with the source graph its chunks and edges resolve to.
        stored = await api.flow_service("default", "triples", {"g": "*", "limit": 1_000_000})
        report = await asyncio.to_thread(validate_trace, [Triple.model_validate(t) for t in stored["response"]])
        assert report.conforms, report.messages


async def _when(result, accept):
    value = await result
    return value if accept(value) else None
