"""The offline answer of GraphRAG, search and Document RAG, put together from what retrieval kept: the
asked relation stated from the selected facts, else the best sentence of the best passages
(base/retrieval/offline_answer.py composes; this module reads what it needs: passage texts, sentence
vectors, and where each fact and sentence was read, as "title, lines 3–4")."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tracegraph.base.provenance.vocab import DC, PROV, TG
from tracegraph.base.retrieval import offline_answer as compose
from tracegraph.base.retrieval.asked_relation import asked_relation
from tracegraph.base.retrieval.offline_answer import Fact, OfflineAnswer, Sentence
from tracegraph.base.stores.protocol import SOURCE_GRAPH
from tracegraph.flow.document_rag.excerpts import sentences
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Triple, TripleTerm, iri

ANSWER_PASSAGES = 6  # the best passages whose sentences an answer is chosen from
MAX_SENTENCES = 80  # sentences of those passages scored at most: a bound on one answer's work
_HOPS = 6  # prov:wasDerivedFrom links walked from a subgraph up to its document


@dataclass(frozen=True, slots=True)
class PassageText:
    """A passage an answer may quote: its chunk IRI, its document's title, its text and its rank."""

    uri: str
    title: str
    text: str
    rank: int


async def offline_answer(tools, question: str, question_vector: Sequence[float], facts: Sequence[tuple[Fact, Triple]],
                         passages: Sequence[PassageText], mentions: Sequence[str],
                         entity_ids: dict[str, list[str]] | None = None) -> OfflineAnswer:
    """The offline answer: the asked relation stated from `facts` when some state it, else the passage
    sentence that best answers, else the facts nearest the question. `mentions` are the names grounding
    found in the question; `entity_ids` the entities each names."""
    asked = await asyncio.to_thread(asked_relation, question, mentions)  # spaCy parses: off the event loop
    notes = [f"the question {asked.describe()}"] if asked else ["the question asks no relation of a named entity"]
    if asked is not None:
        stated = await asyncio.to_thread(compose.relation_answer, asked, [f for f, _ in facts],
                                         (entity_ids or {}).get(asked.mention, ()))
        if stated is not None:
            triples = {f: t for f, t in facts}
            places = await fact_places(tools, [(f, triples[f]) for f in stated.facts[:compose.MAX_SUPPORT]])
            text = await asyncio.to_thread(compose.relation_text, stated, places)
            return OfflineAnswer(text, _method(
                notes, f"stated '{asked.phrase}' for {asked.mention} from {len(stated.facts)} selected fact(s)"),
                relation=stated, notes=notes)
        notes.append(f"no selected fact states '{asked.phrase}' for {asked.mention}")
    quoted = await passage_answer(tools, question, question_vector, passages, notes)
    if quoted is not None:
        return quoted
    if facts:
        places = await fact_places(tools, list(facts[:compose.NEAREST_FACTS * 2]))
        return OfflineAnswer(compose.nearest_facts_text([f for f, _ in facts], places),
                             _method(notes, "no passage text: quoted the facts nearest the question"), notes=notes)
    return OfflineAnswer(compose.NO_FACTS, _method(notes, "nothing to answer from"), notes=notes)


async def passage_answer(tools, question: str, question_vector: Sequence[float], passages: Sequence[PassageText],
                         notes: Sequence[str] = ()) -> OfflineAnswer | None:
    """The passage sentence that best answers the question, quoted with its source, and the best sentence
    of each other passage; None when the passages hold no text."""
    found = await passage_sentences(tools, passages)
    if not found:
        return None
    vectors = await tools.embed([s.text for s in found])
    span = await asyncio.to_thread(compose.best_span, question, question_vector, found, vectors)
    if span is None:
        return None
    why = f" (it names {span.candidate}, the kind of answer the question asks for)" if span.candidate else ""
    return OfflineAnswer(compose.span_text(span), _method(
        notes, f"quoted the passage sentence that best answers the question{why}"), span=span, notes=list(notes))


def _method(notes: Sequence[str], how: str) -> str:
    """The Synthesis step's method: offline, what the question asks, and how the answer was made."""
    return f"offline (no LLM configured): {'; '.join([*notes, how])}"


async def passage_sentences(tools, passages: Sequence[PassageText]) -> list[Sentence]:
    """The whole sentences of the passages (or a passage's text itself when it has none: a table, a
    list), each with its place; passages are read in rank order up to MAX_SENTENCES sentences."""
    found: list[Sentence] = []
    for passage in sorted(passages, key=lambda p: p.rank):
        whole = sentences(passage.text) or ([" ".join(passage.text.split())[:300]] if passage.text.strip() else [])
        start = await chunk_start_line(tools, passage.uri) if whole else None
        for text in whole:
            lines = sentence_lines(passage.text, text) if start is not None else None
            span = (start + lines[0] - 1, start + lines[1] - 1) if lines else None
            found.append(Sentence(text, passage.uri, passage.rank, place(passage.title, span)))
            if len(found) >= MAX_SENTENCES:
                return found
    return found


async def chunk_start_line(tools, chunk: str) -> int | None:
    """The document line a chunk starts on, when that is known: 1 for a chunk at the start of its
    document (or page). A later chunk's first line is not recorded, so its sentences get no lines."""
    if not chunk.startswith("urn:chunk:"):
        return None
    found = await tools.match(s=iri(chunk), p=TG.charOffset, g=SOURCE_GRAPH, limit=1)
    if found and isinstance(found[0].o, LiteralTerm) and found[0].o.value.strip() == "0":
        return 1
    return None


def sentence_lines(text: str, sentence: str) -> tuple[int, int] | None:
    """The 1-based lines of `text` a sentence (whose line breaks were joined) starts and ends on.

    >>> sentence_lines("# Title\\nHelios Grid runs\\nthe network. It employs people.", "Helios Grid runs the network.")
    (2, 3)
    """
    words = sentence.split()
    if not words:
        return None
    found = re.search(r"\s+(?:[-*+]\s+)?".join(re.escape(w) for w in words), text)
    if found is None:
        return None
    return text.count("\n", 0, found.start()) + 1, text.count("\n", 0, found.end()) + 1


def place(title: str, lines: tuple[int, int] | None) -> str:
    """How a reader finds a source: "title, line 3", "title, lines 3–4", or the title alone.

    >>> place("Helios report", (3, 3)), place("Helios report", (3, 4)), place("Helios report", None)
    ('Helios report, line 3', 'Helios report, lines 3–4', 'Helios report')
    """
    if not lines:
        return title
    return f"{title}, line {lines[0]}" if lines[0] == lines[1] else f"{title}, lines {lines[0]}–{lines[1]}"


async def fact_places(tools, facts: Sequence[tuple[Fact, Triple]]) -> dict[Fact, str]:
    """Where each fact was read: its first source document's title, with the lines its subgraph was placed
    on when the extractor placed it."""
    titles: dict[str, str] = {}
    out: dict[Fact, str] = {}
    for fact, triple in facts:
        quoted = TripleTerm(triple=Triple(s=triple.s, p=triple.p, o=triple.o))
        for holder in await tools.match(p=TG.contains, o=quoted, g=SOURCE_GRAPH, limit=3):
            document = await document_of(tools, holder.s)
            if document is None:
                continue
            if document not in titles:
                found = await tools.match(s=iri(document), p=DC.title, limit=1)
                titles[document] = found[0].o.value if found and isinstance(found[0].o, LiteralTerm) else document
            out[fact] = place(titles[document], await _lines(tools, holder.s))
            break
    return out


async def document_of(tools, node) -> str | None:
    """The document a provenance node (a subgraph, a chunk, a page) derives from: the root of its
    prov:wasDerivedFrom chain; None when it has no chain."""
    depth = 0
    while isinstance(node, IriTerm) and depth < _HOPS:
        parents = await tools.match(s=node, p=PROV.wasDerivedFrom, g=SOURCE_GRAPH, limit=1)
        if not parents:
            break
        node, depth = parents[0].o, depth + 1
    return node.iri if isinstance(node, IriTerm) and depth else None


async def _lines(tools, subgraph) -> tuple[int, int] | None:
    first = await tools.match(s=subgraph, p=TG.firstLine, g=SOURCE_GRAPH, limit=1)
    last = await tools.match(s=subgraph, p=TG.lastLine, g=SOURCE_GRAPH, limit=1)
    try:
        return int(first[0].o.value), int(last[0].o.value)
    except (IndexError, AttributeError, ValueError):
        return None
