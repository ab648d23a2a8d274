"""A bounded memory of recent embeddings: the same texts (edge sentences, entity labels) come back
query after query, and a model's vector for a text never changes, so each is computed once."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from tracegraph.base.llm.embeddings import Embedder


class CachedEmbedder:
    """Wraps an Embedder; embeds only the texts it has not seen among the last `capacity`.

    Vectors are kept as float32 (1.5 KiB each at 384 dimensions), so the default capacity
    costs about 30 MiB when full.
    """

    def __init__(self, inner: Embedder, capacity: int = 20_000) -> None:
        self.inner = inner
        self.name = inner.name
        self.capacity = capacity
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self.hits = self.misses = 0

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        fresh = dict(zip(missing, await self.inner.embed(missing), strict=True)) if missing else {}
        out = []
        for text in texts:
            if text in fresh:
                out.append(fresh[text])
                self._remember(text, np.asarray(fresh[text], dtype=np.float32))
            else:
                vector = self._vectors[text]
                self._vectors.move_to_end(text)
                out.append(vector.astype(np.float64).tolist())
        return out

    def _remember(self, text: str, vector: np.ndarray) -> None:
        self._vectors[text] = vector
        if len(self._vectors) > self.capacity:
            self._vectors.popitem(last=False)

    async def aclose(self) -> None:
        await self.inner.aclose()
