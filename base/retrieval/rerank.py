"""The second stage after fusion: rescore the fused candidates against the question.

A cross-encoder reads question and candidate together and is the better judge; when one is
served at an endpoint (`TG_RERANK_URL`: vLLM, llama.cpp, TEI, Jina- or Cohere-style `/rerank`),
it is used. No cross-encoder ships inside a PyPI package we can install, so without an endpoint
the bi-encoder embedding model reranks by cosine similarity — and the trace names which one ran.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

import aiohttp
import numpy as np

from tracegraph.base.errors import RemoteError, TransientError
from tracegraph.base.llm.embeddings import unit_rows

Embed = Callable[[Sequence[str]], Awaitable[list[list[float]]]]


class Reranker(Protocol):
    name: str  # written into the trace
    decisive: bool  # True: its order is final; False: one vote beside the fused order

    async def scores(self, question: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, higher is better."""
        ...


class EmbeddingReranker:
    """Cosine similarity of the question's and each candidate's embedding (a bi-encoder): a weak
    judge, so the pipeline counts its order as one vote, not the final word."""

    decisive = False

    def __init__(self, embed: Embed, model: Callable[[], str | None] = lambda: None) -> None:
        self.embed = embed
        self.model = model  # the embedding model's name, once an embedding has told it

    @property
    def name(self) -> str:
        return (f"bi-encoder cosine similarity ({self.model() or 'the flow embedding model'}); "
                "no cross-encoder configured")

    async def scores(self, question: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        vectors = unit_rows(np.asarray(await self.embed([question, *texts]), dtype=np.float32))
        return [float(x) for x in vectors[1:] @ vectors[0]]


class EndpointReranker:
    """A cross-encoder behind HTTP: POST {model, query, documents} and read back
    `results: [{index, relevance_score}]` (Jina, Cohere, vLLM, llama.cpp) or `[{index, score}]` (TEI)."""

    decisive = True  # reads question and candidate together: its order is final

    def __init__(self, url: str, model: str, timeout: float = 30.0) -> None:
        self.url, self.model = url, model
        self.name = f"cross-encoder {model} at {url}"
        self._timeout = aiohttp.ClientTimeout(total=timeout)

    async def scores(self, question: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        body = {"model": self.model, "query": question, "documents": list(texts), "texts": list(texts)}
        try:
            async with aiohttp.ClientSession(timeout=self._timeout) as session:
                async with session.post(self.url, json=body) as reply:
                    if reply.status >= 500:
                        raise TransientError(f"reranker at {self.url} answered {reply.status}")
                    if reply.status >= 400:
                        raise RemoteError("rerank-failed", f"reranker at {self.url} answered {reply.status}: "
                                          f"{(await reply.text())[:200]}")
                    payload = await reply.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TransientError(f"reranker at {self.url} unreachable: {exc}") from exc
        return _scores_from(payload, len(texts))


def _scores_from(payload: object, count: int) -> list[float]:
    """
    >>> _scores_from({"results": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.2}]}, 2)
    [0.2, 0.9]
    >>> _scores_from([{"index": 0, "score": 3.5}], 2)
    [3.5, -inf]
    """
    items = payload.get("results", payload.get("data")) if isinstance(payload, dict) else payload
    if not isinstance(items, list):
        raise RemoteError("rerank-failed", "reranker reply has no list of results")
    scores = [float("-inf")] * count
    for item in items:
        try:
            index = int(item["index"])
            value = float(item["relevance_score"] if "relevance_score" in item else item["score"])
        except (KeyError, TypeError, ValueError):
            raise RemoteError("rerank-failed", f"reranker result not understood: {str(item)[:100]}") from None
        if 0 <= index < count:
            scores[index] = value
    return scores
