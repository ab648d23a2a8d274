"""The retrieved chunks as text: numbered excerpts for the LLM's prompt, and the whole sentences an
offline answer chooses from (flow/graph_rag/offline_synthesis.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tracegraph.base.retrieval.tools import RetrievedChunk

SYSTEM = ("Answer the question using only the numbered document excerpts given, and cite the excerpts you "
          "use by number, like [1]. If the excerpts do not contain the answer, say so.")

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
