"""Upstream's own `trustgraph-cli` (PyPI, in its own venv) against our gateway: GraphRAG with
explanations, trace listing and trace display, on an open gateway and behind per-user tokens.

Set TG_UPSTREAM_CLI to that venv's bin/ (`.ci/run` builds it); without it the tests skip.
"""

from __future__ import annotations

import json
import re

import pytest

from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import add_document

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.upstream import needs_upstream, upstream

pytestmark = [pytest.mark.timeout(300), needs_upstream]

QUESTION = "What does Helios Grid depend on?"


async def test_graph_rag_explained_listed_and_shown_by_upstream_cli(tmp_path):
    async with ingest_stack(tmp_path) as (api, stack):
        url = f"http://127.0.0.1:{stack['gateway'].port}/"
        await load_and_wait(api, CORPUS / "helios-grid.md")

        status, out, err = await upstream("tg-invoke-graph-rag", "-u", url, "-q", QUESTION, "-x")
        assert status == 0 and "Exception" not in out, (out, err)
        assert "Helios Grid depends on Corvid Analytics" in out
        steps = [line.split("]")[0].strip() + "]" for line in err.splitlines() if line.strip().startswith("[")]
        assert steps == ["[question]", "[grounding]", "[exploration]", "[focus]", "[synthesis]"], err
        assert "Edge: (Helios Grid, depends on, Corvid Analytics)" in err
        assert "Sources:" in err and "helios-grid" in err

        status, out, err = await upstream("tg-list-explain-traces", "-u", url, "--format", "json")
        assert status == 0, err
        sessions = json.loads(out)
        assert [(s["type"], s["question"]) for s in sessions] == [("GraphRAG", QUESTION)]

        status, out, err = await upstream("tg-show-explain-trace", "-u", url, sessions[0]["id"], "--format", "json")
        assert status == 0, err
        trace = json.loads(out)
        assert trace["question"] == QUESTION and trace["exploration"]["edge_count"] > 0
        edges = [e["edge"] for e in trace["focus"]["selected_edges"]]
        assert {"s": "https://trustgraph.ai/e/helios-grid", "p": "https://trustgraph.ai/r/depends-on",
                "o": "https://trustgraph.ai/e/corvid-analytics"} in edges
        assert trace["synthesis"]["document"].startswith("urn:trustgraph:synthesis:")

        status, out, err = await upstream("tg-show-explain-trace", "-u", url, sessions[0]["id"], "--show-provenance")
        assert status == 0, err
        assert "Helios Grid depends on Corvid Analytics" in out  # the answer, fetched from the librarian
        assert "-> helios-grid" in out  # each selected edge traced to its source document


async def test_document_rag_asked_and_shown_by_upstream_cli(tmp_path):
    async with ingest_stack(tmp_path) as (api, stack):
        url = f"http://127.0.0.1:{stack['gateway'].port}/"
        await load_and_wait(api, CORPUS / "helios-grid.md")

        status, out, err = await upstream("tg-invoke-document-rag", "-u", url, "-q", QUESTION, "-x")
        assert status == 0 and "Exception" not in out, (out, err)
        assert "Corvid Analytics" in out
        steps = [line.split("]")[0].strip() + "]" for line in err.splitlines() if line.strip().startswith("[")]
        assert steps == ["[question]", "[grounding]", "[exploration]", "[synthesis]"], err
        assert re.search(r"Chunks retrieved: [1-9]", err), err

        status, out, err = await upstream("tg-invoke-document-rag", "-u", url, "-q", QUESTION, "--no-streaming")
        assert status == 0 and "Corvid Analytics" in out, (out, err)

        status, out, err = await upstream("tg-list-explain-traces", "-u", url, "--format", "json")
        sessions = json.loads(out)
        assert {s["type"] for s in sessions} == {"DocRAG"} and len(sessions) == 2, sessions
        status, out, err = await upstream("tg-show-explain-trace", "-u", url, sessions[0]["id"], "--format", "json")
        assert status == 0, err
        trace = json.loads(out)
        assert trace["type"] == "docrag" and trace["exploration"]["chunk_count"] > 0
        assert trace["synthesis"]["document"].endswith("/answer")


async def test_upstream_cli_sees_only_its_own_users_traces(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("alice alice-token\nbob bob-token\n")
    async with ingest_stack(tmp_path, gateway_tokens=tokens) as (api, stack):
        url = f"http://127.0.0.1:{stack['gateway'].port}/"
        status, out, _ = await upstream("tg-invoke-graph-rag", "-u", url, "-t", "alice-token", "-q", QUESTION)
        assert "unknown collection 'default'" in out  # alice has loaded nothing yet

        await add_document(Api(api.url, "alice-token"), CORPUS / "helios-grid.md", collection="default")
        status, out, _ = await upstream("tg-invoke-graph-rag", "-u", url, "-t", "alice-token", "-q", QUESTION)
        assert status == 0 and "Exception" not in out, out

        status, out, err = await upstream("tg-list-explain-traces", "-u", url, "-t", "alice-token", "--format", "json")
        assert status == 0, err
        alice_sessions = json.loads(out)
        assert len(alice_sessions) == 1
        status, out, err = await upstream("tg-list-explain-traces", "-u", url, "-t", "bob-token")
        assert status == 0 and "No explainability sessions found." in out, (out, err)
        status, out, err = await upstream("tg-show-explain-trace", "-u", url, "-t", "bob-token",
                                          alice_sessions[0]["id"], "--format", "json")
        assert QUESTION not in out

        status, out, err = await upstream("tg-list-explain-traces", "-u", url, "-t", "stolen")
        assert status != 0 and "auth" in err.lower()
