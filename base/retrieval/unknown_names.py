"""Names a question gives that the collection does not know at all, and the answer that says so.

A name no entity label matched may still be known: as a near-synonym of a label (an embedding at least
SYNONYM_SIMILARITY close, as the passage walk links names) or in the words of a passage or a fact that
no extraction turned into an entity. Only a name found in none of these is unknown; an answer about it
would rest on unrelated facts, so the answer says the name is unknown and which entities are nearest."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from spacy.lang.en.stop_words import STOP_WORDS

from tracegraph.base.errors import TraceGraphError
from tracegraph.base.retrieval.passage_graph import without_qualifier
from tracegraph.base.retrieval.ppr import PprLimits

SYNONYM_SIMILARITY = PprLimits().synonym_similarity
NEAREST = 3  # entities named as nearest
READ = 5  # passages and facts read to find the name in
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class UnknownName:
    name: str
    nearest: tuple[str, ...]  # labels of the collection's entities nearest to it, nearest first


async def unknown_names(tools, names: Sequence[str]) -> list[UnknownName]:
    """Of `names` (which no entity label matched), those the collection does not know at all."""
    names = list(dict.fromkeys(n for n in names if n.strip()))
    if not names:
        return []
    unknown = []
    for name, vector in zip(names, await tools.embed(names)):
        near = await tools.nearest_entities(vector, NEAREST + 2)
        if any(similarity >= SYNONYM_SIMILARITY for _, similarity in near) or await _said(tools, name):
            continue
        unknown.append(UnknownName(name, await _labelled(tools, near)))
    return unknown


async def nearest_labels(tools, name: str) -> tuple[str, ...]:
    """The labels of the collection's NEAREST entities to `name` by embedding, nearest first."""
    (vector,) = await tools.embed([name])
    return await _labelled(tools, await tools.nearest_entities(vector, NEAREST + 2))


async def _labelled(tools, near: Sequence[tuple[str, float]]) -> tuple[str, ...]:
    labels = await tools.labels([entity for entity, _ in near]) if near else {}
    return tuple(list(dict.fromkeys(labels[e] for e, _ in near if labels.get(e)))[:NEAREST])


def unknown_answer(unknown: Sequence[UnknownName]) -> str:
    """One line per unknown name.

    >>> print(unknown_answer([UnknownName("Quasar", ("Skyline", "Storage Gateway")), UnknownName("Zed", ())]))
    No entity named Quasar in this collection; nearest: Skyline, Storage Gateway.
    No entity named Zed in this collection.
    """
    return "\n".join(f"No entity named {u.name} in this collection" +
                     (f"; nearest: {', '.join(u.nearest)}." if u.nearest else ".") for u in unknown)


def unknown_reason(unknown: Sequence[UnknownName]) -> str:
    """Why an answer about unknown names is not one, for the confidence block's warning."""
    names = ", ".join(u.name for u in unknown)
    return f"the question names {names}, which this collection does not know"


async def _said(tools, name: str) -> bool:
    """Whether a passage or a fact among the best keyword hits for `name` holds all of its words."""
    words = _words(without_qualifier(name))  # "B Boy (song)": a passage about B Boy need not say "song"
    wanted = words - STOP_WORDS or words
    try:
        hits = await tools.keyword_chunks(name, READ)
        texts = [c.text for c in await tools.chunks([c.uri for c in hits])] if hits else []
        texts += [m.text for m in await tools.keyword(name, READ)]
    except TraceGraphError:
        return True  # the indexes cannot tell: never call a name unknown on no evidence
    return any(wanted <= _words(text) for text in texts)


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}
