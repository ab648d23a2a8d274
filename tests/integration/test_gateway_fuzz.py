"""Fuzzing the REST API from its own OpenAPI document (schemathesis, valid and invalid bodies) and
with raw bytes (hypothesis): no request may get a 5xx, and the stack must still answer afterwards."""

from __future__ import annotations

import json

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
