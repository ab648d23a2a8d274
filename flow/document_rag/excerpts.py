"""The retrieved chunks as text: numbered excerpts for the LLM's prompt, or, with no LLM, the
sentences most similar to the question, quoted with their document's title."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from tracegraph.base.retrieval.tools import RetrievedChunk

SYSTEM = ("Answer the question using only the numbered document excerpts given, and cite the excerpts you "
          "use by number, like [1]. If the excerpts do not contain the answer, say so.")
OFFLINE_HEADER = "Offline answer (no LLM configured), quoting the documents most related to the question:"
OFFLINE_QUOTES = 5

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def prompt(question: str, chunks: Sequence[RetrievedChunk], titles: dict[str, str]) -> str:
    excerpts = [f"[{i}] {titles.get(c.document or '', c.document or 'unknown document')}:\n{c.text.strip()}"
                for i, c in enumerate(chunks, 1)]
    return f"Question: {question}\n\nDocument excerpts:\n\n" + "\n\n".join(excerpts)


def sentences(text: str) -> list[str]:
    """Whole sentences of a chunk: headings dropped, lines of a paragraph joined, and the cut-off
    pieces at a chunk's edges (starting lower-case, or not ending a sentence) left out.

    >>> sentences("# Title\\nHelios Grid runs\\nthe network. It employs 2,400 people.\\n\\nand then")
    ['Helios Grid runs the network.', 'It employs 2,400 people.']
    """
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [_BULLET.sub("", line).strip() for line in paragraph.splitlines() if not line.lstrip().startswith("#")]
        for sentence in _SENTENCE_END.split(" ".join(line for line in lines if line)):
            sentence = sentence.strip()
            if sentence[:1].isupper() or sentence[:1].isdigit() or sentence[:1] in "\"“(":
                if sentence.endswith((".", "!", "?", ".\"", ".”")) and len(sentence.split()) >= 3:
                    found.append(sentence)
    return found


def most_similar(query: Sequence[float], vectors: Sequence[Sequence[float]], limit: int) -> list[int]:
    """Indices of the `limit` vectors most similar (cosine) to `query`, best first."""
    if not vectors:
        return []
    m = np.asarray(vectors, dtype=np.float32)
    q = np.asarray(query, dtype=np.float32)
    similarity = (m @ q) / np.clip(np.linalg.norm(m, axis=1) * np.linalg.norm(q), 1e-12, None)
    return [int(i) for i in np.argsort(-similarity, kind="stable")[:limit]]


def quoted(picked: Sequence[tuple[str, str]]) -> str:
    """The offline answer: each (sentence, document title) as a quote."""
    return OFFLINE_HEADER + "\n" + "\n".join(f"- \"{sentence}\" ({title})" for sentence, title in picked)
