"""The agent's explanations (the agent-explainability spec): Question → Analysis per think/act/observe
cycle → Conclusion, each `prov:wasDerivedFrom` the one before, all in `urn:graph:retrieval`.

Beyond the spec, an Analysis whose tool wrote its own trace (GraphRAG, Document RAG) points at that
trace's Question with `tg:subTrace`; the sub-Question already derives from the Analysis. Each step
also has upstream 2.x's Thought and Observation entities (`reflection_triples`), which its client
reads. URIs are upstream's (`urn:trustgraph:agent:{sid}`, `…/i{n}`, `…/final`): its client tells
traces apart by them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tracegraph.base.provenance import query as prov
from tracegraph.base.provenance.query import (
    Usage, entity_triples, excerpt, known_values, retrieval_triple, usage_triples,
)
from tracegraph.base.provenance.vocab import RDF, RDFS, TG
from tracegraph.schemas.rdf import Triple, iri, literal


def question_uri(sid: str) -> str:
    return f"urn:trustgraph:agent:{sid}"


def iteration_uri(sid: str, step: int) -> str:
    """The Analysis of step `step` (1-based)."""
    return f"urn:trustgraph:agent:{sid}/i{step}"


def thought_uri(step_uri: str) -> str:
    """A step's Thought entity, and the librarian id of its text (one IRI, as upstream has it)."""
    return f"{step_uri}/thought"


def observation_uri(step_uri: str) -> str:
    """A step's Observation entity, and the librarian id of its text."""
    return f"{step_uri}/observation"


def conclusion_uri(sid: str) -> str:
    return f"urn:trustgraph:agent:{sid}/final"


def answer_document_uri(sid: str) -> str:
    """Where the librarian keeps the answer text."""
    return f"urn:trustgraph:agent:{sid}/answer"


@dataclass(frozen=True, slots=True)
class Analysis:
    """What one think / act / observe cycle did. `action` is None when the model's reply named none;
    `error` is set when the step failed (unknown tool, unreadable reply, a tool that raised)."""

    step: int
    thought: str
    action: str | None
    arguments: str | None  # JSON object text, as arguments_text writes it
    observation: str
    error: str | None = None
    sub_trace: str | None = None
    usage: Usage | None = None
    llm_ms: int | None = None
    tool_ms: int | None = None
    note: str | None = None  # how the step was decided, when not by the LLM


def question_triples(question: str, query: str, started: str, parent: str | None = None) -> list[Triple]:
    return prov.question_triples(question, query, started, parent, kind=TG.AgentQuestion, label="Agent Question")


def arguments_text(arguments: Mapping[str, str], cut: Callable[[str], str] = excerpt) -> str:
    """A tool call's arguments as the trace keeps them (tg:arguments): a JSON object whose long values
    are cut to an excerpt. A retrieval tool is often asked the question itself, and its own trace
    (tg:subTrace) keeps what it was asked in full, as its Question's tg:query.

    >>> arguments_text({"question": "x" * 300, "n": "2"})[:20], len(arguments_text({"question": "x" * 300}))
    ('{"question": "xxxxxx', 216)
    """
    return json.dumps({k: cut(v) if isinstance(v, str) else v for k, v in arguments.items()},
                      ensure_ascii=False)


def analysis_triples(uri: str, parent: str, step: Analysis) -> list[Triple]:
    """An Analysis (+ tg:ToolUse when a tool was named, + tg:Error when the step failed)."""
    out = entity_triples(uri, TG.Analysis, f"Analysis: {step.action or 'no valid action'}", parent)
    out += [retrieval_triple(uri, TG.stepNumber, literal(step.step)), retrieval_triple(uri, TG.thought, literal(step.thought))]
    if step.action:
        out += [retrieval_triple(uri, RDF.type, TG.ToolUse), retrieval_triple(uri, TG.action, literal(step.action))]
    if step.arguments is not None:
        out.append(retrieval_triple(uri, TG.arguments, literal(step.arguments)))
    out.append(retrieval_triple(uri, TG.observation, literal(step.observation)))
    if step.error:
        out += [retrieval_triple(uri, RDF.type, TG.Error), retrieval_triple(uri, TG.toolError, literal(step.error))]
    if step.sub_trace:
        out.append(retrieval_triple(uri, TG.subTrace, iri(step.sub_trace)))
    out += known_values(uri, {TG.llmDurationMs: step.llm_ms, TG.toolDurationMs: step.tool_ms, RDFS.comment: step.note})
    return out + usage_triples(uri, step.usage)


def reflection_triples(step_uri: str, thought_saved: bool, observation_saved: bool) -> list[Triple]:
    """Upstream 2.x's entities for a step's thought and observation, each derived from the step's
    Analysis and pointing (tg:document) at its text in the librarian when it was stored there; the
    Analysis keeps the texts themselves too. The Observation is not a tg:Reflection (the ontology's
    superclass): upstream's client takes a Reflection for a thought and does not show it."""
    thought, observation = thought_uri(step_uri), observation_uri(step_uri)
    out = [*entity_triples(thought, TG.Thought, "Thought", step_uri),
           retrieval_triple(thought, RDF.type, TG.Reflection),
           *entity_triples(observation, TG.Observation, "Observation", step_uri)]
    for uri, saved in ((thought, thought_saved), (observation, observation_saved)):
        if saved:
            out.append(retrieval_triple(uri, TG.document, iri(uri)))
    return out


def conclusion_triples(uri: str, parent: str, answer: str, document: str | None, reason: str,
                       usage: Usage | None = None, notes: tuple[str, ...] = ()) -> list[Triple]:
    """The Conclusion (+ tg:Answer): the answer text, where it is stored, and why the loop ended."""
    out = [*entity_triples(uri, TG.Conclusion, "Conclusion", parent), retrieval_triple(uri, RDF.type, TG.Answer),
           retrieval_triple(uri, TG.answer, literal(answer)), retrieval_triple(uri, TG.terminationReason, literal(reason)),
           *[retrieval_triple(uri, RDFS.comment, literal(note)) for note in notes if note], *usage_triples(uri, usage)]
    if document:
        out.append(retrieval_triple(uri, TG.document, iri(document)))
    return out
