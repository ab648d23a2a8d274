"""The ReAct loop as plain async code: think (the LLM) → act (a configured tool) → observe, until a final
answer or the iteration bound, yielding messages and explain events as each step completes. Without an
LLM it follows an honest offline strategy (offline.py): ask the knowledge graph, and the documents too when
the graph's answer is weak. No bus here."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from tracegraph.base.errors import ConfigError, LlmUnavailable, TraceGraphError
from tracegraph.base.llm.completion import Completion
from tracegraph.base.provenance import agent as prov
from tracegraph.base.provenance.query import Usage, failure_triples, now
from tracegraph.flow.agent import offline
from tracegraph.flow.agent.prompting import FinalAnswer, ToolCall, Unreadable, parse_reply, system_prompt, user_prompt
from tracegraph.flow.agent.tool_config import ToolDefinition
from tracegraph.flow.agent.tools import Relayed, ToolResult
from tracegraph.flow.graph_rag.pipeline import OFFLINE_NOTE, Explain
from tracegraph.schemas.agent import AgentStep

log = logging.getLogger(__name__)

DEFAULT_MAX_ITERATIONS = 6

STEP_TEXT = "explain-text"  # a library document holding a step's thought or observation, not an answer


@dataclass(frozen=True, slots=True)
class Say:
    """A message for the caller, complete: a thought, an action, an observation or the answer."""

    kind: Literal["thought", "action", "observation", "answer"]
    text: str
    message_id: str


@dataclass(frozen=True, slots=True)
class Finished:
    answer: str
    usage: Usage  # every LLM call of the session, the tools' included


Event = Explain | Relayed | Say | Finished


class AgentServices(Protocol):
    """What the loop needs from the rest of the system; the processor implements it over the bus."""

    async def complete(self, system: str, prompt: str) -> Completion:
        """Raises LlmUnavailable when no LLM is configured (the loop then works offline)."""
        ...

    def run_tool(self, tool: ToolDefinition, arguments: Mapping[str, str],
                 parent_uri: str) -> AsyncIterator[Relayed | ToolResult]:
        """The tool's relayed explain events, then its result; raises if the tool fails."""
        ...

    async def save_answer(self, document_id: str, title: str, text: str, document_type: str = "answer") -> bool:
        """Keep a text (the answer, or a step's thought or observation: `document_type` "explain-text") in
        the librarian; False if it could not be stored."""
        ...


@dataclass
class _Session:
    sid: str
    question: str
    state: str | None
    steps: list[AgentStep]
    previous: str  # the entity the next one derives from: the Question, then each Analysis
    usage: Usage = field(default_factory=Usage)
    offline: bool = False
    asked: list[offline.Asked] = field(default_factory=list)  # the offline strategy's steps, judged
    outcome: tuple[ToolResult, str | None] = (ToolResult("", found=False), None)  # the last step's (result, error)


class ReactAgent:
    """`async for event in ReactAgent(services, tools).run(question)`: Say / Explain / Relayed, then Finished."""

    def __init__(self, services: AgentServices, tools: Mapping[str, ToolDefinition],
                 max_iterations: int = DEFAULT_MAX_ITERATIONS, *, explain: bool = True) -> None:
        """`explain=False`: the caller gets no explain events, so no step's texts are stored for them."""
        self.services = services
        self.tools = dict(tools)
        self.max_iterations = max_iterations
        self.explain = explain

    async def run(self, question: str, *, session_id: str | None = None, history: Sequence[AgentStep] = (),
                  state: str | None = None) -> AsyncIterator[Event]:
        question = question.strip()
        if not question:
            raise ConfigError("empty question")
        sid = session_id or str(uuid.uuid4())
        q_uri = prov.question_uri(sid)
        session = _Session(sid, question, state, list(history), previous=q_uri)
        yield Explain(q_uri, prov.question_triples(q_uri, question, now()))
        try:
            async for event in self._loop(session):
                yield event
        except Exception as exc:
            yield Explain(q_uri, failure_triples(q_uri, str(exc) or type(exc).__name__))
            raise

    async def _loop(self, s: _Session) -> AsyncIterator[Event]:
        for step in range(1, self.max_iterations + 1):
            decision, usage, llm_ms = await self._decide(s)
            if decision is None:  # offline, and no retrieval tool left to ask
                break
            if isinstance(decision, FinalAnswer):
                yield Say("thought", decision.thought, prov.thought_uri(prov.iteration_uri(s.sid, step)))
                notes = (f"final thought: {decision.thought}",) if decision.thought else ()
                async for event in self._conclude(s, decision.answer, "final-answer", usage, notes):
                    yield event
                return
            async for event in self._act(s, step, decision, usage, llm_ms):
                yield event
            if s.offline and isinstance(decision, ToolCall):  # a step of the offline plan: judge its answer
                s.asked.append(await asyncio.to_thread(  # it parses the question: off the event loop
                    offline.assess, s.question, self.tools[decision.tool].type, *s.outcome))
                if s.asked[-1].strong:
                    async for event in self._offline_conclusion(s):
                        yield event
                    return
        if s.offline and offline.next_tool(self.tools, s.asked) is None:
            ending = self._offline_conclusion(s)
        else:
            stopped = f"Stopped after {self.max_iterations} iterations without a final answer."
            ending = self._conclude(s, stopped, "max-iterations")
        async for event in ending:
            yield event

    async def _decide(self, s: _Session) -> tuple[ToolCall | FinalAnswer | Unreadable | None, Usage | None, int | None]:
        """The model's next step; once it turns out there is no model, the offline strategy's."""
        if not s.offline:
            try:
                started = time.monotonic()
                done = await self.services.complete(system_prompt(self.tools.values()),
                                                    user_prompt(s.question, s.steps, s.state))
                usage = Usage(done.in_token, done.out_token, done.model)
                s.usage += usage
                return parse_reply(done.text), usage, _ms_since(started)
            except LlmUnavailable:
                s.offline = True
        return self._offline_decision(s), None, None

    def _offline_decision(self, s: _Session) -> ToolCall | None:
        """Ask the plan's next retrieval tool the question as it was put, saying why; None when none is left."""
        tool = offline.next_tool(self.tools, s.asked)
        if tool is None:
            return None
        argument = tool.arguments[0].name if tool.arguments else "question"
        return ToolCall(offline.thought(tool, s.asked), tool.name, {argument: s.question})

    async def _act(self, s: _Session, step: int, decision: ToolCall | Unreadable, usage: Usage | None,
                   llm_ms: int | None) -> AsyncIterator[Event]:
        """One think / act / observe cycle after the thinking: thought, action, the tool's own trace,
        observation, then the Analysis. A failure of any kind becomes the observation."""
        uri = prov.iteration_uri(s.sid, step)
        yield Say("thought", decision.thought, prov.thought_uri(uri))
        action = arguments = error = sub_trace = tool_ms = None
        result = ToolResult("", found=False)
        if isinstance(decision, Unreadable):
            error = f"unreadable reply: {decision.problem}"
        else:
            # As the trace keeps them: a long argument (often the question itself) is cut to an excerpt.
            action, arguments = decision.tool, prov.arguments_text(decision.arguments)
            yield Say("action", f"{action} {arguments}", f"{uri}/action")
            tool = self.tools.get(action)
            if tool is None:
                error = f"unknown tool {action!r}; the tools are: {', '.join(sorted(self.tools)) or 'none'}"
            else:
                started = time.monotonic()
                try:
                    async for item in self.services.run_tool(tool, decision.arguments, uri):
                        if isinstance(item, Relayed):
                            if sub_trace is None and item.is_question:
                                sub_trace = item.uri
                            yield item
                        else:
                            result = item
                except Exception as exc:
                    if not isinstance(exc, TraceGraphError):
                        log.warning("agent: tool %s raised", action, exc_info=True)
                    error = f"{action} failed: {exc or type(exc).__name__}"
                tool_ms = _ms_since(started)
                s.usage += result.usage or Usage()
        observation = f"Error: {error}" if error else (result.text or "(the tool returned no text)")
        yield Say("observation", observation, prov.observation_uri(uri))
        record = prov.Analysis(step, decision.thought, action, arguments, observation, error, sub_trace, usage,
                               llm_ms, tool_ms, OFFLINE_NOTE if s.offline else None)
        saved = await self._keep_texts(s, step, uri, decision.thought, observation)
        yield Explain(uri, [*prov.analysis_triples(uri, s.previous, record), *prov.reflection_triples(uri, *saved)])
        s.previous = uri
        s.steps.append(AgentStep(thought=decision.thought, action=action or "", observation=observation,
                                 arguments=decision.arguments if isinstance(decision, ToolCall) else {}))
        s.outcome = (result, error)

    async def _keep_texts(self, s: _Session, step: int, uri: str, thought: str, observation: str
                          ) -> tuple[bool, bool]:
        """Store a step's thought and observation in the librarian, where upstream's client reads them
        (under their entities' IRIs); whether each was stored."""
        async def keep(document: str, kind: str, text: str) -> bool:
            return bool(self.explain and text) and await self.services.save_answer(
                document, f"Agent {kind} (step {step}): {s.question[:50]}", text, document_type=STEP_TEXT)

        thought_saved, observation_saved = await asyncio.gather(
            keep(prov.thought_uri(uri), "Thought", thought),
            keep(prov.observation_uri(uri), "Observation", observation))
        return thought_saved, observation_saved

    def _offline_conclusion(self, s: _Session) -> AsyncIterator[Event]:
        answer, reason, notes = offline.conclusion(s.asked)
        return self._conclude(s, answer, reason, notes=notes)

    async def _conclude(self, s: _Session, answer: str, reason: str, usage: Usage | None = None,
                        notes: tuple[str, ...] = ()) -> AsyncIterator[Event]:
        uri = prov.conclusion_uri(s.sid)
        yield Say("answer", answer, uri)
        document = prov.answer_document_uri(s.sid)
        saved = await self.services.save_answer(document, f"Agent Answer: {s.question[:50]}", answer)
        yield Explain(uri, prov.conclusion_triples(uri, s.previous, answer, document if saved else None, reason,
                                                   usage, notes))
        yield Finished(answer, s.usage)


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
