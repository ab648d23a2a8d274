"""Request fields have size limits, and no error message or log line grows with a client's input."""

from __future__ import annotations

import logging

import pytest
from pydantic import ValidationError

from tracegraph.base.bus import codec
from tracegraph.base.error_text import (
    MAX_ERROR_CHARS, bounded, bounded_error, bounded_traceback, field_problem, public_message,
)
from tracegraph.base.errors import DecodeError, RemoteError
from tracegraph.flow.gateway.dispatch import validation_message
from tracegraph.flow.gateway.refusals import failure_of
from tracegraph.schemas.agent import AgentRequest
from tracegraph.schemas.config import FlowRequest
from tracegraph.schemas.derived import DerivedRequest
from tracegraph.schemas.embeddings import PassageKeywordRequest, VectorQueryRequest
from tracegraph.schemas.fields import MAX_ID_CHARS, MAX_NAME_CHARS, MAX_QUERY_CHARS
from tracegraph.schemas.library import LibrarianRequest
from tracegraph.schemas.retrieval import GraphRagRequest
from tracegraph.schemas.search import SearchRequest
from tracegraph.schemas.triples import DocumentRemovalRequest, SparqlQueryRequest, TriplesQueryRequest

HUGE = "x" * 5_000_000

NAMED_REQUESTS = [  # (schema, the fields a request needs besides the one under test)
    (SparqlQueryRequest, {"query": "ASK {}"}),
    (TriplesQueryRequest, {}),
    (GraphRagRequest, {"query": "who?"}),
    (SearchRequest, {"query": "who?"}),
    (AgentRequest, {"question": "who?"}),
    (PassageKeywordRequest, {"query": "who?"}),
    (VectorQueryRequest, {"vector": [0.1]}),
    (DerivedRequest, {}),
    (DocumentRemovalRequest, {"document": "d"}),
    (LibrarianRequest, {"operation": "list-documents"}),
]


@pytest.mark.parametrize("field", ["user", "collection"])
@pytest.mark.parametrize(("schema", "needed"), NAMED_REQUESTS, ids=lambda v: getattr(v, "__name__", ""))
def test_a_user_or_collection_name_over_the_limit_is_refused_naming_the_field(schema, needed, field):
    schema.model_validate({**needed, field: "c" * MAX_NAME_CHARS})  # at the limit: accepted
    with pytest.raises(ValidationError) as caught:
        schema.model_validate({**needed, field: "c" * (MAX_NAME_CHARS + 1)})
    assert validation_message(caught.value) == f"{field}: at most {MAX_NAME_CHARS} characters"


def test_flow_ids_document_ids_and_query_texts_have_limits():
    cases = [(FlowRequest, {"operation": "start-flow", "flow-id": "f" * (MAX_NAME_CHARS + 1)}, "flow-id"),
             (DocumentRemovalRequest, {"document": "d" * (MAX_ID_CHARS + 1)}, "document"),
             (SparqlQueryRequest, {"query": "q" * (MAX_QUERY_CHARS + 1)}, "query")]
    for schema, body, field in cases:
        with pytest.raises(ValidationError) as caught:
            schema.model_validate(body)
        assert validation_message(caught.value).startswith(f"{field}: at most "), schema


def test_a_validation_message_never_quotes_the_input():
    with pytest.raises(ValidationError) as caught:
        SparqlQueryRequest.model_validate({"query": "ASK {}", "collection": HUGE, "limit": HUGE})
    message = validation_message(caught.value)
    assert "xxxx" not in message and len(message) < 200, message


def test_a_schemas_own_check_is_bounded_too():
    error = {"type": "value_error", "loc": ("at",), "msg": "", "ctx": {"error": ValueError(f"{HUGE!r} is not a date")}}
    assert len(field_problem(error)) <= MAX_ERROR_CHARS + 50 and field_problem(error).startswith("at: 'xxx")


def test_bounded_cuts_and_says_how_long_the_text_was():
    assert bounded("short") == "short"
    cut = bounded("y" * 10_000)
    assert cut.startswith("y" * MAX_ERROR_CHARS) and cut.endswith("(cut: 10,000 characters in all)")
    assert len(cut) < MAX_ERROR_CHARS + 50


def test_public_messages_and_log_texts_are_bounded():
    exc = RemoteError("triples-error", f"no store for collection {HUGE}")
    assert len(public_message("graph-rag-error", exc)) < MAX_ERROR_CHARS + 50
    assert len(bounded_error(ValueError(HUGE))) < MAX_ERROR_CHARS + 50
    try:
        raise ValueError(HUGE)
    except ValueError as raised:
        text = bounded_traceback(raised)
    assert text.startswith("Traceback") and "test_bounded_errors.py" in text and len(text) < 10_000


def test_the_gateway_answer_to_a_huge_service_error_is_bounded(caplog):
    reply = failure_of(RemoteError("triples-error", HUGE))
    assert reply.status == 200 and len(reply.message) < MAX_ERROR_CHARS + 50
    with caplog.at_level(logging.ERROR):
        reply = failure_of(RuntimeError(HUGE))
    assert reply.status == 500 and max(len(r.getMessage()) for r in caplog.records) < 10_000


def test_a_bus_message_with_a_huge_field_is_refused_briefly():
    body, properties = codec.encode(SparqlQueryRequest(query="ASK {}", collection="c"))
    body = body.replace(b'"collection":"c"', b'"collection":"' + b"z" * 30_000_000 + b'"')
    with pytest.raises(DecodeError) as caught:
        codec.decode(body, properties, SparqlQueryRequest)
    assert str(caught.value) == (f"invalid 'sparql-query-request' message: collection: at most {MAX_NAME_CHARS} "
                                 "characters")
