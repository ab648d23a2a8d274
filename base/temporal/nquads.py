"""Terms as N-Triples text, for history written as N-Quads lines: a record is built as a few strings and
a message's records are loaded in one `store.add_nquads` call (parsed by the engine), instead of being
built as model objects and converted one quad at a time. The same text is SPARQL syntax, so queries
quote terms with it too."""

from __future__ import annotations

from tracegraph.schemas.rdf import LiteralTerm, Term, TripleTerm

_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})


def literal_nt(value: str, datatype: str | None = None, language: str | None = None) -> str:
    """A literal in N-Triples: quotes, backslashes and line breaks escaped.

    >>> print(literal_nt('say "hi"\\n'), literal_nt("1.5", "urn:dt"), literal_nt("x", language="en"))
    "say \\"hi\\"\\n" "1.5"^^<urn:dt> "x"@en
    """
    text = f'"{value.translate(_ESCAPES)}"'
    if language:
        return f"{text}@{language}"
    return f"{text}^^<{datatype}>" if datatype else text


def term_nt(term: Term) -> str:
    """A term in N-Triples (and SPARQL) syntax; a triple term as RDF 1.2's `<<( s p o )>>`."""
    if isinstance(term, TripleTerm):
        t = term.triple
        return f"<<( {term_nt(t.s)} {term_nt(t.p)} {term_nt(t.o)} )>>"
    if isinstance(term, LiteralTerm):
        return literal_nt(term.value, term.datatype, term.language)
    return str(term)  # <iri> or _:blank


def quad_line(s: str, p: str, o: str, g: str) -> str:
    """One N-Quads line from terms already in N-Triples text, in named graph `g` (an IRI)."""
    return f"{s} {p} {o} <{g}> .\n"
