"""The LLM extractor: asks for entities, definitions and relationships as JSON, validates the reply,
and asks again (saying what was wrong) when it is malformed."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from pydantic import BaseModel, Field, ValidationError

from tracegraph.base.errors import TraceGraphError
from tracegraph.flow.kg_extract.facts import Extraction, Relation

SYSTEM = (
    "You extract a knowledge graph from text. Answer with one JSON object and nothing else:\n"
    '{"entities": [{"name": str, "definition": str}], '
    '"relationships": [{"subject": str, "predicate": str, "object": str}]}\n'
    "Use only facts stated in the text. Names are as written in the text; predicates are short verb "
    "phrases (\"depends on\", \"acquired\"); definitions are one sentence or empty."
)


class _Entity(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    definition: str = Field("", max_length=2000)


class _Relationship(BaseModel):
    subject: str = Field(min_length=1, max_length=200)
    predicate: str = Field(min_length=1, max_length=100)
    object: str = Field(min_length=1, max_length=200)


class _Reply(BaseModel):
    entities: list[_Entity] = []
    relationships: list[_Relationship] = []


class ExtractionFailed(TraceGraphError):
    """The model gave no usable answer within the allowed attempts."""


def parse(text: str) -> Extraction:
    """Validate a model reply (tolerating a ```json fence around it)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    reply = _Reply.model_validate(json.loads(body))
    extraction = Extraction()
    for e in reply.entities:
        extraction.definitions[e.name.strip()] = e.definition.strip()
    extraction.relations = [Relation(r.subject.strip(), r.predicate.strip().lower(), r.object.strip())
                            for r in reply.relationships]
    return extraction


Ask = Callable[[str, str], Awaitable[str]]  # (system, prompt) -> reply text


async def extract(text: str, ask: Ask, attempts: int = 3) -> Extraction:
    """Ask the model; on a malformed reply, ask again with the error, up to `attempts` times."""
    prompt = f"Text:\n{text}"
    problem = ""
    for _ in range(attempts):
        reply = await ask(SYSTEM, prompt + (f"\n\nYour previous answer was invalid: {problem}. "
                                            "Answer with the JSON object only." if problem else ""))
        try:
            return parse(reply)
        except (json.JSONDecodeError, ValidationError) as exc:
            problem = str(exc).splitlines()[0][:300]
    raise ExtractionFailed(f"no valid JSON after {attempts} attempts; last problem: {problem}")
