"""The LLM extractor: asks for entities, definitions and relationships as JSON, validates the reply,
and asks again (saying what was wrong) when it is malformed. Each fact's confidence is the model's
own rating, lowered by checks against the chunk: a name the text never mentions is how a model
hallucinates, so such a fact lands well below the review threshold."""

from __future__ import annotations

import asyncio
import json
import re
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import replace

from pydantic import BaseModel, Field, ValidationError

from tracegraph.base.errors import TraceGraphError
from tracegraph.base.extraction.aligned import aligned
from tracegraph.base.extraction.facts import Confidence, Extraction, Relation

SYSTEM = (
    "You extract a knowledge graph from text. Answer with one JSON object and nothing else:\n"
    '{"entities": [{"name": str, "definition": str}], '
    '"relationships": [{"subject": str, "predicate": str, "object": str, "confidence": number}]}\n'
    "Use only facts stated in the text. Names are as written in the text; predicates are short verb "
    "phrases (\"depends on\", \"acquired\"); definitions are one sentence or empty. A relationship's "
    "confidence (0 to 1) says how plainly the text states it: 1 for word for word, lower when you infer it."
)
UNRATED = 0.7  # a relationship the model did not rate, and every definition (the model rates none)
NOT_IN_TEXT = 0.3  # per name the chunk never mentions: the hallucination failure mode
ODD_PREDICATE = 0.6  # a predicate that is not a short phrase of words
_WORD = re.compile(r"[^\W_]+")
_PREDICATE_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


class _Entity(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    definition: str = Field("", max_length=2000)


class _Relationship(BaseModel):
    subject: str = Field(min_length=1, max_length=200)
    predicate: str = Field(min_length=1, max_length=100)
    object: str = Field(min_length=1, max_length=200)
    confidence: float | None = Field(None, ge=0, le=1)


class _Reply(BaseModel):
    entities: list[_Entity] = []
    relationships: list[_Relationship] = []


class ExtractionFailed(TraceGraphError):
    """The model gave no usable answer within the allowed attempts."""


def parse(text: str) -> Extraction:
    """Validate a model reply (tolerating a ```json fence around it); each relationship carries the
    model's rating (UNRATED when it gave none), not yet checked against the chunk."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    reply = _Reply.model_validate(json.loads(body))
    extraction = Extraction()
    for e in reply.entities:
        extraction.definitions[e.name.strip()] = e.definition.strip()
    extraction.relations = [Relation(r.subject.strip(), r.predicate.strip().lower(), r.object.strip(),
                                     _rating(r.confidence)) for r in reply.relationships]
    return extraction


def _rating(value: float | None) -> Confidence:
    if value is None:
        return Confidence(UNRATED, f"model gave no rating ({UNRATED:g} assumed)")
    return Confidence(value, f"model rated {value:g}")


def _words(text: str) -> str:
    """Text as its words, lower-cased and without accents or punctuation, space-separated and padded:
    `" hall s theory "` for "Hall’s théory"."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return " " + " ".join(_WORD.findall(folded.casefold())) + " "


def _named_in(name: str, text_words: str) -> bool:
    return _words(name).strip() != "" and _words(name) in text_words


def _short_phrase(predicate: str) -> bool:
    words = predicate.split()
    return 1 <= len(words) <= 5 and all(_PREDICATE_WORD.fullmatch(w) for w in words)


def checked(extraction: Extraction, text: str) -> Extraction:
    """The extraction with every fact's confidence checked against the chunk `text`: each name must
    appear in it, and a predicate must be 1–5 words of letters (hyphens allowed). A failed check
    multiplies the model's rating down, and the reason lists the failures before the rating."""
    text_words = _words(text)

    def judged(rating: Confidence, names: dict[str, str], predicate: str | None = None) -> Confidence:
        value, failures = rating.value, []
        for role, name in names.items():
            if not _named_in(name, text_words):
                value, failures = value * NOT_IN_TEXT, [*failures, f"{role} {name!r} not in the text"]
        if predicate is not None and not _short_phrase(predicate):
            value, failures = value * ODD_PREDICATE, [*failures, f"predicate {predicate!r} is not a short phrase"]
        return Confidence(value, "; ".join([*failures, rating.reason]))

    definition_rating = Confidence(UNRATED, f"definition not rated by the model ({UNRATED:g} assumed)")
    return Extraction(
        definitions=dict(extraction.definitions),
        relations=[replace(r, confidence=judged(r.confidence, {"subject": r.subject, "object": r.object},
                                                r.predicate)) for r in extraction.relations],
        definition_confidence={name: judged(definition_rating, {"entity": name})
                               for name, definition in extraction.definitions.items() if definition})


Ask = Callable[[str, str], Awaitable[str]]  # (system, prompt) -> reply text


async def extract(text: str, ask: Ask, attempts: int = 3, *, first_line: int = 1,
                  model: str | None = None) -> Extraction:
    """Ask the model; on a malformed reply, ask again with the error, up to `attempts` times.
    The facts come back with their confidence checked against `text`, in the graph's canonical names and
    predicates, placed on the lines of `text` (whose first line is `first_line` of its document); `model`
    names the spaCy pipeline that lemmatises predicates."""
    prompt = f"Text:\n{text}"
    problem = ""
    for _ in range(attempts):
        reply = await ask(SYSTEM, prompt + (f"\n\nYour previous answer was invalid: {problem}. "
                                            "Answer with the JSON object only." if problem else ""))
        try:
            found = checked(parse(reply), text)
        except (json.JSONDecodeError, ValidationError) as exc:
            problem = str(exc).splitlines()[0][:300]
            continue
        return await asyncio.to_thread(aligned, found, text, first_line, model)
    raise ExtractionFailed(f"no valid JSON after {attempts} attempts; last problem: {problem}")
