"""A 5,000,000-character collection name sent through the gateway to the SPARQL and GraphRAG services, on the
whole in-process stack: a 400 `bad-request` naming the field, a short body, and no huge log line. Before the
limits it was an HTTP 200 carrying a 5 MB `triples-error`, and a 5 MB log line per request."""

from __future__ import annotations

import json
import logging

import aiohttp
import pytest

from tracegraph.schemas.fields import MAX_NAME_CHARS

from support.ingest import ingest_stack

pytestmark = pytest.mark.timeout(120)

HUGE_NAME = "c" * 5_000_000
MAX_BODY_BYTES = 4096
MAX_LOG_CHARS = 10_000


@pytest.mark.parametrize(("service", "request_body"), [
    ("sparql", {"query": "SELECT * WHERE { ?s ?p ?o } LIMIT 1"}),
    ("graph-rag", {"query": "Who runs Helios Grid?"}),
])
async def test_a_huge_collection_name_is_a_short_bad_request(tmp_path, caplog, service, request_body):
    caplog.set_level(logging.INFO)
    async with ingest_stack(tmp_path) as (api, stack):
        url = f"http://127.0.0.1:{stack['gateway'].port}/api/v1/flow/default/service/{service}"
        async with aiohttp.ClientSession() as session:
            async with session.post(url, json={**request_body, "collection": HUGE_NAME}) as response:
                status, raw = response.status, await response.read()
    assert status == 400, raw[:300]
    assert len(raw) <= MAX_BODY_BYTES, len(raw)
    error = json.loads(raw)["error"]
    assert error == {"type": "bad-request", "message": f"collection: at most {MAX_NAME_CHARS} characters"}
    longest = max(caplog.records, key=lambda r: len(r.getMessage()))
    assert len(longest.getMessage()) <= MAX_LOG_CHARS, longest.getMessage()[:300]

