"""Bounded input and never-5xx: the gateway's checks on bodies and frames, the schemas' question and id
limits, the codec on hostile bodies, and a gateway whose bus or services are down (503, not 500)."""

from __future__ import annotations

import contextlib
import doctest
import json
from collections.abc import AsyncIterator

import aio_pika
import aiohttp
import aiormq
import pytest
from pydantic import ValidationError

import tracegraph.flow.gateway.limits
import tracegraph.schemas.fields
from tracegraph.base.bus import codec
from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.errors import (
    BusError, ConfigError, ConnectError, DecodeError, RemoteError, RequestTimeout, ServiceUnavailable, TopicNotFound,
)
from tracegraph.base.settings import RuntimeSettings
from tracegraph.flow.gateway.app import GatewayProcessor
from tracegraph.flow.gateway.limits import MAX_JSON_DEPTH, leading_id, nesting_depth, parse_json
from tracegraph.flow.gateway.refusals import GatewayError, failure_of
from tracegraph.flow.librarian.library import Library
from tracegraph.launch.stack import Stack
from tracegraph.schemas.agent import AgentRequest
from tracegraph.schemas.base import Ping, Pong
from tracegraph.schemas.embeddings import PassageKeywordRequest
from tracegraph.schemas.library import LibrarianRequest
from tracegraph.schemas.retrieval import DocumentRagRequest, GraphRagRequest
from tracegraph.schemas.search import KeywordQueryRequest, SearchRequest

from support.stack import config_factory

FIVE_MB = 5_000_000


@pytest.mark.parametrize("module", [tracegraph.flow.gateway.limits, tracegraph.schemas.fields])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def refusal(data: bytes | str, **kwargs) -> GatewayError:
    with pytest.raises(GatewayError) as caught:
        parse_json(data, **kwargs)
    assert caught.value.status == 400 and caught.value.type == "bad-request"
    return caught.value


# --- bodies and frames ------------------------------------------------------------------------


def test_deep_nesting_is_refused_by_a_scan_before_parsing():
    assert f"nested deeper than {MAX_JSON_DEPTH} levels" in refusal(b"[" * 100_000).message
    assert "nested deeper" in refusal(b'{"query": ' + b"[" * 100_000 + b"]" * 100_000 + b"}").message
    at_limit = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert nesting_depth(at_limit) == MAX_JSON_DEPTH and parse_json(at_limit)
    assert "deeper than 64" in refusal("[" + at_limit + "]").message
    assert "deeper than 3" in refusal("[[[[]]]]", max_depth=3, what="frame").message


def test_brackets_inside_strings_are_text_not_nesting():
    text = json.dumps({"query": "[" * 1000 + '\\" {{{ "' + "{" * 1000, "ok": [1, {"a": "]]]"}]})
    assert nesting_depth(text) == 3
    assert parse_json(text)["query"].startswith("[[[")


def test_lone_surrogates_are_refused_by_field_name():
    assert refusal(b'{"query": "\\ud800 lone"}').message == "query: lone surrogate, not valid Unicode"
    nested = b'{"document-metadata": {"tags": ["ok", "\\udc00"]}}'
    assert refusal(nested).message.startswith("document-metadata.tags.1: lone surrogate")
    assert refusal(b'{"\\ud800": 1}').message.startswith("\\ud800: lone surrogate")
    assert refusal(b'"\\ud800"', what="frame").message.startswith("frame: lone surrogate")
    assert parse_json(b'{"query": "\\ud83d\\ude00 a pair is fine"}')["query"].startswith("\U0001F600")


def test_invalid_utf8_and_non_json_are_refused_by_what_is_wrong():
    assert "not valid UTF-8 (invalid start byte at byte 11)" in refusal(b'{"query": "\xff\xfe"}').message
    assert "not valid UTF-8" in refusal(b'{"query": "\xed\xa0\x80"}').message  # an encoded surrogate
    assert "not valid JSON" in refusal(b"{nope").message
    assert "NaN is not a JSON number" in refusal(b'{"limit": NaN}').message


def test_a_frame_that_cannot_be_parsed_keeps_its_leading_id():
    assert leading_id('{ "id" : "r-1", "request": [[[[') == "r-1"
    assert leading_id('{"request": [[[[], "id": "late"') is None
    assert leading_id("[[[[") is None


# --- the schemas' limits: the same refusal whether a request came through the gateway or the bus ----

QUESTIONS = [(GraphRagRequest, "query"), (DocumentRagRequest, "query"), (SearchRequest, "query"),
             (AgentRequest, "question"), (KeywordQueryRequest, "query"), (PassageKeywordRequest, "query")]


@pytest.mark.parametrize("request_type, field", QUESTIONS)
def test_a_huge_question_is_refused_fast_by_name_from_the_bus_too(request_type, field):
    body = json.dumps({field: "x" * FIVE_MB}).encode()
    with pytest.raises(DecodeError) as caught:
        codec.decode(body, {"schema": request_type.schema_name}, request_type)
    assert f"{field}: question is 5,000,000 bytes, over the limit of 4,096 bytes (TG_MAX_QUESTION_BYTES)" \
        in str(caught.value)
    assert len(str(caught.value)) < 300  # the question is not echoed


def test_the_question_limit_counts_utf8_bytes_and_follows_the_environment(monkeypatch):
    assert GraphRagRequest(query="é" * 2048).query  # 4,096 bytes: at the limit
    with pytest.raises(ValidationError, match="question is 4,098 bytes"):
        GraphRagRequest(query="é" * 2049)
    monkeypatch.setenv("TG_MAX_QUESTION_BYTES", "10")
    with pytest.raises(ValidationError, match="over the limit of 10 bytes"):
        AgentRequest(question="eleven char")
    monkeypatch.setenv("TG_MAX_QUESTION_BYTES", "lots")
    with pytest.raises(ValueError, match="TG_MAX_QUESTION_BYTES='lots' is not a positive number"):
        tracegraph.schemas.fields.max_question_bytes()


def test_librarian_ids_have_a_length_limit_and_are_not_echoed():
    huge = "d" * 5000
    with pytest.raises(ValidationError) as caught:
        LibrarianRequest.model_validate({"operation": "get-document-metadata", "document-id": huge})
    assert "document-id" in str(caught.value.errors()[0]["loc"]) and huge not in str(caught.value)


async def test_the_library_does_not_echo_a_long_id_in_full(tmp_path):
    library = await Library(tmp_path).open()
    try:
        with pytest.raises(ConfigError) as caught:
            await library.require("default", "d" * 1000)
    finally:
        await library.close()
    message = str(caught.value)
    assert message.startswith("no document 'ddd") and "(1,000 characters)" in message and len(message) < 200


# --- the codec on hostile bodies ------------------------------------------------------------


@pytest.mark.parametrize("body, words", [
    (b"[" * 100_000, "recursion limit"),
    (b'{"query": ' + b"[" * 100_000 + b"}", "recursion limit"),
    (b'{"query": "\\ud800 lone"}', "not valid Unicode"),
    (b'{"query": "\\udc00"}', "not valid Unicode"),
    (b'{"query": "\xff"}', "not valid Unicode"),
])
def test_decode_refuses_hostile_bodies_with_a_decode_error(body, words):
    with pytest.raises(DecodeError, match=words):
        codec.decode(body, {"schema": "graph-rag-request"}, GraphRagRequest)


def test_a_lone_surrogate_from_a_lenient_parser_is_sent_as_u_fffd():
    lenient = json.loads('{"text": "a\\ud800b", "seq": 2}')  # as an LLM client's json.loads would give it
    body, props = codec.encode(Pong.model_validate(lenient))
    assert codec.decode(body, props, Pong) == Pong(text="a\ufffdb", seq=2)


# --- what failures below the gateway become ---------------------------------------------------


@pytest.mark.parametrize("exc, status, type_", [
    (ServiceUnavailable("no service is consuming it"), 503, "unavailable"),
    (BusError("channel closed"), 503, "unavailable"),
    (ConnectError("broker unreachable"), 503, "unavailable"),
    (aiormq.exceptions.ConnectionClosed(320, "CONNECTION_FORCED"), 503, "unavailable"),
    (aio_pika.exceptions.QueueEmpty(), 503, "unavailable"),
    (ConnectionResetError("reset by peer"), 503, "unavailable"),
    (RemoteError("unavailable", "the triples store is down"), 503, "unavailable"),
    (RemoteError("bad-request", "no such thing"), 200, "bad-request"),
    (RequestTimeout("no response within 60s"), 504, "timeout"),
    (TopicNotFound("not a topic"), 400, "bad-request"),
    (DecodeError("garbled"), 502, "bad-response"),
    (RuntimeError("a bug"), 500, "internal-error"),
])
def test_each_failure_has_one_status(exc, status, type_):
    failure = failure_of(exc)
    assert (failure.status, failure.type) == (status, type_)
    assert failure.message


# --- a gateway whose bus or services are down, over HTTP and the socket -------------------------


class FailingClient:
    """A request client of a service that is gone: every call raises `failure`."""

    def __init__(self, failure: Exception) -> None:
        self.failure = failure

    async def request(self, message):
        raise self.failure

    async def stream(self, message) -> AsyncIterator:
        raise self.failure
        yield  # an async generator, as RequestClient.stream is


class PingClient:
    """A request client of a ping service that answers at once."""

    async def request(self, message: Ping) -> Pong:
        return Pong(text=message.text, end_of_stream=True)

    async def stream(self, message: Ping) -> AsyncIterator[Pong]:
        yield await self.request(message)


class GatewayOverFailures(GatewayProcessor):
    """The real gateway, whose flow services fail with `failure` (ping still answers) and whose
    global services fail while their client is created, as aiormq's connection-closed did."""

    failure: Exception = ServiceUnavailable("nobody serves it")

    async def client(self, flow_id, kind, request, response):
        return PingClient() if kind == "ping" else FailingClient(self.failure)

    async def global_client(self, kind):
        raise self.failure


@contextlib.asynccontextmanager
async def gateway_failing_with(tmp_path, failure: Exception):
    def build(backend, settings):
        gateway = GatewayOverFailures(backend, settings)
        gateway.failure = failure
        return gateway
    backend = InprocBackend()
    settings = RuntimeSettings(data_dir=tmp_path, gateway_port=0, request_timeout=10)
    try:
        async with Stack(backend, settings, [config_factory(), build]) as stack:
            async with aiohttp.ClientSession(f"http://127.0.0.1:{stack['gateway'].port}") as http:
                yield http
    finally:
        await backend.aclose()


async def post(http: aiohttp.ClientSession, path: str, data: bytes, **kwargs) -> tuple[int, dict]:
    async with http.post(path, data=data, headers={"Content-Type": "application/json"}, **kwargs) as r:
        return r.status, await r.json()


UNAVAILABLE = [ServiceUnavailable("no service is consuming graph-rag"), BusError("the channel closed"),
               aiormq.exceptions.ConnectionClosed(320, "CONNECTION_FORCED"),
               RemoteError("unavailable", "the store behind graph-rag is down")]


@pytest.mark.parametrize("failure", UNAVAILABLE, ids=lambda e: type(e).__name__)
async def test_a_service_or_bus_that_is_down_is_a_503_everywhere(tmp_path, failure):
    question = json.dumps({"query": "anyone there?"}).encode()
    async with gateway_failing_with(tmp_path, failure) as http:
        status, body = await post(http, "/api/v1/flow/default/service/graph-rag", question)
        assert status == 503 and body["error"]["type"] == "unavailable", body
        status, body = await post(http, "/api/v1/librarian", b'{"operation": "list-documents"}')
        assert status == 503 and body["error"]["type"] == "unavailable", body

        async with http.post("/api/v1/flow/default/service/graph-rag?stream=true", data=question) as r:
            lines = [json.loads(line) for line in (await r.text()).splitlines()]
        assert r.status == 200 and lines[-1]["error"]["type"] == "unavailable", lines

        async with http.ws_connect("/api/v1/socket") as ws:
            await ws.send_json({"type": "auth", "token": ""})
            await ws.receive_json(timeout=10)
            await ws.send_json({"id": "rag", "service": "graph-rag", "flow": "default",
                                "request": {"query": "anyone there?"}})
            reply = await ws.receive_json(timeout=10)
            assert reply["id"] == "rag" and reply["complete"] is True, reply
            assert (reply.get("error") or reply["response"]["error"])["type"] == "unavailable", reply
            await ws.send_json({"id": "ping", "service": "ping", "flow": "default", "request": {"text": "still"}})
            assert (await ws.receive_json(timeout=10))["response"]["text"] == "still"


async def test_an_unexpected_exception_is_a_short_json_500_and_is_logged(tmp_path, caplog):
    async with gateway_failing_with(tmp_path, RuntimeError("a bug with a long story")) as http:
        status, body = await post(http, "/api/v1/flow/default/service/graph-rag", b'{"query": "q"}')
    assert status == 500 and body == {"error": {"type": "internal-error",
                                                "message": "internal error (RuntimeError); see the gateway's log"}}
    assert "a bug with a long story" in caplog.text


async def test_hostile_input_is_a_400_over_http_and_an_error_frame_on_an_open_socket(tmp_path):
    rag = "/api/v1/flow/default/service/graph-rag"
    async with gateway_failing_with(tmp_path, ServiceUnavailable("unused")) as http:
        status, body = await post(http, rag, b"[" * 100_000)
        assert status == 400 and "nested deeper than 64 levels" in body["error"]["message"]
        status, body = await post(http, rag, b'{"query": "\\ud800 lone"}')
        assert status == 400 and body["error"]["message"] == "query: lone surrogate, not valid Unicode"
        status, body = await post(http, rag, b'{"query": "\xff\xfe"}')
        assert status == 400 and "not valid UTF-8" in body["error"]["message"]
        status, body = await post(http, rag, json.dumps({"query": "x" * FIVE_MB}).encode())
        assert status == 400 and body["error"]["message"].startswith("query: question is 5,000,000 bytes")

        async with http.ws_connect("/api/v1/socket", max_msg_size=0) as ws:
            await ws.send_json({"type": "auth", "token": ""})
            await ws.receive_json(timeout=10)
            await ws.send_str('{"id": "deep", "service": "ping", "flow": "default", "request": '
                              + "[" * 100_000 + "]" * 100_000 + "}")
            reply = await ws.receive_json(timeout=10)
            assert reply["id"] == "deep" and "nested deeper than 64" in reply["error"]["message"], reply
            await ws.send_str('{"id": "lone", "service": "graph-rag", "flow": "default", '
                              '"request": {"query": "\\ud800"}}')
            reply = await ws.receive_json(timeout=10)
            assert reply["id"] == "lone", reply
            assert reply["error"]["message"] == "request.query: lone surrogate, not valid Unicode"
            await ws.send_json({"id": "ping", "service": "ping", "flow": "default", "request": {"text": "open"}})
            assert (await ws.receive_json(timeout=10))["response"]["text"] == "open"


async def test_method_not_allowed_keeps_its_allow_header(tmp_path):
    async with gateway_failing_with(tmp_path, ServiceUnavailable("unused")) as http:
        async with http.delete("/api/v1/health") as r:
            assert r.status == 405 and "GET" in r.headers["Allow"].split(",")
            assert (await r.json())["error"]["type"] == "method-not-allowed"
        async with http.get("/api/v1/librarian") as r:
            assert r.status == 405 and "POST" in r.headers["Allow"].split(",")
