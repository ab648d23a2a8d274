"""The codec stamps schema name and version, and refuses bodies it cannot trust."""

import pytest
from pydantic import TypeAdapter
from typing_extensions import TypedDict

from tracegraph.base.bus import codec
from tracegraph.base.errors import DecodeError, SchemaMismatch
from tracegraph.schemas.base import Error, Ping, Pong
from tracegraph.schemas.config import FlowRequest


def test_round_trip_stamps_schema_and_keeps_caller_properties():
    body, props = codec.encode(Ping(text="hi", seq=3), {"id": "r1"})
    assert props == {"id": "r1", "schema": "ping", "schema-version": "1"}
    assert codec.decode(body, props, Ping) == Ping(text="hi", seq=3)


def test_wire_uses_upstream_kebab_case_aliases():
    body, props = codec.encode(FlowRequest(operation="start-flow", flow_id="f", blueprint_name="b"))
    assert b'"flow-id":"f"' in body and b'"blueprint-name":"b"' in body
    assert b"null" not in body


def test_other_schema_is_refused_by_name():
    body, props = codec.encode(Ping())
    with pytest.raises(SchemaMismatch, match="expected schema 'pong', got 'ping'"):
        codec.decode(body, props, Pong)


def test_other_version_is_refused():
    body, props = codec.encode(Ping())
    with pytest.raises(SchemaMismatch, match="version 2"):
        codec.decode(body, {**props, "schema-version": "2"}, Ping)


def test_invalid_body_names_the_field():
    with pytest.raises(DecodeError, match="seq: Input should be a valid integer"):
        codec.decode(b'{"seq": "many"}', {"schema": "ping"}, Ping)


def test_missing_schema_property_is_a_decode_error():
    with pytest.raises(DecodeError, match="no 'schema' property"):
        codec.decode(b"{}", {}, Ping)


def test_failure_response_is_final_and_carries_the_error():
    failed = Pong.failure(Error(type="x", message="y"))
    assert failed.ends_request and failed.error == Error(type="x", message="y")


def test_message_without_schema_name_cannot_be_encoded():
    from tracegraph.schemas.config import ConfigKey
    with pytest.raises(TypeError, match="no schema_name"):
        codec.encode(ConfigKey(type="a", key="b"))


def test_an_encoded_message_is_checked_by_name_and_passed_on_as_the_same_bytes():
    body, props = codec.encode(Ping(text="hi", seq=3))
    with pytest.raises(SchemaMismatch, match="expected schema 'pong', got 'ping'"):
        codec.encoded(body, props, Pong)
    relayed = codec.encoded(b" " + body, props, Ping)
    assert codec.encode(relayed, {"id": "r2"}) == (b" " + body, {"id": "r2", "schema": "ping", "schema-version": "1"})
    assert relayed.decode() == Ping(text="hi", seq=3)


def test_peek_reads_only_the_named_fields_and_refuses_another_shape():
    shape = TypeAdapter(_Seq)
    assert codec.peek(codec.encoded(*codec.encode(Ping(text="x" * 50, seq=7)), Ping), shape) == {"seq": 7}
    with pytest.raises(DecodeError, match="invalid 'ping' message: seq"):
        codec.peek(codec.Encoded(Ping, b'{"seq": "many"}'), shape)


class _Seq(TypedDict):
    seq: int
