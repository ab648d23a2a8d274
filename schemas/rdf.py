"""RDF terms and triples on the wire, in upstream TrustGraph's compact JSON (`t`, `i`, `v`, `dt`, `ln`, `tr`).

A quoted triple (RDF-star / RDF 1.2 triple term) is a term of its own, so a triple's
subject or object may itself be a triple.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, ClassVar, Literal, Union

from pydantic import Field

from tracegraph.schemas.base import Message


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
