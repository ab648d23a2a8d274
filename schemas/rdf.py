"""RDF terms and triples on the wire, in upstream TrustGraph's compact JSON (`t`, `i`, `v`, `dt`, `ln`, `tr`).

A quoted triple (RDF-star / RDF 1.2 triple term) is a term of its own, so a triple's
subject or object may itself be a triple.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Annotated, ClassVar, Literal, Union

from pydantic import Field, ValidatorFunctionWrapHandler, WrapValidator

from tracegraph.schemas.base import Message, prevalidated


class IriTerm(Message):
    """An IRI, e.g. `urn:trustgraph:question:…` or `https://trustgraph.ai/ns/query`."""

    kind: Literal["i"] = Field("i", alias="t")
    iri: str = Field(alias="i", min_length=1)

    def __str__(self) -> str:
        return f"<{self.iri}>"


class BlankTerm(Message):
    """A blank node, by its local id."""

    kind: Literal["b"] = Field("b", alias="t")
    id: str = Field(alias="d", min_length=1)

    def __str__(self) -> str:
        return f"_:{self.id}"


class LiteralTerm(Message):
    """A literal with an optional datatype IRI or language tag (never both)."""

    kind: Literal["l"] = Field("l", alias="t")
    value: str = Field(alias="v")
    datatype: str | None = Field(None, alias="dt")
    language: str | None = Field(None, alias="ln")

    def __str__(self) -> str:
        text = '"' + self.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if self.language:
            return f"{text}@{self.language}"
        if self.datatype:
            return f"{text}^^<{self.datatype}>"
        return text


class TripleTerm(Message):
    """A quoted triple used as a term, printed in the spec's `<< s p o >>` form."""

    kind: Literal["t"] = Field("t", alias="t")
    triple: "Triple" = Field(alias="tr")

    def __str__(self) -> str:
        t = self.triple
        return f"<< {t.s} {t.p} {t.o} >>"


Term = Annotated[Union[IriTerm, BlankTerm, LiteralTerm, TripleTerm], Field(discriminator="kind")]


class Triple(Message):
    """A statement, optionally placed in a named graph `g` (None = the default graph)."""

    schema_name: ClassVar[str] = "triple"

    s: Term
    p: IriTerm
    o: Term
    g: str | None = None

    def __str__(self) -> str:
        graph = f" <{self.g}>" if self.g else ""
        return f"{self.s} {self.p} {self.o}{graph} ."


TripleTerm.model_rebuild()
Triple.model_rebuild()


# -- decoding lists of triples fast ------------------------------------------------------------
# A pattern lookup's answer or an explain event carries hundreds or thousands of triples, and
# pydantic's validation of the discriminated term union costs ~28 µs a triple (a 3,000-triple answer:
# 80 ms, where parsing its JSON takes 12). The well-formed wire shapes are checked and built here
# instead; anything else (an error to report, an unusual shape) goes to pydantic, which decides.

class _Unusual(Exception):
    """Not a shape the fast path knows: let pydantic validate it."""


def _text(data: dict, key: str, *, empty: bool = False) -> str:
    value = data.get(key)
    if type(value) is not str or not (value or empty):
        raise _Unusual
    return value


def _optional_text(data: dict, key: str) -> str | None:
    value = data.get(key)
    if value is not None and type(value) is not str:
        raise _Unusual
    return value


def _fast_term(data: object) -> Term:
    if type(data) is not dict:
        raise _Unusual
    kind = data.get("t")
    if kind == "i":
        return cached_iri(_text(data, "i"))
    if kind == "l":
        return prevalidated(LiteralTerm, {"kind": "l", "value": _text(data, "v", empty=True),
                                          "datatype": _optional_text(data, "dt"),
                                          "language": _optional_text(data, "ln")})
    if kind == "b":
        return prevalidated(BlankTerm, {"kind": "b", "id": _text(data, "d")})
    if kind == "t":
        return prevalidated(TripleTerm, {"kind": "t", "triple": _fast_triple(data.get("tr"))})
    raise _Unusual


def _fast_triple(data: object) -> Triple:
    if isinstance(data, Triple):
        return data
    if type(data) is not dict:
        raise _Unusual
    predicate = _fast_term(data.get("p"))
    if not isinstance(predicate, IriTerm):
        raise _Unusual
    return prevalidated(Triple, {"s": _fast_term(data.get("s")), "p": predicate, "o": _fast_term(data.get("o")),
                                 "g": _optional_text(data, "g")})


@lru_cache(maxsize=65_536)
def cached_iri(value: str) -> IriTerm:
    """IRIs repeat (predicates, hub entities); terms are frozen, so one object can serve them all."""
    return prevalidated(IriTerm, {"kind": "i", "iri": value})


def _triples(value: object, full: ValidatorFunctionWrapHandler) -> list[Triple]:
    if type(value) is list:
        try:
            return [_fast_triple(item) for item in value]
        except _Unusual:
            pass
    return full(value)


# A list of triples that decodes the usual wire shapes without pydantic's per-triple cost.
TripleList = Annotated[list[Triple], WrapValidator(_triples)]


def iri(value: str) -> IriTerm:
    """Shorthand for an IRI term."""
    return IriTerm(iri=value)


def node_iris(triples: Iterable[Triple]) -> list[str]:
    """The IRIs whose neighbourhood these triples are part of (subjects and objects), in order, once
    each: both what a graph update announces and what a cached search result is filed under."""
    return list(dict.fromkeys(term.iri for t in triples for term in (t.s, t.o) if isinstance(term, IriTerm)))


def literal(value: object, datatype: str | None = None, language: str | None = None) -> LiteralTerm:
    """Shorthand for a literal; non-strings are stringified, as upstream does."""
    return LiteralTerm(value=str(value), datatype=datatype, language=language)


def quoted(s: IriTerm | BlankTerm | LiteralTerm | TripleTerm, p: IriTerm,
           o: IriTerm | BlankTerm | LiteralTerm | TripleTerm) -> TripleTerm:
    """A quoted triple term `<< s p o >>`."""
    return TripleTerm(triple=Triple(s=s, p=p, o=o))


def fact_key(triple: Triple) -> str:
    """A fact's identity regardless of graph: `<s> <p> <o>` (the key of `Triples.confidence`)."""
    return f"{triple.s} {triple.p} {triple.o}"
