"""The agent's offline strategy, for when no LLM is configured: a fixed plan, stated in each step's
thought. Ask the knowledge graph the question as it was put. When the graph's answer is weak, ask the
documents too. An answer is weak when it has no evidence, when the tool flagged it as low-confidence,
or when it does not answer what was asked: for a question about a relation of a named entity ("What
does Billing depend on?"), its first statement must name that entity and state that relation; for any
other question it must share one of the question's content words. Then answer from what was found,
labelling each source when more than one is quoted. No I/O here: the loop runs the tools and traces the
steps (`assess` parses with spaCy: the loop runs it off the event loop).

    >>> asked = [assess("What is the capital of Mongolia?", "knowledge-query",
    ...                 ToolResult("Offline answer (no LLM configured): Helios Grid depends on Corvid Analytics."),
    ...                 None)]
    >>> asked[0].weak
    "it does not state what the question asks: 'capital' of Mongolia"
    >>> thought(ToolDefinition(name="docs", type="document-query", description="d"), asked)  # doctest: +ELLIPSIS
    "offline (no LLM configured): the graph's answer was weak: it does not state what ...; so asking the documents..."
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tracegraph.base.retrieval.distinct_lines import distinct
from tracegraph.base.retrieval.asked_relation import AskedRelation, asked_relation
from tracegraph.base.retrieval.names import question_names
from tracegraph.base.retrieval.offline_answer import answers_relation
from tracegraph.base.retrieval.relations import content_stems
from tracegraph.flow.agent.tool_config import ToolDefinition
from tracegraph.flow.agent.tools import ToolResult
from tracegraph.flow.graph_rag.pipeline import OFFLINE_NOTE

PLAN = {"knowledge-query": "the knowledge graph", "document-query": "the documents"}  # asked in this order
_WHOSE = {"knowledge-query": "the graph's", "document-query": "the documents'"}
ANSWER_PREFIX = "Offline answer (no LLM configured)"

_HEADER = re.compile(r"^\s*Offline answer\b.*:\s*$")  # a RAG tool's offline header: "…, quoting the …:"
_LABELLED = re.compile(r"^\s*Offline answer \([^)]*\):\s+(?=\S)")  # the label before an offline statement
# How an answer says it has nothing (GraphRAG's offline "holds no facts related", an LLM's "do not contain").
_NOTHING = re.compile(r"\b(?:holds? no|no (?:related |relevant )?(?:facts|information|documents?|passages)\b|"
                      r"(?:do|does|did) not (?:contain|mention|say)|nothing (?:related|relevant))", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]{3,}")


@dataclass(frozen=True, slots=True)
class Asked:
    """One retrieval tool's answer, as the offline strategy judged it."""

    kind: str  # the tool's type, a key of PLAN
    text: str
    error: str | None = None  # the tool failed
    weak: str | None = None  # why the answer is weak; None when it is strong, or when the tool failed
    evidence: bool = False  # it rests on selected facts or passages
    relevant: bool = False  # it shares content words with the question

    @property
    def strong(self) -> bool:
        return self.error is None and self.weak is None

    @property
    def usable(self) -> bool:
        """Something to quote: a text resting on evidence."""
        return self.error is None and self.evidence and bool(self.text)


def assess(question: str, kind: str, result: ToolResult, error: str | None) -> Asked:
    """Judge a retrieval tool's answer to the question."""
    text = result.text.strip()
    if error:
        return Asked(kind, text, error=error)
    if not text:
        return Asked(kind, text, weak="it has no evidence: the tool returned no text")
    if "\n" not in text and _NOTHING.search(text):  # a one-line answer saying it found nothing
        return Asked(kind, text, weak=f"it has no evidence: it says “{text}”")
    if not result.found:
        return Asked(kind, text, weak="it has no evidence: the tool selected no facts or passages to answer from")
    reasons = []
    if result.low_confidence:
        reasons.append(f"the tool reported low confidence ({result.low_confidence})")
    relation = asked_relation(question, question_names(question))
    if relation is not None:
        relevant = answers_relation(relation, text)
        if not relevant:
            reasons.append(f"it does not state what the question asks: {_asked(relation)}")
    else:
        wanted = content_stems(question)
        relevant = not wanted or bool(wanted & content_stems(_body(text)))
        if not relevant:
            reasons.append(f"it shares none of the question's content words ({_some_words(question)})")
    return Asked(kind, text, weak="; ".join(reasons) or None, evidence=True, relevant=relevant)


def _asked(relation: AskedRelation) -> str:
    """The asked relation as a reason says it: "'depend on' for Billing", "'capital' of France"."""
    joiner = "of" if relation.entity_role == "either" else "for"
    return f"'{relation.phrase}' {joiner} {relation.mention}"


def _some_words(question: str, limit: int = 8) -> str:
    """The question's first `limit` content words, for a reason the trace repeats in later steps
    (the next thought, the Conclusion): never a copy of a long question.

    >>> _some_words("Which supplier forecasts the load of the grid in winter and in summer?", 4)
    'supplier, forecasts, load, grid, …'
    """
    words: dict[str, None] = {}
    for match in _WORD.finditer(question):  # lazily: stops at the first word past the limit
        if content_stems(match.group()):
            words.setdefault(match.group())
            if len(words) > limit:
                break
    return ", ".join([*list(words)[:limit], *(["…"] if len(words) > limit else [])])


def next_tool(tools: Mapping[str, ToolDefinition], asked: Iterable[Asked]) -> ToolDefinition | None:
    """The first retrieval tool of the plan not yet asked; None when none is left."""
    done = {a.kind for a in asked}
    for kind in PLAN:
        tool = next((t for t in tools.values() if t.type == kind), None)
        if tool is not None and kind not in done:
            return tool
    return None


def thought(tool: ToolDefinition, asked: Sequence[Asked]) -> str:
    """Why the plan asks `tool` now, labelled as offline."""
    if not asked:
        why = "there is no model to plan with, so"
    elif asked[-1].error:
        why = f"{PLAN[asked[-1].kind]} could not answer ({asked[-1].error}), so"
    else:
        why = f"{_WHOSE[asked[-1].kind]} answer was weak: {asked[-1].weak}; so"
    return f"{OFFLINE_NOTE}: {why} asking {PLAN[tool.type]} (tool {tool.name}) the question as it was put."


def conclusion(asked: Sequence[Asked]) -> tuple[str, str, tuple[str, ...]]:
    """(answer, termination reason, notes for the Conclusion). A strong answer leads, with any earlier
    answer quoted beside it whose only weakness was the tool's low confidence. With no strong answer,
    the closest are quoted and said to be weak; with nothing to quote, that is said plainly."""
    notes = (OFFLINE_NOTE, *(f"{_WHOSE[a.kind]} answer was weak: {a.weak}" for a in asked if a.weak))
    usable = [a for a in asked if a.usable]
    strong = [a for a in usable if a.strong]
    if strong:
        parts = [strong[-1], *(a for a in usable if a is not strong[-1] and a.relevant)]
    else:
        parts = [a for a in usable if a.relevant] or usable[-1:]
    if not parts:
        return _nothing_found(asked), "nothing-found", notes
    lines = distinct([(i, line) for i, a in enumerate(parts) for line in _body(a.text).splitlines()])
    quoted = [(a, "\n".join(line for j, line in lines if j == i).strip()) for i, a in enumerate(parts)]
    quoted = [(a, kept) for a, kept in quoted if kept]  # left out: a part whose every line another says in full
    if len(quoted) == 1 and quoted[0][0].strong:
        return _tidy(quoted[0][0].text), "final-answer", notes
    if strong:
        head = f"{ANSWER_PREFIX}, quoting {' and '.join(PLAN[a.kind] for a, _ in quoted)}:"
    else:
        names = [PLAN[a.kind] for a in asked]
        gave = f"{names[0]} gave no" if len(names) == 1 else f"neither {' nor '.join(names)} gave a"
        head = f"{ANSWER_PREFIX}: {gave} strong answer, so this quotes the closest found:"
    sections = [f"From {PLAN[a.kind]}{f' — weak: {a.weak}' if a.weak else ''}:\n{kept}" for a, kept in quoted]
    return "\n".join([head, *sections]), "final-answer", notes


def _nothing_found(asked: Sequence[Asked]) -> str:
    if not asked:
        return (f"{ANSWER_PREFIX}: no knowledge-query or document-query tool is configured, so nothing could be "
                "looked up.")
    return f"{ANSWER_PREFIX}: nothing related to the question was found in {' or '.join(PLAN[a.kind] for a in asked)}."


def _body(text: str) -> str:
    """An answer without its offline header, which names the tool, not what it found: a header line
    ("…, quoting the …:"), or the label before a statement ("Offline answer (…): Billing depends on Ledger.")."""
    lines = text.strip().splitlines()
    if lines and len(lines) > 1 and _HEADER.match(lines[0]):
        return "\n".join(lines[1:]).strip()
    if lines and _LABELLED.match(lines[0]):
        return "\n".join([_LABELLED.sub("", lines[0]), *lines[1:]]).strip()
    return "\n".join(lines).strip()


def _tidy(text: str) -> str:
    """An answer with the lines that repeat another line left out; its first line (a header, or the
    statement its supporting facts repeat) kept as it is."""
    lines = text.strip().splitlines()
    head = lines[:1] if len(lines) > 1 and (_HEADER.match(lines[0]) or _LABELLED.match(lines[0])) else []
    return "\n".join([*head, *(line for _, line in distinct([(0, x) for x in lines[len(head):]]))])
