"""Query-time explanations (the specs' GraphRAG chain): Question → Grounding → Exploration → Focus →
Synthesis, each an entity `prov:wasDerivedFrom` the one before, all in `urn:graph:retrieval`.

URIs follow the specs exactly (`urn:trustgraph:question:{sid}`, `urn:trustgraph:prov:grounding:{sid}`…):
the upstream client detects a trace's type from them. Literals are plain strings, as upstream writes them.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from tracegraph.base.provenance.vocab import PROV, RDF, RDFS, TG
from tracegraph.base.stores.protocol import RETRIEVAL_GRAPH
from tracegraph.schemas.rdf import IriTerm, Term, Triple, TripleTerm, iri, literal


def question_uri(sid: str) -> str:
    return f"urn:trustgraph:question:{sid}"


def step_uri(step: str, sid: str) -> str:
    """grounding / exploration / focus / synthesis."""
    return f"urn:trustgraph:prov:{step}:{sid}"


def edge_selection_uri(sid: str, index: int) -> str:
    return f"urn:trustgraph:prov:edge:{sid}:{index}"


def answer_document_uri(sid: str) -> str:
    """Where the librarian keeps the answer text (upstream's id for GraphRAG answers)."""
    return f"urn:trustgraph:synthesis:{sid}"


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class Usage:
    """LLM token use of one step; every part may be unknown (None), and then is not written."""

    in_token: int | None = None
    out_token: int | None = None
    model: str | None = None

    def __add__(self, other: "Usage") -> "Usage":
        def add(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)
        return Usage(add(self.in_token, other.in_token), add(self.out_token, other.out_token),
                     other.model or self.model)


@dataclass(frozen=True, slots=True)
class SelectedEdge:
    """One edge kept in Focus: its original terms (never the labels the LLM saw) and why."""

    s: Term
    p: IriTerm
    o: Term
    reasoning: str
    score: float | None = None
    concept: str | None = None


def _t(s: str, p: IriTerm, o: Term) -> Triple:
    return Triple(s=iri(s), p=p, o=o, g=RETRIEVAL_GRAPH)


def _entity(uri: str, kind: IriTerm, label: str, parent: str | None) -> list[Triple]:
    out = [_t(uri, RDF.type, PROV.Entity), _t(uri, RDF.type, kind), _t(uri, RDFS.label, literal(label))]
    if parent:
        out.append(_t(uri, PROV.wasDerivedFrom, iri(parent)))
    return out


def _usage(uri: str, usage: Usage | None) -> list[Triple]:
    if usage is None:
        return []
    out = []
    if usage.in_token is not None:
        out.append(_t(uri, TG.inToken, literal(usage.in_token)))
    if usage.out_token is not None:
        out.append(_t(uri, TG.outToken, literal(usage.out_token)))
    if usage.model:
        out.append(_t(uri, TG.llmModel, literal(usage.model)))
    return out


def question_triples(question: str, query: str, started: str, parent: str | None = None) -> list[Triple]:
    out = [
        _t(question, RDF.type, PROV.Activity), _t(question, RDF.type, TG.Question),
        _t(question, RDF.type, TG.GraphRagQuestion), _t(question, RDFS.label, literal("GraphRAG Question")),
        _t(question, PROV.startedAtTime, literal(started)), _t(question, TG.query, literal(query)),
    ]
    if parent:
        out.append(_t(question, PROV.wasDerivedFrom, iri(parent)))
    return out


def grounding_triples(grounding: str, question: str, concepts: Sequence[str], usage: Usage | None,
                      method: str) -> list[Triple]:
    """The concepts found in the question; `method` says how (LLM or offline label matching)."""
    return [*_entity(grounding, TG.Grounding, "Grounding", question),
            *[_t(grounding, TG.concept, literal(c)) for c in concepts],
            _t(grounding, RDFS.comment, literal(method)), *_usage(grounding, usage)]


def exploration_triples(exploration: str, grounding: str, edge_count: int, seeds: Sequence[str]) -> list[Triple]:
    return [*_entity(exploration, TG.Exploration, "Exploration", grounding),
            _t(exploration, TG.edgeCount, literal(edge_count)),
            *[_t(exploration, TG.entity, iri(e)) for e in seeds]]


def focus_triples(focus: str, exploration: str, sid: str, edges: Sequence[SelectedEdge], usage: Usage | None,
                  method: str, notes: Sequence[str] = ()) -> list[Triple]:
    """Each selected edge as a `tg:EdgeSelection` quoting the edge `<<( s p o )>>` with its reason."""
    out = [*_entity(focus, TG.Focus, "Focus", exploration), _t(focus, RDFS.comment, literal(method)),
           *[_t(focus, RDFS.comment, literal(note)) for note in notes], *_usage(focus, usage)]
    for index, edge in enumerate(edges):
        selection = edge_selection_uri(sid, index)
        out += [_t(focus, TG.selectedEdge, iri(selection)), _t(selection, RDF.type, TG.EdgeSelection),
                _t(selection, TG.edge, TripleTerm(triple=Triple(s=edge.s, p=edge.p, o=edge.o)))]
        if edge.reasoning:
            out.append(_t(selection, TG.reasoning, literal(edge.reasoning)))
        if edge.score is not None:
            out.append(_t(selection, TG.score, literal(f"{edge.score:.4f}")))
        if edge.concept:
            out.append(_t(selection, TG.concept, literal(edge.concept)))
    return out


def synthesis_triples(synthesis: str, focus: str, document: str | None, usage: Usage | None,
                      method: str) -> list[Triple]:
    out = [*_entity(synthesis, TG.Synthesis, "Synthesis", focus), _t(synthesis, RDF.type, TG.Answer),
           _t(synthesis, RDFS.comment, literal(method)), *_usage(synthesis, usage)]
    if document:
        out.append(_t(synthesis, TG.document, iri(document)))
    return out


def failure_triples(question: str, message: str) -> list[Triple]:
    """Closes a Question whose session failed after it was announced."""
    return [_t(question, RDF.type, TG.Error), _t(question, RDFS.comment, literal(f"failed: {message}"))]
