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
        # The vectors already held are taken before the model is awaited: meanwhile another request may
        # evict them, and this batch's own new vectors may push older ones out too.
        held = {t: self._vectors[t] for t in dict.fromkeys(texts) if t in self._vectors}
        missing = [t for t in dict.fromkeys(texts) if t not in held]
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        fresh = dict(zip(missing, await self.inner.embed(missing), strict=True)) if missing else {}
        for text in held:
            if text in self._vectors:
                self._vectors.move_to_end(text)
        for text, vector in fresh.items():
            self._remember(text, np.asarray(vector, dtype=np.float32))
        return [fresh[t] if t in fresh else held[t].astype(np.float64).tolist() for t in texts]

    def _remember(self, text: str, vector: np.ndarray) -> None:
        self._vectors[text] = vector
        if len(self._vectors) > self.capacity:
            self._vectors.popitem(last=False)

    async def aclose(self) -> None:
        await self.inner.aclose()
