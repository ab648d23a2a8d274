"""Query-time explanations (the specs' GraphRAG chain): Question → Grounding → Exploration → Focus →
Synthesis, each an entity `prov:wasDerivedFrom` the one before, all in `urn:graph:retrieval`.

The question's text is stored once, as the Question's `tg:query`. A later step that works from the
whole question refers to the Question (its derivation chain, or `prov:wasGeneratedBy`) instead of
copying the text; what a step must quote from user input is cut to an `excerpt`.

URIs follow the specs exactly (`urn:trustgraph:question:{sid}`, `urn:trustgraph:prov:grounding:{sid}`…):
the upstream client detects a trace's type from them. Literals are plain strings, as upstream writes them.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from tracegraph.base.provenance.vocab import PROV, RDF, RDFS, TG, XSD
from tracegraph.base.stores.protocol import RETRIEVAL_GRAPH
from tracegraph.schemas.rdf import IriTerm, Term, Triple, TripleTerm, iri, literal


def question_uri(sid: str) -> str:
    return f"urn:trustgraph:question:{sid}"


def step_uri(step: str, sid: str) -> str:
    """grounding / exploration / focus / synthesis."""
    return f"urn:trustgraph:prov:{step}:{sid}"


def item_uri(kind: str, sid: str, index: int) -> str:
    """The `index`-th node of a list a step records (selected edges, seeds, report scores…)."""
    return f"urn:trustgraph:prov:{kind}:{sid}:{index}"


def edge_selection_uri(sid: str, index: int) -> str:
    return item_uri("edge", sid, index)


def seed_uri(sid: str, index: int) -> str:
    """A personalised PageRank restart point of an Exploration."""
    return item_uri("seed", sid, index)


def answer_document_uri(sid: str) -> str:
    """Where the librarian keeps the answer text (upstream's id for GraphRAG answers)."""
    return f"urn:trustgraph:synthesis:{sid}"


EXCERPT_LIMIT = 200  # characters of user text a label, comment or argument in a trace may quote
MESSAGE_LIMIT = 500  # characters of an error message a failed Question keeps


def excerpt(text: str, limit: int = EXCERPT_LIMIT) -> str:
    """`text` cut to `limit` characters, an ellipsis marking the cut; shorter text unchanged.

    >>> excerpt("What does Helios Grid depend on?", 9)
    'What doe…'
    >>> excerpt("short")
    'short'
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
    concept: str | None = None  # the concept it matched best; None when that is the question itself
    ppr: float | None = None  # the PPR score of the passage the edge came from
    staleness: float | None = None  # the factor its score was multiplied by for age and supersession
    superseded: tuple[str, ...] = ()  # records of older values the edge's fact superseded


def retrieval_triple(s: str, p: IriTerm, o: Term) -> Triple:
    """One statement of a query-time trace (all of them live in `urn:graph:retrieval`)."""
    return Triple(s=iri(s), p=p, o=o, g=RETRIEVAL_GRAPH)


def entity_triples(uri: str, kind: IriTerm, label: str, parent: str | None) -> list[Triple]:
    """A trace step: a prov:Entity of `kind` with its label, derived from `parent` when given."""
    out = [retrieval_triple(uri, RDF.type, PROV.Entity), retrieval_triple(uri, RDF.type, kind), retrieval_triple(uri, RDFS.label, literal(label))]
    if parent:
        out.append(retrieval_triple(uri, PROV.wasDerivedFrom, iri(parent)))
    return out


def known_values(uri: str, values: dict[IriTerm, object]) -> list[Triple]:
    """A literal triple per value that is known: None and "" are left out, never written as empty or zero."""
    return [retrieval_triple(uri, p, literal(v)) for p, v in values.items() if v is not None and v != ""]


def comment_triples(uri: str, notes: Sequence[str]) -> list[Triple]:
    """What a step says of itself in prose, one rdfs:comment per note."""
    return [retrieval_triple(uri, RDFS.comment, literal(note)) for note in notes]


def usage_triples(uri: str, usage: Usage | None) -> list[Triple]:
    """Token counts and model of a step's LLM calls; unknown counts are left out, not written as zero."""
    if usage is None:
        return []
    return known_values(uri, {TG.inToken: usage.in_token, TG.outToken: usage.out_token, TG.llmModel: usage.model})


def question_triples(question: str, query: str, started: str, parent: str | None = None,
                     kind: IriTerm = TG.GraphRagQuestion, label: str = "GraphRAG Question") -> list[Triple]:
    """A Question: the activity a trace starts from, typed by the service that answered it
    (tg:GraphRagQuestion, tg:DocRagQuestion or tg:AgentQuestion), derived from `parent` when an agent asked."""
    out = [
        retrieval_triple(question, RDF.type, PROV.Activity), retrieval_triple(question, RDF.type, TG.Question),
        retrieval_triple(question, RDF.type, kind), retrieval_triple(question, RDFS.label, literal(label)),
        retrieval_triple(question, PROV.startedAtTime, literal(started)), retrieval_triple(question, TG.query, literal(query)),
    ]
    if parent:
        out.append(retrieval_triple(question, PROV.wasDerivedFrom, iri(parent)))
    return out


def time_triples(question: str, as_of: str | None, half_life_days: float | None) -> list[Triple]:
    """When a Question's answer stands: `as_of`, the valid time the graph was read at (None: now), and
    the half-life its evidence was weighed with (None: it was not weighed, having no history)."""
    out = [retrieval_triple(question, TG.asOf, literal(as_of, XSD.dateTime.iri))] if as_of else []
    if half_life_days is not None:
        out.append(retrieval_triple(question, TG.halfLifeDays, literal(f"{half_life_days:g}")))
    return out


QUESTION_AS_CONCEPT = ("the question itself is a concept too, searched whole: the tg:query of the Question this "
                       "Grounding derives from (not repeated here)")


def grounding_triples(grounding: str, question: str, concepts: Sequence[str], usage: Usage | None,
                      method: str, *, query: str | None = None) -> list[Triple]:
    """The concepts found in the question; `method` says how (LLM or offline label matching).
    A concept equal to the question's text `query` (the question searched whole) is not written
    again: a comment says so, and the Question this Grounding derives from holds the text. Any other
    concept is a name or a phrase; one that is not (an LLM's line echoing the question) is cut."""
    named = [c for c in concepts if c != query]
    return [*entity_triples(grounding, TG.Grounding, "Grounding", question),
            *[retrieval_triple(grounding, TG.concept, literal(excerpt(c))) for c in named],
            retrieval_triple(grounding, RDFS.comment, literal(method)),
            *([retrieval_triple(grounding, RDFS.comment, literal(QUESTION_AS_CONCEPT))] if len(named) < len(concepts)
              else []),
            *usage_triples(grounding, usage)]


def exploration_triples(exploration: str, grounding: str, edge_count: int, seeds: Sequence[str]) -> list[Triple]:
    return [*entity_triples(exploration, TG.Exploration, "Exploration", grounding),
            retrieval_triple(exploration, TG.edgeCount, literal(edge_count)),
            *[retrieval_triple(exploration, TG.entity, iri(e)) for e in seeds]]


def focus_triples(focus: str, exploration: str, sid: str, edges: Sequence[SelectedEdge], usage: Usage | None,
                  method: str, notes: Sequence[str] = ()) -> list[Triple]:
    """Each selected edge as a `tg:EdgeSelection` quoting the edge `<<( s p o )>>` with its reason."""
    out = [*entity_triples(focus, TG.Focus, "Focus", exploration), retrieval_triple(focus, RDFS.comment, literal(method)),
           *comment_triples(focus, notes), *usage_triples(focus, usage)]
    for index, edge in enumerate(edges):
        selection = edge_selection_uri(sid, index)
        out += [retrieval_triple(focus, TG.selectedEdge, iri(selection)), retrieval_triple(selection, RDF.type, TG.EdgeSelection),
                retrieval_triple(selection, TG.edge, TripleTerm(triple=Triple(s=edge.s, p=edge.p, o=edge.o)))]
        if edge.reasoning:
            out.append(retrieval_triple(selection, TG.reasoning, literal(edge.reasoning)))
        if edge.score is not None:
            out.append(retrieval_triple(selection, TG.score, literal(f"{edge.score:.4f}")))
        if edge.concept:
            out.append(retrieval_triple(selection, TG.concept, literal(excerpt(edge.concept))))
        if edge.ppr is not None:
            out.append(retrieval_triple(selection, TG.pprScore, literal(f"{edge.ppr:.4f}")))
        if edge.staleness is not None:
            out.append(retrieval_triple(selection, TG.stalenessWeight, literal(f"{edge.staleness:.4f}")))
        out += [retrieval_triple(selection, TG.supersededValue, iri(record)) for record in edge.superseded]
    return out


def synthesis_triples(synthesis: str, focus: str, document: str | None, usage: Usage | None,
                      method: str) -> list[Triple]:
    out = [*entity_triples(synthesis, TG.Synthesis, "Synthesis", focus), retrieval_triple(synthesis, RDF.type, TG.Answer),
           retrieval_triple(synthesis, RDFS.comment, literal(method)), *usage_triples(synthesis, usage)]
    if document:
        out.append(retrieval_triple(synthesis, TG.document, iri(document)))
    return out


def nothing_found_triples(step: str, what: str) -> list[Triple]:
    """Marks a retrieval step that kept nothing to answer from (tg:NothingFound, and a comment saying
    what was not found), so an empty result reads as one, not as a step that lost its selections."""
    return [retrieval_triple(step, RDF.type, TG.NothingFound),
            retrieval_triple(step, RDFS.comment, literal(f"nothing found: {what}"))]


def failure_triples(question: str, message: str) -> list[Triple]:
    """Closes a Question whose session failed after it was announced; a long message is cut (it may
    quote a prompt, and so the question)."""
    return [retrieval_triple(question, RDF.type, TG.Error),
            retrieval_triple(question, RDFS.comment, literal(f"failed: {excerpt(message, MESSAGE_LIMIT)}"))]
