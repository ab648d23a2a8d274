"""Our wire RDF terms (schemas/rdf.py) to and from pyoxigraph terms, and N-Quads text for the bulk path.

pyoxigraph implements RDF 1.2: a quoted triple is a *triple term* (`pyoxigraph.Triple` used
as a term, `<<( s p o )>>` in N-Quads and SPARQL) and may stand only in object position.
Every engine converts through here, so they all accept and refuse the same data.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyoxigraph as ox

from tracegraph.base.errors import BadTerm
from tracegraph.schemas.base import prevalidated
from tracegraph.schemas.rdf import BlankTerm, IriTerm, LiteralTerm, Term, Triple, TripleTerm, cached_iri

OxTerm = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple
OxGraph = ox.NamedNode | ox.BlankNode | ox.DefaultGraph

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
RDF_DIR_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString"
_LANGUAGE_DATATYPES = {RDF_LANG_STRING, RDF_DIR_LANG_STRING}
_DIRECTIONS = {"ltr": ox.BaseDirection.LTR, "rtl": ox.BaseDirection.RTL}


def to_ox(term: Term) -> OxTerm:
    """The pyoxigraph term for a wire term; raises ValueError on an invalid IRI, blank node id or language tag.

    An RDF 1.2 base direction travels in the language field as `en--rtl`, the form
    N-Triples prints, since the wire literal has no field of its own for it.
    """
    try:
        return _to_ox(term)
    except ValueError as exc:
        raise BadTerm(f"invalid RDF term {term}: {exc}") from None


def iri_to_ox(value: str) -> ox.NamedNode:
    """The pyoxigraph node of an IRI given as text; raises BadTerm when it is not one."""
    try:
        return ox.NamedNode(value)
    except ValueError as exc:
        raise BadTerm(f"invalid IRI {value!r}: {exc}") from None


def _to_ox(term: Term) -> OxTerm:
    if isinstance(term, IriTerm):
        return ox.NamedNode(term.iri)
    if isinstance(term, BlankTerm):
        return ox.BlankNode(term.id)
    if isinstance(term, LiteralTerm):
        return _literal_to_ox(term)
    if isinstance(term, TripleTerm):
        t = term.triple
        return ox.Triple(_subject_to_ox(t.s), ox.NamedNode(t.p.iri), _to_ox(t.o))
    raise TypeError(f"not an RDF term: {term!r}")


def _literal_to_ox(term: LiteralTerm) -> ox.Literal:
    if term.language:
        if term.datatype and term.datatype not in _LANGUAGE_DATATYPES:
            raise ValueError("a literal has a language tag or a datatype, not both")
        language, _, direction = term.language.partition("--")
        if direction:
            if direction.lower() not in _DIRECTIONS:
                raise ValueError(f"unknown base direction {direction!r}: use ltr or rtl")
            return ox.Literal(term.value, language=language, direction=_DIRECTIONS[direction.lower()])
        return ox.Literal(term.value, language=language)
    if term.datatype:
        return ox.Literal(term.value, datatype=ox.NamedNode(term.datatype))
    return ox.Literal(term.value)


def _subject_to_ox(term: Term) -> ox.NamedNode | ox.BlankNode:
    node = _to_ox(term)
    if not isinstance(node, (ox.NamedNode, ox.BlankNode)):
        # RDF 1.2 keeps triple terms (and literals) out of subject position; saying so beats
        # pyoxigraph's TypeError about enum extraction.
        raise ValueError(f"a subject must be an IRI or a blank node, not {term} (RDF 1.2 allows "
                         "triple terms only as objects)")
    return node


def from_ox(term: OxTerm) -> Term:
    """The wire term for a pyoxigraph term; plain literals come back without a datatype.

    pyoxigraph has already validated these terms, so they are built without re-validation
    (`prevalidated`), which is most of the cost of a pattern lookup otherwise.
    """
    if isinstance(term, ox.NamedNode):
        return cached_iri(term.value)
    if isinstance(term, ox.BlankNode):
        return prevalidated(BlankTerm, {"kind": "b", "id": term.value})
    if isinstance(term, ox.Literal):
        if term.language:
            direction = f"--{term.direction.value}" if term.direction is not None else ""
            return prevalidated(LiteralTerm, {"kind": "l", "value": term.value, "datatype": None,
                                              "language": term.language + direction})
        datatype = term.datatype.value
        return prevalidated(LiteralTerm, {"kind": "l", "value": term.value, "datatype": None if datatype == XSD_STRING
                                          else datatype, "language": None})
    if isinstance(term, ox.Triple):
        return prevalidated(TripleTerm, {"kind": "t", "triple": triple_from_ox(term)})
    raise TypeError(f"not an RDF term: {term!r}")


def graph_to_ox(g: str | None) -> OxGraph:
    """None (or upstream's "") is the default graph; `_:id` a blank graph name; anything else an IRI."""
    if not g:
        return ox.DefaultGraph()
    try:
        return ox.BlankNode(g[2:]) if g.startswith("_:") else ox.NamedNode(g)
    except ValueError as exc:
        raise BadTerm(f"invalid graph name {g!r}: {exc}") from None


def graph_from_ox(graph: OxGraph) -> str | None:
    if isinstance(graph, ox.DefaultGraph):
        return None
    if isinstance(graph, ox.BlankNode):
        return f"_:{graph.value}"
    return graph.value


def quad_to_ox(triple: Triple) -> ox.Quad:
    """The pyoxigraph quad for a wire triple (its `g` becomes the graph name)."""
    try:
        return ox.Quad(_subject_to_ox(triple.s), _to_ox(triple.p), _to_ox(triple.o), graph_to_ox(triple.g))
    except ValueError as exc:
        raise BadTerm(f"invalid triple {triple}: {exc}") from None


def quad_from_ox(quad: ox.Quad) -> Triple:
    return prevalidated(Triple, {"s": from_ox(quad.subject), "p": cached_iri(quad.predicate.value),
                                 "o": from_ox(quad.object), "g": graph_from_ox(quad.graph_name)})


def triple_from_ox(triple: ox.Triple) -> Triple:
    """A wire triple in the default graph, e.g. a CONSTRUCT result or the inside of a triple term."""
    return prevalidated(Triple, {"s": from_ox(triple.subject), "p": cached_iri(triple.predicate.value),
                                 "o": from_ox(triple.object), "g": None})


def nt(term: OxTerm) -> str:
    """The canonical N-Triples text of a term; equal terms give equal text, so it can key a table.

    >>> nt(ox.Triple(ox.NamedNode("urn:s"), ox.NamedNode("urn:p"), ox.Literal("x", language="en")))
    '<<( <urn:s> <urn:p> "x"@en )>>'
    """
    if isinstance(term, ox.Triple):
        # pyoxigraph prints a bare Triple as a statement; as a term it needs the 1.2 brackets.
        return f"<<( {nt(term.subject)} {nt(term.predicate)} {nt(term.object)} )>>"
    return str(term)


def to_nquads(triples: Iterable[Triple]) -> str:
    """N-Quads text of wire triples, written by pyoxigraph's serializer (so escaping is its, not ours).

    >>> from tracegraph.schemas.rdf import iri, literal, quoted
    >>> print(to_nquads([Triple(s=iri("urn:sg"), p=iri("urn:contains"),
    ...                         o=quoted(iri("urn:s"), iri("urn:p"), literal('say "hi"')), g="urn:graph:source")]), end="")
    <urn:sg> <urn:contains> <<( <urn:s> <urn:p> "say \\"hi\\"" )>> <urn:graph:source> .
    """
    return ox.serialize((quad_to_ox(t) for t in triples), format=ox.RdfFormat.N_QUADS).decode()


def parse_nquads(text: str) -> Iterator[ox.Quad]:
    """The quads of N-Quads text, lazily; blank node labels are kept, so re-adding a text is idempotent.

    (`Store.load` and `Store.bulk_load` give every call fresh blank nodes instead.) A syntax
    error is raised as ValueError with the parser's line and column when iteration reaches it.
    """
    try:
        yield from ox.parse(text, format=ox.RdfFormat.N_QUADS)
    except SyntaxError as exc:
        raise BadTerm(f"invalid N-Quads: {exc}") from None


def read_nquads(text: str) -> list[Triple]:
    """The wire triples of N-Quads text."""
    return [quad_from_ox(q) for q in parse_nquads(text)]
