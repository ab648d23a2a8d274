"""RDF terms on the wire: upstream's compact JSON, quoted triples, clear errors for unknown tags."""

import pytest
from pydantic import ValidationError

from tracegraph.schemas.rdf import Triple, iri, literal, quoted


def test_quoted_triple_round_trips_in_compact_json():
    edge = quoted(iri("urn:a"), iri("http://x/p"), literal("b", language="en"))
    t = Triple(s=iri("urn:sg"), p=iri("https://trustgraph.ai/ns/contains"), o=edge, g="urn:graph:source")
    js = t.model_dump_json(by_alias=True, exclude_none=True)
    assert '"o":{"t":"t","tr":{"s":{"t":"i","i":"urn:a"}' in js
    assert Triple.model_validate_json(js) == t


def test_terms_print_in_the_specs_form():
    edge = quoted(iri("urn:a"), iri("http://x/p"), literal("1", datatype="http://www.w3.org/2001/XMLSchema#int"))
    assert str(edge) == '<< <urn:a> <http://x/p> "1"^^<http://www.w3.org/2001/XMLSchema#int> >>'
    assert str(literal('say "hi"')) == '"say \\"hi\\""'


def test_unknown_term_tag_is_a_clear_error():
    with pytest.raises(ValidationError, match="union_tag_invalid"):
        Triple.model_validate({"s": {"t": "x", "i": "a"}, "p": {"t": "i", "i": "p"}, "o": {"t": "l", "v": "1"}})


def test_terms_are_frozen_and_hashable():
    a, b = iri("urn:a"), iri("urn:a")
    assert a == b and len({a, b}) == 1
    with pytest.raises(ValidationError):
        a.iri = "urn:b"


def test_predicate_must_be_an_iri():
    with pytest.raises(ValidationError):
        Triple(s=iri("urn:a"), p=literal("p"), o=iri("urn:b"))
