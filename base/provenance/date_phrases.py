"""The trace of a question's dates in words: each tg:DatePhrase of the Question with what it read, the
window and as-of it resolved to, how, and whether it set the answer's tg:asOf (and if not, why)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from tracegraph.base.provenance.query import retrieval_triple
from tracegraph.base.provenance.vocab import RDF, RDFS, TG, XSD
from tracegraph.base.retrieval.date_phrases import DatePhrase, end_of_day
from tracegraph.schemas.dates import canonical
from tracegraph.schemas.rdf import LiteralTerm, Triple, iri, literal


def _instant(value: str) -> LiteralTerm:
    return literal(value, XSD.dateTime.iri)


def date_phrase_triples(question: str, phrases: Sequence[DatePhrase], applied: DatePhrase | None,
                        mint: Callable[[int], str], why_not: str = "") -> list[Triple]:
    """`mint(i)` names the i-th phrase; `applied` is the one whose date the answer stands at, and
    `why_not` says why none is (the request's own as-of, an answer that cannot be given as of a date)."""
    out: list[Triple] = []
    for index, phrase in enumerate(phrases):
        node = mint(index)
        out += [retrieval_triple(question, TG.datePhrase, iri(node)), retrieval_triple(node, RDF.type, TG.DatePhrase),
                retrieval_triple(node, TG.phraseText, literal(phrase.text)),
                retrieval_triple(node, TG.resolvedBy, literal(phrase.how)),
                retrieval_triple(node, TG.appliedAsOf, literal(str(phrase is applied).lower(), XSD.boolean.iri))]
        if phrase.start is not None:
            start = canonical(datetime(phrase.start.year, phrase.start.month, phrase.start.day))
            out.append(retrieval_triple(node, TG.windowStart, _instant(start)))
        if phrase.end is not None:
            out.append(retrieval_triple(node, TG.windowEnd, _instant(end_of_day(phrase.end))))
        if phrase.as_of:
            out.append(retrieval_triple(node, TG.resolvedAsOf, _instant(phrase.as_of)))
        if phrase.record:
            out.append(retrieval_triple(node, TG.anchorRecord, iri(phrase.record)))
        note = _why_not_applied(phrase, why_not) if phrase is not applied else ""
        if note:
            out.append(retrieval_triple(node, RDFS.comment, literal(note)))
    return out


def _why_not_applied(phrase: DatePhrase, why_not: str) -> str:
    if not phrase.resolved:
        return "not resolved, so the answer does not stand at its date"
    if phrase.as_of is None:
        return "its window reaches today, so the answer stands as of now"
    return why_not or "an earlier phrase of the question gave the answer's date"
