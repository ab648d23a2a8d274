"""Fuzzing the REST API from its own OpenAPI document (schemathesis, valid and invalid bodies) and
with raw bytes (hypothesis): no request may get a 5xx, and the stack must still answer afterwards.
Then the hostile inputs that once did get a 5xx (or a closed socket), each refused by name."""

from __future__ import annotations

import json

import aiohttp
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings, strategies as st

from tracegraph.flow.gateway.openapi import openapi_document

from support.procs import launched

pytestmark = pytest.mark.timeout(600)

SCHEMA = schemathesis.openapi.from_dict(openapi_document())
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def gateway_url(tmp_path_factory):
    with launched(tmp_path_factory.mktemp("fuzz") / "data") as url:
        yield url.rstrip("/")
        # Whatever the fuzzing sent, the stack still answers a real question afterwards.
        after = requests.post(f"{url}api/v1/flow/default/service/ping", json={"text": "still up"}, timeout=30)
        assert after.status_code == 200 and after.json()["text"].endswith("still up")


@SCHEMA.parametrize()
@FUZZ
def test_no_operation_answers_with_a_server_error(case, gateway_url):
    response = case.call(base_url=gateway_url, timeout=60)
    assert response.status_code < 500, f"{case.method} {case.formatted_path} → {response.status_code}: {response.text}"
    try:
        if response.status_code == 200 and str((case.query or {}).get("stream", "")).lower() in {"1", "true", "yes"}:
            lines = [json.loads(line) for line in response.text.splitlines() if line.strip()]
            assert lines, "a stream ends with at least one response"
            return
        body = response.json()  # every answer, refusals included, is JSON
    except ValueError:
        raise AssertionError(f"{case.method} {case.formatted_path} {case.query} → not JSON: {response.text[:300]!r}")
    if response.status_code >= 400:
        assert isinstance(body["error"], (dict, str)), body


ROUTES = ["/api/v1/flow", "/api/v1/config", "/api/v1/librarian", "/api/v1/flow/default/service/graph-rag",
          "/api/v1/flow/default/service/triples", "/api/v1/flow/default/service/sparql",
          "/api/v1/flow/default/import/triples-bulk", "/api/v1/nope", "/api/v1/flow/nope/service/ping"]
JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                       lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                                  max_size=4), max_leaves=12)


@given(route=st.sampled_from(ROUTES),
       body=st.binary(max_size=200) | JSONISH.map(lambda v: json.dumps(v).encode()))
@FUZZ
def test_arbitrary_bodies_get_clear_refusals(gateway_url, route, body):
    response = requests.post(gateway_url + route, data=body, timeout=60,
                             headers={"Content-Type": "application/json"})
    assert response.status_code < 500, f"{route} {body!r} → {response.status_code}: {response.text}"
    if response.status_code >= 400:
        error = response.json()["error"]
        assert error["type"] and error["message"], error


# Hostile input that once gave a 500 (or a closed socket): each is a 400 naming the problem, fast.
RAG = "/api/v1/flow/default/service/graph-rag"


@pytest.mark.parametrize("body, words", [
    (b"[" * 100_000, "nested deeper than 64 levels"),
    (b'{"query": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested deeper than 64 levels"),
    (b'{"query": "\\ud800 lone"}', "query: lone surrogate, not valid Unicode"),
    (b'{"query": "\xff\xfe"}', "not valid UTF-8"),
    (json.dumps({"query": "x" * 5_000_000}).encode(),
     "query: question is 5,000,000 bytes, over the limit of 4,096 bytes (TG_MAX_QUESTION_BYTES)"),
])
def test_hostile_bodies_are_refused_fast_by_name(gateway_url, body, words):
    response = requests.post(gateway_url + RAG, data=body, timeout=60, headers={"Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["type"] == "bad-request" and words in response.json()["error"]["message"]


def test_method_not_allowed_says_what_is(gateway_url):
    response = requests.get(gateway_url + "/api/v1/librarian", timeout=30)
    assert response.status_code == 405 and response.headers["Allow"] == "POST"
    assert response.json()["error"]["type"] == "method-not-allowed"


def test_the_librarian_never_echoes_a_huge_id(gateway_url):
    long_id, huge_id = "d" * 1000, "d" * 50_000
    response = requests.post(gateway_url + "/api/v1/librarian", timeout=30,
                             json={"operation": "get-document-metadata", "document-id": long_id})
    message = response.json()["error"]["message"]
    assert response.status_code == 200 and "(1,000 characters)" in message and len(message) < 300, message
    response = requests.post(gateway_url + "/api/v1/librarian", timeout=30,
                             json={"operation": "remove-document", "document-id": huge_id})
    message = response.json()["error"]["message"]
    assert response.status_code == 400 and message.startswith("document-id:") and len(message) < 300, message


async def test_hostile_frames_get_error_replies_and_the_socket_stays_open(gateway_url):
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(gateway_url + "/api/v1/socket", max_msg_size=0) as ws:
            await ws.send_json({"type": "auth", "token": ""})
            await ws.receive_json(timeout=30)
            await ws.send_str('{"id": "deep", "service": "graph-rag", "flow": "default", "request": '
                              + "[" * 100_000 + "]" * 100_000 + "}")
            reply = await ws.receive_json(timeout=30)
            assert reply["id"] == "deep" and "nested deeper than 64" in reply["error"]["message"], reply
            # (lone surrogates and the rest: tests/unit/test_gateway_limits.py, on an in-process gateway)
            await ws.send_json({"id": "big", "service": "agent", "flow": "default",
                                "request": {"question": "x" * 5_000_000}})
            reply = await ws.receive_json(timeout=30)
            assert reply["id"] == "big" and reply["error"]["message"].startswith("question: question is"), reply
            await ws.send_json({"id": "ping", "service": "ping", "flow": "default", "request": {"text": "open"}})
            reply = await ws.receive_json(timeout=30)
            assert reply["id"] == "ping" and reply["response"]["text"].endswith("open"), reply
