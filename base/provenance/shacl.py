"""SHACL validation of explain traces and extraction provenance against specs/ontology/shapes.ttl.

rdflib and pyshacl do not support RDF 1.2 triple terms, so the shapes see a *reified view* of the
data: every quoted triple `<<( s p o )>>`, in object or subject position and at any depth, is
replaced by a blank node `_:t a rdf:Statement ; rdf:subject s ; rdf:predicate p ; rdf:object o`
(nested triple terms are reified recursively). Equal triple terms share one blank node, since an
RDF 1.2 triple term is a value: the edge a Focus selected and the fact a Subgraph contains are then
the same node, as they are in the store. Graph names are dropped, so the shapes see the union of
the graphs given (a trace in `urn:graph:retrieval`, its provenance in `urn:graph:source`, the
document's description in the default graph).

What the view cannot tell apart: a triple term from an ordinary `rdf:Statement` node written as
such (both pass the same shapes), and asserted from merely quoted triples (the view states neither
as a fact, the shapes only check quoted ones). A literal's RDF 1.2 base direction (`en--rtl`) is
dropped; the language tag is kept.

pyshacl is slow to import and blocking: call `validate_trace` through `asyncio.to_thread`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import tracegraph
from tracegraph.schemas.rdf import BlankTerm, IriTerm, LiteralTerm, Term, Triple, TripleTerm

if TYPE_CHECKING:
    from rdflib import Graph
    from rdflib.term import Identifier

SHAPES_PATH = Path(tracegraph.__file__).parent / "specs" / "ontology" / "shapes.ttl"

_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_PREFIXES = {
    "tg": "https://trustgraph.ai/ns/",
    "prov": "http://www.w3.org/ns/prov#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "dc": "http://purl.org/dc/elements/1.1/",
}


@dataclass(frozen=True, slots=True)
class ShaclReport:
    """The outcome of one validation: `messages` has one line per violation (focus node, path, message)."""

    conforms: bool
    messages: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return "conforms" if self.conforms else "\n".join(self.messages)


class _ReifiedView:
    """Builds the rdflib graph of the reified view and remembers which blank node stands for which triple term."""

    def __init__(self) -> None:
        from rdflib import BNode, Graph

        self._bnode = BNode
        self.graph: Graph = Graph()
        self.quoted: dict[Identifier, TripleTerm] = {}  # reifying blank node → the triple term it stands for
        self._reified: dict[tuple[Identifier, Identifier, Identifier], Identifier] = {}
        self._blanks: dict[str, Identifier] = {}  # the data's own blank nodes, kept apart from ours
        self.blank_ids: dict[Identifier, str] = {}  # and back, to name them as the data does

    def add(self, triple: Triple) -> None:
        self.graph.add((self.node(triple.s), self.node(triple.p), self.node(triple.o)))

    def node(self, term: Term) -> Identifier:
        from rdflib import Literal, URIRef

        if isinstance(term, IriTerm):
            return URIRef(term.iri)
        if isinstance(term, LiteralTerm):
            if term.language:
                return Literal(term.value, lang=term.language.partition("--")[0])
            # A simple literal is an xsd:string (RDF 1.1): one form, so sh:in ("llm") matches both.
            datatype = None if term.datatype in (None, _XSD_STRING) else URIRef(term.datatype)
            return Literal(term.value, datatype=datatype)
        if isinstance(term, BlankTerm):
            if term.id not in self._blanks:
                self._blanks[term.id] = node = self._bnode()
                self.blank_ids[node] = term.id
            return self._blanks[term.id]
        if isinstance(term, TripleTerm):
            return self._reify(term)
        raise TypeError(f"not an RDF term: {term!r}")

    def _reify(self, term: TripleTerm) -> Identifier:
        from rdflib import RDF

        t = term.triple
        key = (self.node(t.s), self.node(t.p), self.node(t.o))
        if key not in self._reified:
            statement = self._bnode()
            self._reified[key] = statement
            self.quoted[statement] = term
            self.graph.add((statement, RDF.type, RDF.Statement))
            self.graph.add((statement, RDF.subject, key[0]))
            self.graph.add((statement, RDF.predicate, key[1]))
            self.graph.add((statement, RDF.object, key[2]))
        return self._reified[key]


def _view(triples: Iterable[Triple]) -> _ReifiedView:
    view = _ReifiedView()
    for triple in triples:
        view.add(triple)
    return view


def reified_graph(triples: Iterable[Triple]) -> Graph:
    """The rdflib graph the shapes validate: the union of the triples' graphs, triple terms reified."""
    return _view(triples).graph


@cache
def _shapes() -> Graph:
    from rdflib import Graph

    return Graph().parse(SHAPES_PATH, format="turtle")


def validate_trace(triples: Iterable[Triple]) -> ShaclReport:
    """Validate triples (any graphs; their union is checked) against shapes.ttl. Blocking: pyshacl is sync."""
    import pyshacl
    from rdflib import RDF, Namespace

    view = _view(triples)
    conforms, results, _ = pyshacl.validate(
        view.graph, shacl_graph=_shapes(), advanced=True,  # advanced: the shapes' SPARQL targets
        inference="none", abort_on_first=False, allow_warnings=False, allow_infos=False)
    sh = Namespace("http://www.w3.org/ns/shacl#")
    messages = []
    for result in results.subjects(RDF.type, sh.ValidationResult):
        focus = results.value(result, sh.focusNode)
        path = results.value(result, sh.resultPath)
        value = results.value(result, sh.value)
        message = results.value(result, sh.resultMessage)
        line = f"{_show(view, focus)} {_show_path(results, path)}: {message or 'violation'}"
        if value is not None and value != focus:
            line += f" (value {_show(view, value)})"
        messages.append(line)
    return ShaclReport(conforms=bool(conforms), messages=sorted(messages))


def validate_nquads(text: str) -> ShaclReport:
    """`validate_trace` of N-Quads text (RDF 1.2: triple terms as `<<( s p o )>>`), parsed by pyoxigraph."""
    from tracegraph.base.stores.terms import read_nquads

    return validate_trace(read_nquads(text))


def _show(view: _ReifiedView, node: Identifier | None) -> str:
    """A node as N-Triples-like text; a reifying blank node as the triple term it stands for."""
    from rdflib import BNode, Literal, URIRef

    if node is None:
        return "-"
    if node in view.quoted:
        return str(view.quoted[node])
    if isinstance(node, URIRef):
        return f"<{node}>"
    if isinstance(node, Literal):
        return node.n3()
    if isinstance(node, BNode):
        return f"_:{view.blank_ids.get(node, node)}"
    return str(node)


def _show_path(results: Graph, path: Identifier | None) -> str:
    """A result path compactly: `tg:query`, `^tg:selectedEdge`, or `-` for a node-level result."""
    from rdflib import URIRef

    if path is None:
        return "-"
    if isinstance(path, URIRef):
        for prefix, base in _PREFIXES.items():
            if path.startswith(base):
                return f"{prefix}:{path[len(base):]}"
        return f"<{path}>"
    inverse = results.value(path, URIRef("http://www.w3.org/ns/shacl#inversePath"))
    if inverse is not None:
        return "^" + _show_path(results, inverse)
    return str(path)
