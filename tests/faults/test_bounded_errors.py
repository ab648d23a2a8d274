"""Huge input gets short errors and short log lines, with every processor its own process on RabbitMQ.

Before the limits, a 5,000,000-character collection name sent to the SPARQL or GraphRAG service through the
gateway came back as an HTTP 200 `triples-error` of 5,000,124 bytes and left a 5 MB line in the log per
request; a huge field sent straight onto the bus left a line as long in the processor's log."""

from __future__ import annotations

import json

import aiohttp
import pytest

from tracegraph.base.bus import codec
from tracegraph.base.bus.rabbitmq import RabbitMQBackend
from tracegraph.base.bus.topic import Topic
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import RemoteError
from tracegraph.schemas.fields import MAX_NAME_CHARS
from tracegraph.schemas.triples import SparqlQueryRequest, SparqlQueryResponse

from support.cluster import Cluster

pytestmark = [pytest.mark.rabbitmq, pytest.mark.faults, pytest.mark.timeout(240)]

RUNNING = ["config", "triples", "graph-rag", "gateway"]
SPARQL_REQUEST = Topic.parse("non-persistent://tg/request/sparql:default")
SPARQL_RESPONSE = Topic.parse("non-persistent://tg/response/sparql:default")
MAX_BODY_BYTES = 4096
MAX_LOG_LINE = 10_000
TOO_LONG = f"collection: at most {MAX_NAME_CHARS} characters"


def _longest_line(cluster: Cluster, name: str) -> int:
    return max(len(line) for line in cluster.log_of(name).read_text(errors="replace").splitlines())


async def test_huge_input_gets_a_short_bad_request_and_short_log_lines(rabbitmq_url, tmp_path):
    cluster = Cluster(rabbitmq_url, tmp_path / "data", tmp_path / "logs", users=1)
    try:
        await cluster.start_all(RUNNING)

        headers = {"Authorization": f"Bearer {cluster.tokens['user0']}"}
        async with aiohttp.ClientSession(headers=headers) as session:
            for service, body in [("sparql", {"query": "ASK { ?s ?p ?o }"}), ("graph-rag", {"query": "Who?"})]:
                url = f"{cluster.gateway}api/v1/flow/default/service/{service}"
                async with session.post(url, json={**body, "collection": "c" * 5_000_000}) as response:
                    status, raw = response.status, await response.read()
                assert status == 400 and len(raw) <= MAX_BODY_BYTES, (service, status, len(raw), raw[:300])
                assert json.loads(raw) == {"error": {"type": "bad-request", "message": TOO_LONG}}

        # Straight onto the bus, past the gateway: the triples processor refuses it by field, briefly.
        body, _ = codec.encode(SparqlQueryRequest(query="ASK { ?s ?p ?o }", collection="c"))
        huge = codec.Encoded(SparqlQueryRequest, body.replace(b'"collection":"c"',
                                                              b'"collection":"' + b"z" * 12_000_000 + b'"'))
        backend = RabbitMQBackend(rabbitmq_url)
        try:
            async with RequestClient(backend, SPARQL_REQUEST, SPARQL_RESPONSE, SparqlQueryRequest,
                                     SparqlQueryResponse, timeout=60) as client:
                with pytest.raises(RemoteError) as refused:
                    await client.request(huge)
        finally:
            await backend.aclose()
        assert refused.value.type == "bad-request" and refused.value.message.endswith(TOO_LONG), refused.value
        assert len(refused.value.message) < MAX_BODY_BYTES
    finally:
        await cluster.stop_all()
    for name in RUNNING:
        assert _longest_line(cluster, name) <= MAX_LOG_LINE, (name, cluster.tail(name, 3)[:500])
