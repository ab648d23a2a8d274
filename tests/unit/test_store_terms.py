"""Wire terms to pyoxigraph terms and back, N-Quads text, and the SPARQL keyword lexer of the oxigraph engine."""

from __future__ import annotations

import doctest

import pyoxigraph as ox
import pytest

import tracegraph.base.stores.oxigraph as oxigraph_engine
import tracegraph.base.stores.terms as terms
from tracegraph.base.stores.oxigraph import explain_syntax_error, keywords
from tracegraph.base.stores.terms import (from_ox, graph_from_ox, graph_to_ox, nt, parse_nquads, quad_from_ox,
                                          quad_to_ox, read_nquads, to_nquads, to_ox)
from tracegraph.schemas.rdf import BlankTerm, LiteralTerm, Triple, iri, literal, quoted

XSD = "http://www.w3.org/2001/XMLSchema#"

ROUND_TRIPS = [
    iri("urn:e:alice"),
    iri("https://trustgraph.ai/ns/contains"),
    BlankTerm(id="b1"),
    literal("plain"),
    literal("42", datatype=XSD + "integer"),
    literal("x", datatype="urn:custom"),
    literal("bonjour", language="fr"),
    literal("مرحبا", language="ar--rtl"),
    literal('"quoted" \\ \n\t é 😀'),
    quoted(iri("urn:s"), iri("urn:p"), literal("o")),
    quoted(BlankTerm(id="x"), iri("urn:p"), quoted(iri("urn:s"), iri("urn:p"), iri("urn:o"))),
]


@pytest.mark.parametrize("term", ROUND_TRIPS, ids=str)
def test_terms_round_trip(term):
    assert from_ox(to_ox(term)) == term


def test_pyoxigraph_types_are_the_expected_ones():
    assert isinstance(to_ox(iri("urn:a")), ox.NamedNode)
    assert isinstance(to_ox(BlankTerm(id="b")), ox.BlankNode)
    assert to_ox(literal("1", datatype=XSD + "integer")).datatype == ox.NamedNode(XSD + "integer")
    assert isinstance(to_ox(quoted(iri("urn:s"), iri("urn:p"), iri("urn:o"))), ox.Triple)
    assert to_ox(literal("hi", language="en--ltr")).direction == ox.BaseDirection.LTR


def test_canonical_forms_are_what_comes_back():
    assert from_ox(to_ox(literal("s", datatype=XSD + "string"))) == literal("s")
    assert from_ox(to_ox(literal("hi", language="en-US"))) == literal("hi", language="en-us")


@pytest.mark.parametrize("term, message", [
    (iri("not an iri"), "invalid RDF term"),
    (iri("relative"), "invalid RDF term"),
    (BlankTerm(id="a b"), "invalid RDF term"),
    (LiteralTerm(value="x", language="en", datatype=XSD + "integer"), "not both"),
    (literal("x", language="en--up"), "base direction"),
    (quoted(literal("s"), iri("urn:p"), iri("urn:o")), "subject must be an IRI or a blank node"),
])
def test_invalid_terms_raise_value_error(term, message):
    with pytest.raises(ValueError, match=message):
        to_ox(term)


def test_a_triple_term_subject_is_refused_with_the_reason():
    edge = quoted(iri("urn:s"), iri("urn:p"), iri("urn:o"))
    with pytest.raises(ValueError, match="triple terms only as objects"):
        quad_to_ox(Triple(s=edge, p=iri("urn:p"), o=literal("x")))


def test_graph_names():
    assert graph_to_ox(None) == ox.DefaultGraph()
    assert graph_to_ox("urn:graph:source") == ox.NamedNode("urn:graph:source")
    assert graph_to_ox("_:g1") == ox.BlankNode("g1")
    for g in (None, "urn:graph:source", "_:g1"):
        assert graph_from_ox(graph_to_ox(g)) == g
    with pytest.raises(ValueError, match="invalid graph name"):
        graph_to_ox("no graph")


def test_quads_round_trip_with_their_graph():
    triple = Triple(s=iri("urn:sg"), p=iri("urn:contains"), o=quoted(iri("urn:s"), iri("urn:p"), iri("urn:o")),
                    g="urn:graph:source")
    assert quad_from_ox(quad_to_ox(triple)) == triple
    assert quad_from_ox(quad_to_ox(triple.model_copy(update={"g": None}))).g is None


def test_nt_is_canonical_n_triples():
    assert nt(to_ox(iri("urn:a"))) == "<urn:a>"
    assert nt(to_ox(BlankTerm(id="b1"))) == "_:b1"
    assert nt(to_ox(literal('a "b"\n'))) == '"a \\"b\\"\\n"'
    assert nt(to_ox(literal("1", datatype=XSD + "integer"))) == f'"1"^^<{XSD}integer>'
    assert nt(to_ox(literal("s", datatype=XSD + "string"))) == '"s"'
    assert nt(to_ox(quoted(iri("urn:s"), iri("urn:p"), quoted(iri("urn:a"), iri("urn:b"), literal("c"))))) == \
        '<<( <urn:s> <urn:p> <<( <urn:a> <urn:b> "c" )>> )>>'


def test_nquads_round_trip():
    triples = [
        Triple(s=iri("urn:sg"), p=iri("urn:contains"), o=quoted(iri("urn:s"), iri("urn:p"), literal('x "y"\n')),
               g="urn:graph:source"),
        Triple(s=BlankTerm(id="n1"), p=iri("urn:name"), o=literal("née", language="fr")),
        Triple(s=iri("urn:a"), p=iri("urn:n"), o=literal("7", datatype=XSD + "integer"), g="_:g"),
    ]
    text = to_nquads(triples)
    assert text.count("\n") == 3 and "<<( <urn:s> <urn:p>" in text
    assert read_nquads(text) == triples


def test_parsing_keeps_blank_node_labels():
    [quad] = parse_nquads("_:first <urn:p> _:second .\n")
    assert (quad.subject, quad.object) == (ox.BlankNode("first"), ox.BlankNode("second"))


def test_bad_nquads_raise_value_error_with_the_line():
    with pytest.raises(ValueError, match="invalid N-Quads: .*line 2"):
        read_nquads("<urn:a> <urn:p> <urn:b> .\n<urn:a> <urn:p> .\n")


@pytest.mark.parametrize("module", [terms, oxigraph_engine])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# The oxigraph engine's lexer picks the message for refused queries and finds SERVICE.

@pytest.mark.parametrize("sparql, words", [
    ('SELECT * WHERE { ?s ?p "DELETE" }', ["SELECT", "WHERE"]),
    ("SELECT * WHERE { ?s ?p '''multi\nline INSERT''' }", ["SELECT", "WHERE"]),
    ("PREFIX delete: <urn:x#> SELECT ?insert WHERE { ?s delete:drop <urn:DROP> } # CLEAR", ["PREFIX", "SELECT", "WHERE"]),
    ("SELECT * WHERE { ?s ?p ?o .SERVICE <http://x> { } }", ["SELECT", "WHERE", "SERVICE"]),
    ("SELECT * WHERE { ?s ex:a\\#SERVICE ?o }", ["SELECT", "WHERE"]),
    ('SELECT * WHERE { ?s ?p "a"@en-GB, "b"^^xsd:string }', ["SELECT", "WHERE"]),
    ("SELECT * WHERE { ?s ?p <<( ?a ?b ?c )>> FILTER(?x<3 && ?y>2) }", ["SELECT", "WHERE", "FILTER"]),
])
def test_keywords_skip_strings_iris_comments_and_names(sparql, words):
    assert keywords(sparql) == words


def test_syntax_errors_of_updates_say_updates_are_not_allowed():
    error = SyntaxError("error at 1:1: expected CONSTRUCT")
    assert "not allowed" in explain_syntax_error("BASE <urn:> PREFIX a: <urn:a> INSERT DATA {}", error)
    assert explain_syntax_error("SELECT ?s WHERE {", error) == "SPARQL syntax error: error at 1:1: expected CONSTRUCT"
