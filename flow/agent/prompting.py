"""The ReAct text protocol: the prompts that list the tools and the steps so far, and a forgiving reader
of the model's reply (`Thought / Action / Action Input` or `Thought / Final Answer`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tracegraph.base.provenance.agent import arguments_text
from tracegraph.flow.agent.tool_config import ToolDefinition
from tracegraph.schemas.agent import AgentStep

MAX_OBSERVATION = 4000  # characters of one observation, or of one argument, shown back to the model

_LABEL = re.compile(r"^[ \t>*_#-]*(thought|action input|action|final answer|observation)[ \t*_]*:[ \t*_]*",
                    re.IGNORECASE | re.MULTILINE)
_TOOL_NAME = re.compile(r"[`'\"\[(*]*([A-Za-z0-9][A-Za-z0-9_.-]*)")
_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ToolCall:
    thought: str
    tool: str
    arguments: dict[str, str]


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    thought: str
    answer: str


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A reply in neither form; `problem` is told to the model as the step's observation."""

    thought: str
    problem: str


Decision = ToolCall | FinalAnswer | Unreadable


def system_prompt(tools: Iterable[ToolDefinition]) -> str:
    listed = []
    for tool in tools:
        listed.append(f"- {tool.name}: {tool.description}")
        listed += [f"    argument {a.name} ({a.type}): {a.description}".rstrip(": ") for a in tool.arguments]
    return "\n".join([
        "You answer the user's question step by step, using the tools below when they help.",
        "",
        "Tools:",
        *(listed or ["(none: answer from what you know)"]),
        "",
        "Reply in exactly one of these two forms, and nothing else:",
        "",
        "Thought: what you know so far and what to do next",
        "Action: the name of one tool from the list",
        'Action Input: a JSON object with the tool\'s arguments, e.g. {"question": "..."}',
        "",
        "Thought: why you can answer now",
        "Final Answer: the answer for the user",
        "",
        "Take one action per reply, then stop: the tool's result comes back to you as an Observation.",
        "Never write an Observation yourself.",
    ])


def user_prompt(question: str, steps: Sequence[AgentStep], state: str | None = None) -> str:
    lines = [f"Question: {question}"]
    if state:
        lines.append(f"State: {state}")
    for step in steps:
        lines.append(f"Thought: {step.thought}")
        if step.action:
            # Cut like observations: an argument is often the question again, and every step's prompt
            # repeats the steps before it, so uncut it would grow with question length × steps.
            lines += [f"Action: {step.action}", f"Action Input: {arguments_text(step.arguments, cut=_cut)}"]
        lines.append(f"Observation: {_cut(step.observation)}")
    lines.append("What is your next step?" if steps else "What is your first step?")
    return "\n".join(lines)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_OBSERVATION else text[:MAX_OBSERVATION] + " […]"


def parse_reply(text: str) -> Decision:
    """Read a model's reply. Markdown decoration, code fences and letter case are forgiven; text the model
    wrote after an `Observation:` of its own is dropped; whichever of Action / Final Answer comes first wins.

    >>> parse_reply("Thought: add them\\nAction: calculator\\nAction Input: {\\"expression\\": \\"1+2\\"}")
    ToolCall(thought='add them', tool='calculator', arguments={'expression': '1+2'})
    >>> parse_reply("**Thought:** easy\\n**Final Answer:** 3")
    FinalAnswer(thought='easy', answer='3')
    """
    sections = _sections(_FENCE.sub("", text))
    thought = sections.get("thought", sections.get("", "")).strip()
    labels = [label for label in sections if label in ("action", "final answer")]
    if not labels:
        return Unreadable(text.strip(), "the reply has neither 'Action:' nor 'Final Answer:'; reply in one of "
                                        "the two forms given")
    if labels[0] == "final answer":
        answer = sections["final answer"].strip()
        if not answer:
            return Unreadable(text.strip(), "'Final Answer:' is empty")
        return FinalAnswer(thought, answer)
    named = _TOOL_NAME.match(sections["action"].strip())
    if named is None:
        return Unreadable(text.strip(), "'Action:' names no tool")
    tool = named.group(1).rstrip(".")
    raw = sections.get("action input", "").strip()
    arguments = _arguments(raw)
    if arguments is None:
        return Unreadable(thought or text.strip(), f"'Action Input:' is not a JSON object: {raw[:200]!r}")
    return ToolCall(thought, tool, arguments)


def _sections(text: str) -> dict[str, str]:
    """Label → text, in order of first appearance ("" = text before any label); stops at `Observation:`."""
    sections: dict[str, str] = {}
    matches = list(_LABEL.finditer(text))
    if not matches or matches[0].start() > 0:
        sections[""] = text[: matches[0].start() if matches else len(text)]
    for match, following in zip(matches, [*matches[1:], None]):
        label = match.group(1).lower()
        if label == "observation":
            break
        body = text[match.end(): following.start() if following else len(text)]
        sections.setdefault(label, body)
    return sections


def _arguments(raw: str) -> dict[str, str] | None:
    """A JSON object's members as text; plain text becomes `{"input": text}`; None if the JSON is broken."""
    if not raw:
        return {}
    start = raw.find("{")
    if start < 0:
        value: Any = raw
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            pass
        return {"input": value if isinstance(value, str) else json.dumps(value)}
    try:
        value, _ = json.JSONDecoder().raw_decode(raw[start:])
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}
