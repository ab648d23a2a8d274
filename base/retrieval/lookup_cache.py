"""What an answering service looks up again and again, kept per collection: entity labels and the
vectors of edge texts. A GraphRAG question reads about a thousand edges; without these caches
every question re-fetches their labels and re-embeds their sentences (~8 MB of vectors over the
bus at 1M edges), though most of them were read by the question before.

Labels follow the graph: a graph update drops the labels of the nodes it touched. Vectors are
keyed by the embedded text itself, so a changed label simply becomes a different text; nothing
needs dropping when the graph changes. Copies of a processor share one subscription to graph
updates, so a copy may miss an update: labels are also dropped after `max_age` seconds.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Sequence

import numpy as np

Scope = tuple[str, str]  # (user, collection)
NO_LABEL = ""  # cached too: a term without rdfs:label is not looked up again


class LabelCache:
    """rdfs:label per IRI and collection, LRU-bounded in entries."""

    def __init__(self, max_entries: int = 200_000, max_age: float = 120.0) -> None:
        self.max_entries, self.max_age = max_entries, max_age
        self._labels: OrderedDict[tuple[Scope, str], tuple[str, float]] = OrderedDict()
        self.hits = self.misses = 0

    async def labels(self, scope: Scope, iris: Sequence[str],
                     fetch: Callable[[list[str]], Awaitable[dict[str, str]]]) -> dict[str, str]:
        """The labels of `iris` that have one; only those not cached are fetched."""
        now = time.monotonic()
        found: dict[str, str] = {}
        missing: list[str] = []
        wanted = list(dict.fromkeys(iris))
        for value in wanted:
            cached = self._labels.get((scope, value))
            if cached is not None and now - cached[1] <= self.max_age:
                self._labels.move_to_end((scope, value))
                if cached[0] != NO_LABEL:
                    found[value] = cached[0]
            else:
                missing.append(value)
        self.hits += len(wanted) - len(missing)
        self.misses += len(missing)
        if missing:
            fetched = await fetch(missing)
            for value in missing:
                self._labels[(scope, value)] = (fetched.get(value, NO_LABEL), now)
            found.update({value: label for value, label in fetched.items() if label})
            while len(self._labels) > self.max_entries:
                self._labels.popitem(last=False)
        return found

    def invalidate(self, scope: Scope, nodes: Iterable[str]) -> None:
        for node in nodes:
            self._labels.pop((scope, node), None)


class VectorCache:
    """Vectors of embedded texts per collection, as float32 rows, LRU-bounded in bytes."""

    def __init__(self, max_bytes: int = 64 * 2**20) -> None:
        self.max_bytes = max_bytes
        self._vectors: OrderedDict[tuple[Scope, str], np.ndarray] = OrderedDict()
        self._bytes = 0
        self.hits = self.misses = 0

    async def embed(self, scope: Scope, texts: Sequence[str],
                    compute: Callable[[list[str]], Awaitable[Sequence[Sequence[float]]]]) -> list[np.ndarray]:
        """One vector per text, in order; only the texts not cached are computed, each once."""
        have: dict[str, np.ndarray] = {}
        missing: list[str] = []
        for text in dict.fromkeys(texts):
            vector = self._vectors.get((scope, text))
            if vector is None:
                missing.append(text)
            else:
                self._vectors.move_to_end((scope, text))
                have[text] = vector
        self.hits += len(have)
        self.misses += len(missing)
        if missing:  # what was found is held in `have`: an eviction while computing cannot lose it
            computed = [np.asarray(v, dtype=np.float32) for v in await compute(missing)]
            for text, vector in zip(missing, computed, strict=True):
                have[text] = vector
                self._keep((scope, text), vector)
        return [have[text] for text in texts]

    def _keep(self, key: tuple[Scope, str], vector: np.ndarray) -> None:
        if vector.nbytes > self.max_bytes:
            return
        old = self._vectors.pop(key, None)
        self._bytes += vector.nbytes - (old.nbytes if old is not None else 0)
        self._vectors[key] = vector
        while self._bytes > self.max_bytes:
            _, dropped = self._vectors.popitem(last=False)
            self._bytes -= dropped.nbytes

    def drop(self, scope: Scope) -> None:
        """Forget a collection's vectors (it was deleted)."""
        for key in [k for k in self._vectors if k[0] == scope]:
            self._bytes -= self._vectors.pop(key).nbytes

    @property
    def bytes(self) -> int:
        return self._bytes
