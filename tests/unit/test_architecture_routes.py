"""The architecture routes on a real in-process gateway with tokens: the path's entity and the query
string become an architecture request bound to the caller's user, an unknown entity is a 404 naming it,
a bad depth a 400, and every route wants a token. The service is a stand-in that keeps each request
(tests/integration/test_architecture.py runs the real one on the sample corpus)."""

from __future__ import annotations

import doctest

import pytest
from multidict import MultiDict

import tracegraph.flow.gateway.query_routes
from tracegraph.flow.gateway.openapi import openapi_document
from tracegraph.flow.gateway.query_routes import ENTITY_ROUTES
from tracegraph.schemas.architecture import (
    ArchitectureRequest, ArchitectureResponse, IntentResponse, OwnershipResponse,
)
from tracegraph.schemas.base import Error

from support.stand_in_gateway import StandIn, call, socket_reply, stand_in_gateway

E = "https://trustgraph.ai/e/"
TOKENS = "alice alice-token\nbob bob-token\n"


def test_doctests():
    result = doctest.testmod(tracegraph.flow.gateway.query_routes)
    assert result.attempted > 0 and result.failed == 0


def test_query_strings_become_architecture_requests():
    assert ENTITY_ROUTES["dependencies"].request(MultiDict(depth="3", direction="in", predicates="calls, uses")) == (
        "default", {"operation": "dependencies", "depth": "3", "direction": "in", "predicates": ["calls", "uses"]})
    assert ENTITY_ROUTES["memory"].request(MultiDict(q="why two regions?", flow="f2")) == (
        "f2", {"operation": "memory", "query": "why two regions?"})
    assert ENTITY_ROUTES["ownership"].request(MultiDict(collection="arch")) == (
        "default", {"operation": "ownership", "collection": "arch"})


def answer(req: ArchitectureRequest) -> ArchitectureResponse:
    """Alice's collection holds Skyline; any other entity, or anybody else's collection, is unknown."""
    if req.operation == "intent-check":
        return ArchitectureResponse(operation=req.operation, intent=IntentResponse(
            similarity=0.31, threshold=req.threshold or 0.6, mismatch=True, advisory="Confirm."))
    if req.user != "alice" or req.entity != "Skyline":
        return ArchitectureResponse(error=Error(type="not-found", message=f"no entity {req.entity!r}"))
    return ArchitectureResponse(operation=req.operation, entity=E + "skyline", label="Skyline",
                                ownership=OwnershipResponse(agreement="none"))


def gateway(tmp_path):
    return stand_in_gateway(tmp_path, {"architecture": StandIn(answer)}, TOKENS)


ROUTES = ["/api/v1/ownership/Skyline", "/api/v1/dependencies/Skyline?depth=2", "/api/v1/memory/Skyline?q=why"]


async def test_each_route_reaches_the_service_as_the_caller(tmp_path):
    async with gateway(tmp_path) as (url, stand_ins):
        stand_in = stand_ins["architecture"]
        for path in ROUTES:
            status, body = await call(url, "GET", path + ("&" if "?" in path else "?") + "collection=arch",
                                      "alice-token")
            assert status == 200 and body["entity"] == E + "skyline", (path, body)
        sent = stand_in.requests
        assert [(r.operation, r.entity, r.user, r.collection) for r in sent] == [
            (op, "Skyline", "alice", "arch") for op in ("ownership", "dependencies", "memory")]
        assert (sent[1].depth, sent[1].direction, sent[2].query) == (2, "out", "why")

        # An IRI as the entity, slashes and all, arrives whole.
        await call(url, "GET", "/api/v1/ownership/" + "https%3A%2F%2Ftrustgraph.ai%2Fe%2Fskyline", "alice-token")
        assert stand_in.requests[-1].entity == E + "skyline"

        status, body = await call(url, "POST", "/api/v1/intent-check?flow=default", "alice-token",
                                  json={"change": "Add retries to the feed", "work-item": "Rename the billing page",
                                        "threshold": 0.7})
        assert status == 200 and body["intent"]["mismatch"] is True, body
        assert (stand_in.requests[-1].operation, stand_in.requests[-1].threshold) == ("intent-check", 0.7)


async def test_every_route_wants_a_token(tmp_path):
    async with gateway(tmp_path) as (url, stand_ins):
        stand_in = stand_ins["architecture"]
        for method, path in [("GET", p) for p in ROUTES] + [("POST", "/api/v1/intent-check")]:
            status, body = await call(url, method, path, None, json={"change": "x", "work-item": "y"})
            assert status == 401, (path, body)
            status, body = await call(url, method, path, "forged-token", json={"change": "x", "work-item": "y"})
            assert status == 401, (path, body)
        assert stand_in.requests == []


async def test_another_users_entity_is_a_404_and_naming_them_is_refused(tmp_path):
    async with gateway(tmp_path) as (url, stand_ins):
        stand_in = stand_ins["architecture"]
        for path in ROUTES:
            status, body = await call(url, "GET", path, "bob-token")
            assert status == 404 and body["error"] == {"type": "not-found", "message": "no entity 'Skyline'"}, body
            status, body = await call(url, "GET", path + ("&" if "?" in path else "?") + "user=alice", "bob-token")
            assert status == 403 and body["error"]["type"] == "access-denied", body
        assert {r.user for r in stand_in.requests} == {"bob"}
        reply = await socket_reply(url, "bob-token", {"service": "architecture", "flow": "default",
                                                      "workspace": "alice",
                                                      "request": {"operation": "ownership", "entity": "Skyline"}})
        assert reply["error"]["type"] == "access-denied", reply


@pytest.mark.parametrize("path, words", [
    ("/api/v1/dependencies/Skyline?depth=4", "depth: Input should be less than or equal to 3"),
    ("/api/v1/dependencies/Skyline?depth=0", "depth: Input should be greater than or equal to 1"),
    ("/api/v1/dependencies/Skyline?depth=deep", "depth: Input should be a valid integer"),
    ("/api/v1/dependencies/Skyline?direction=sideways", "direction: Input should be 'out' or 'in'"),
    ("/api/v1/ownership/Skyline?depth=2", "unknown query parameter(s) 'depth'"),
    ("/api/v1/memory/Skyline?limit=0", "limit: Input should be greater than or equal to 1"),
    ("/api/v1/ownership/" + "x" * 501, "entity: at most 500 characters"),
])
async def test_bad_parameters_are_a_400_naming_them(tmp_path, path, words):
    async with gateway(tmp_path) as (url, stand_ins):
        stand_in = stand_ins["architecture"]
        status, body = await call(url, "GET", path, "alice-token")
    assert status == 400 and body["error"]["type"] == "bad-request" and words in body["error"]["message"], body
    assert stand_in.requests == []


@pytest.mark.parametrize("body, words", [
    ({"change": "Add retries"}, "intent-check needs work-item"),
    ({"change": " ", "work-item": ""}, "intent-check needs change and work-item"),
    ({"change": "a", "work-item": "b", "threshold": 2}, "threshold: Input should be less than or equal to 1"),
    (["not", "an", "object"], "must be a JSON object"),
])
async def test_a_bad_intent_check_is_a_400(tmp_path, body, words):
    async with gateway(tmp_path) as (url, stand_ins):
        stand_in = stand_ins["architecture"]
        status, reply = await call(url, "POST", "/api/v1/intent-check", "alice-token", json=body)
    assert status == 400 and words in reply["error"]["message"], reply
    assert stand_in.requests == []


def test_the_openapi_document_describes_the_architecture_routes():
    paths = openapi_document()["paths"]
    for kind, route in ENTITY_ROUTES.items():
        get = paths[f"/api/v1/{kind}/{{entity}}"]["get"]
        assert [p["name"] for p in get["parameters"]] == ["entity", *route.accepted]
        assert "404" in get["responses"] and get["tags"] == ["architecture"]
    depth = {p["name"]: p["schema"] for p in paths["/api/v1/dependencies/{entity}"]["get"]["parameters"]}["depth"]
    assert (depth["minimum"], depth["maximum"]) == (1, 3)
    assert "RSN-09" in paths["/api/v1/intent-check"]["post"]["summary"]



async def test_every_entity_route_takes_as_of_and_refuses_a_bad_date_with_a_400(tmp_path):
    async with gateway(tmp_path) as (url, stand_ins):
        stand_in = stand_ins["architecture"]
        for path in ROUTES:
            joined = path + ("&" if "?" in path else "?")
            status, body = await call(url, "GET", joined + "as-of=2024-06", "alice-token")
            assert status == 200, (path, body)
            assert stand_in.requests[-1].as_of == "2024-06-01T00:00:00Z"
            status, body = await call(url, "GET", joined + "as-of=soon", "alice-token")
            assert status == 400 and body["error"]["message"] == (
                "as-of: 'soon' is not a date; use YYYY-MM-DD, YYYY-MM or an ISO 8601 date-time"), body
        assert len(stand_in.requests) == len(ROUTES)
