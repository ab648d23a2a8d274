"""The history and review routes on a real in-process gateway with tokens: query strings become
requests (or precise 400s), review is for admins on every path, each caller's requests are bound to
their own user, and the CLIs print what the services answer. The services themselves are stand-ins
here that keep each request and answer from a script (tests/integration/test_temporal_routes.py
runs the real ones)."""

from __future__ import annotations

import asyncio
import doctest

import pytest
from multidict import MultiDict
from pydantic import ValidationError

import tracegraph.cli.fact_text
import tracegraph.flow.gateway.query_routes
from tracegraph.cli import graph_history, review
from tracegraph.flow.gateway.app import MAX_REQUEST_LINE
from tracegraph.flow.gateway.dispatch import validation_message
from tracegraph.flow.gateway.openapi import openapi_document
from tracegraph.flow.gateway.query_routes import QUERY_ROUTES
from tracegraph.flow.gateway.refusals import GatewayError
from tracegraph.schemas.temporal import (
    ReviewItem, ReviewRequest, ReviewResponse, TemporalChange, TemporalFact, TemporalRequest, TemporalResponse,
)

from support.stand_in_gateway import StandIn, call, socket_reply, stand_in_gateway

E = "https://trustgraph.ai/e/"
R = "https://trustgraph.ai/r/"
TOKENS = "alice alice-token admin\nbob bob-token\n"


@pytest.mark.parametrize("module", [tracegraph.flow.gateway.query_routes, tracegraph.cli.fact_text])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# --- query strings to requests -------------------------------------------------------------------


def temporal(**query: str) -> tuple[str, dict]:
    return QUERY_ROUTES["temporal"].request(MultiDict(query))


def refused(**query: str) -> GatewayError:
    with pytest.raises(GatewayError) as caught:
        temporal(**query)
    assert caught.value.status == 400 and caught.value.type == "bad-request"
    return caught.value


def test_a_date_asks_for_the_graph_then_and_a_window_for_a_diff():
    assert temporal(at="2025-06-01", subject=E + "x", limit="5") == (
        "default", {"operation": "at", "at": "2025-06-01", "subject": E + "x", "limit": "5"})
    assert temporal(**{"from": "2025-01", "to": "2025-06", "axis": "recorded", "flow": "f2", "collection": "c"}) == (
        "f2", {"operation": "diff", "from": "2025-01", "to": "2025-06", "axis": "recorded", "collection": "c"})
    assert temporal() == ("default", {"operation": "at"})  # the graph now
    assert QUERY_ROUTES["review"].request(MultiDict(status="all")) == ("default", {"operation": "list",
                                                                                    "status": "all"})


def test_unknown_repeated_and_mixed_parameters_are_refused_by_name():
    assert "unknown query parameter(s) 'date, operation'" in refused(date="2025", operation="diff").message
    with pytest.raises(GatewayError, match="at given more than once"):
        QUERY_ROUTES["temporal"].request(MultiDict([("at", "2025"), ("at", "2026")]))
    message = refused(at="2025-06-01", **{"from": "2025-01-01"}).message
    assert message.startswith("at ask(s) for the graph at one moment and from for the changes"), message
    assert "known" in refused(known="2025-06-01", to="2025-07-01").message
    with pytest.raises(GatewayError, match="unknown query parameter"):
        QUERY_ROUTES["review"].request(MultiDict(ids="r1"))  # a verdict is a POST, never a GET


@pytest.mark.parametrize("body, message", [
    ({"at": "yesterday"}, "at: 'yesterday' is not a date; use YYYY-MM-DD, YYYY-MM or an ISO 8601 date-time"),
    ({"operation": "diff", "from": "soon", "to": "2025"}, "from: 'soon' is not a date; use YYYY-MM-DD"),
    ({"operation": "diff", "to": "2025-01-01"}, "a diff needs both `from` and `to`"),
    ({"operation": "diff", "from": "2025-02", "to": "2025-01"}, "from: 2025-02-01T00:00:00Z is not before to"),
    ({"limit": "many"}, "limit: Input should be a valid integer"),
])
def test_validation_messages_name_the_field_once(body, message):
    with pytest.raises(ValidationError) as caught:
        TemporalRequest.model_validate(body)
    assert validation_message(caught.value).startswith(message), validation_message(caught.value)


def test_a_verdict_without_ids_says_so():
    with pytest.raises(ValidationError) as caught:
        ReviewRequest.model_validate({"operation": "approve"})
    assert validation_message(caught.value) == "ids: approve needs at least one review item id"


def test_the_openapi_document_describes_the_get_routes_and_admin_only_review():
    paths = openapi_document()["paths"]
    for kind, route in QUERY_ROUTES.items():
        get = paths[f"/api/v1/{kind}"]["get"]
        assert [p["name"] for p in get["parameters"]] == list(route.accepted)
        assert all(p["in"] == "query" and p["description"] for p in get["parameters"])
    parameters = {p["name"]: p["schema"] for p in paths["/api/v1/temporal"]["get"]["parameters"]}
    assert parameters["limit"]["type"] == "integer" and parameters["axis"]["enum"] == ["valid", "recorded"]
    assert parameters["at"] == {"type": "string", "maxLength": 1000}
    assert "admins only" in paths["/api/v1/review"]["post"]["summary"]
    assert "admins only" in paths["/api/v1/flow/{flow}/service/review"]["post"]["summary"]
    assert "/api/v1/flow/{flow}/service/temporal" in paths


def test_the_longest_query_string_the_document_allows_fits_in_a_request_line():
    paths = openapi_document()["paths"]
    for kind in QUERY_ROUTES:
        longest = len(f"GET /api/v1/{kind}? HTTP/1.1")
        for parameter in paths[f"/api/v1/{kind}"]["get"]["parameters"]:
            schema = parameter["schema"]
            value = (max((len(str(v)) for v in schema.get("enum", [])), default=0)
                     or len(str(schema.get("maximum", "")))
                     or schema["maxLength"] * len("%F0%9F%98%80"))  # every character a percent-encoded 4-byte one
            longest += len(parameter["name"]) + 2 + value
        assert longest < MAX_REQUEST_LINE, kind


# --- a gateway in front of stand-in services ------------------------------------------------------


FACT = TemporalFact.model_validate({
    "s": {"t": "i", "i": E + "helios-grid"}, "p": {"t": "i", "i": R + "run-by"}, "o": {"t": "l", "v": "Mara Quist"},
    "valid-from": "2024-01-01T00:00:00Z", "sources": ["urn:doc:a"]})
SUCCESSOR = FACT.model_copy(update={"o": FACT.o.model_copy(update={"value": "Ivo Brandt"}), "sources": ["urn:doc:b"]})
QUEUED = ReviewItem.model_validate({
    "id": "r1", "s": {"t": "i", "i": E + "helios-grid"}, "p": {"t": "i", "i": R + "depends-on"},
    "o": {"t": "i", "i": E + "orbis"}, "labels": {"s": "Helios Grid", "o": "Orbis Systems"}, "confidence": 0.42,
    "reason": "one weak rule", "document": "urn:doc:a"})


def answer_temporal(req: TemporalRequest) -> TemporalResponse:
    if req.operation == "diff":
        return TemporalResponse.model_validate({"from": req.from_, "to": req.to, "changes": [
            TemporalChange(change="changed", fact=SUCCESSOR, previous=FACT),
            TemporalChange(change="added", fact=FACT)]})
    return TemporalResponse(facts=[FACT], truncated=True, at=req.at, known=req.known,
                            labels={E + "helios-grid": "Helios Grid"})


def answer_review(req: ReviewRequest) -> ReviewResponse:
    if req.operation == "list":
        return ReviewResponse(items=[QUEUED])
    return ReviewResponse(changed=[i for i in req.ids if i == "r1"], unknown=[i for i in req.ids if i != "r1"])


def gateway(tmp_path, tokens: str | None = TOKENS):
    """(base URL, the stand-ins by service) of a gateway with `tokens` (None: an open gateway)."""
    return stand_in_gateway(tmp_path, {"temporal": StandIn(answer_temporal), "review": StandIn(answer_review)}, tokens)


async def test_get_temporal_reaches_the_service_bound_to_the_callers_user(tmp_path):
    async with gateway(tmp_path) as (url, stand_ins):
        status, body = await call(url, "GET", "/api/v1/temporal?at=2025-06-01&subject=" + E + "x&limit=5"
                                  "&collection=research", "bob-token")
        assert status == 200 and body["truncated"] is True and body["facts"][0]["o"]["v"] == "Mara Quist", body
        sent = stand_ins["temporal"].requests[-1]
        assert (sent.operation, sent.at, sent.subject, sent.limit) == ("at", "2025-06-01T00:00:00Z", E + "x", 5)
        assert (sent.user, sent.collection) == ("bob", "research")

        status, body = await call(url, "GET", "/api/v1/temporal?from=2025-01&to=2025-06&axis=recorded", "bob-token")
        assert status == 200 and [c["change"] for c in body["changes"]] == ["changed", "added"], body
        assert stand_ins["temporal"].requests[-1].axis == "recorded"

        status, body = await call(url, "GET", "/api/v1/temporal", None)
        assert status == 401, body


@pytest.mark.parametrize("query, status, type_, words", [
    ("at=yesterday", 400, "bad-request",
     "at: 'yesterday' is not a date; use YYYY-MM-DD, YYYY-MM or an ISO 8601 date-time"),
    ("from=2025-01-01&to=someday", 400, "bad-request", "to: 'someday' is not a date"),
    ("from=2025-01-01", 400, "bad-request", "a diff needs both `from` and `to`"),
    ("at=2025-01-01&from=2024-01-01&to=2024-06-01", 400, "bad-request", "give one or the other"),
    ("at=2025-01-01&when=now", 400, "bad-request", "unknown query parameter(s) 'when'"),
    ("limit=0", 400, "bad-request", "limit: Input should be greater than or equal to 1"),
    ("user=alice", 403, "access-denied", "user 'bob' may not act for user 'alice'"),
    ("workspace=alice&collection=research", 403, "access-denied", "may not act for user 'alice'"),
    ("at=2025-01-01&flow=nope", 404, "unknown-flow", "nope"),
    ("subject=" + "%C2%80" * 2001, 400, "bad-request", "subject: at most 2,000 characters"),
])
async def test_bad_temporal_queries_are_refused_by_name(tmp_path, query, status, type_, words):
    async with gateway(tmp_path) as (url, stand_ins):
        got, body = await call(url, "GET", f"/api/v1/temporal?{query}", "bob-token")
    assert got == status and body["error"]["type"] == type_ and words in body["error"]["message"], body
    assert stand_ins["temporal"].requests == []


async def test_bob_cannot_read_alices_history_by_naming_her_on_any_route(tmp_path):
    history = {"operation": "at", "collection": "research"}
    async with gateway(tmp_path) as (url, stand_ins):
        status, body = await call(url, "POST", "/api/v1/flow/default/service/temporal", "bob-token",
                                  json={**history, "user": "alice"})
        assert status == 403 and body["error"]["type"] == "access-denied", body
        reply = await socket_reply(url, "bob-token", {"service": "temporal", "flow": "default", "workspace": "alice",
                                                      "request": history})
        assert reply["error"]["type"] == "access-denied", reply
        assert stand_ins["temporal"].requests == []
        # Asking without a name, or with the placeholder workspace, is asking about his own collection.
        reply = await socket_reply(url, "bob-token", {"service": "temporal", "flow": "default",
                                                      "workspace": "default", "request": history})
        assert reply["complete"] is True and "facts" in reply["response"], reply
        status, _ = await call(url, "POST", "/api/v1/flow/default/service/temporal", "bob-token", json=history)
        assert status == 200
        assert [(r.user, r.collection) for r in stand_ins["temporal"].requests] == [("bob", "research")] * 2


async def test_review_is_for_admins_on_every_path(tmp_path):
    verdict = {"operation": "approve", "ids": ["r1"], "collection": "research"}
    async with gateway(tmp_path) as (url, stand_ins):
        for method, path, body in [("GET", "/api/v1/review?status=all", None),
                                   ("POST", "/api/v1/review", verdict),
                                   ("POST", "/api/v1/review?flow=default", {"operation": "list"}),
                                   ("POST", "/api/v1/flow/default/service/review", verdict)]:
            status, reply = await call(url, method, path, "bob-token", json=body)
            assert status == 403 and reply["error"]["type"] == "access-denied", (path, reply)
            assert "needs an admin token" in reply["error"]["message"]
        reply = await socket_reply(url, "bob-token", {"service": "review", "flow": "default", "request": verdict})
        assert reply["complete"] is True and reply["error"]["type"] == "access-denied", reply
        assert stand_ins["review"].requests == []

        status, reply = await call(url, "GET", "/api/v1/review?status=all&collection=research", "alice-token")
        assert status == 200 and reply["items"][0]["id"] == "r1", reply
        listed = stand_ins["review"].requests[-1]
        assert (listed.operation, listed.status, listed.user, listed.collection) == ("list", "all", "alice", "research")


async def test_the_reviewer_is_the_caller_whatever_the_body_claims(tmp_path):
    verdict = {"operation": "reject", "ids": ["r1", "r9"], "reviewer": "mallory"}
    async with gateway(tmp_path) as (url, stand_ins):
        status, reply = await call(url, "POST", "/api/v1/review", "alice-token", json=verdict)
        assert status == 200 and (reply["changed"], reply["unknown"]) == (["r1"], ["r9"]), reply
        reply = await socket_reply(url, "alice-token", {"service": "review", "flow": "default", "request": verdict})
        assert reply["response"]["changed"] == ["r1"], reply
        assert [r.reviewer for r in stand_ins["review"].requests] == ["alice", "alice"]
    async with gateway(tmp_path, tokens=None) as (url, stand_ins):
        status, _ = await call(url, "POST", "/api/v1/flow/default/service/review", None, json=verdict)
        assert status == 200 and stand_ins["review"].requests[-1].reviewer == "admin"


# --- the commands --------------------------------------------------------------------------------


async def command(main, *args: str) -> int:
    """A tg-* command's exit status; it runs its own event loop, so it runs in a thread."""
    return await asyncio.to_thread(main, list(args))


async def test_the_commands_print_history_and_review_as_tables(tmp_path, capsys):
    async with gateway(tmp_path) as (url, stand_ins):
        admin = ("-u", url, "--token", "alice-token", "-C", "research")
        assert await command(graph_history.main_at, *admin, "--at", "2025-06-01", "--subject", "Helios Grid") == 0
        out, err = capsys.readouterr()
        assert "1 fact(s) held at 2025-06-01, as known at now:" in out
        assert "Helios Grid  run by     Mara Quist  2024-01-01" in out and "urn:doc:a" in out, out
        assert "more facts than the limit; showing the first 1" in err
        assert stand_ins["temporal"].requests[-1].subject == E + "helios-grid"

        assert await command(graph_history.main_diff, *admin, "--from", "2025-01", "--to", "2025-06") == 0
        out, _ = capsys.readouterr()
        assert "1 added, 0 removed, 1 changed" in out
        assert "Mara Quist → Ivo Brandt  urn:doc:a → urn:doc:b" in out, out

        assert await command(graph_history.main_at, *admin, "--at", "someday") == 1
        _, err = capsys.readouterr()
        assert err.strip() == ("tg-graph-at: error: bad-request: at: 'someday' is not a date; use YYYY-MM-DD, "
                               "YYYY-MM or an ISO 8601 date-time")

        assert await command(review.main_queue, *admin) == 0
        out, _ = capsys.readouterr()
        assert "r1  0.42        Helios Grid depends on Orbis Systems  one weak rule  urn:doc:a  pending" in out, out

        assert await command(review.main, *admin, "--approve", "r1", "r7") == 1
        out, err = capsys.readouterr()
        assert out == "approved 1: r1\n" and err == "tg-review: error: not in the review queue: r7\n"
        assert stand_ins["review"].requests[-1].ids == ["r1", "r7"]

        assert await command(review.main_queue, "-u", url, "--token", "bob-token") == 1
        _, err = capsys.readouterr()
        assert err.startswith("tg-show-review-queue: error: access-denied: the review service needs an admin token")
