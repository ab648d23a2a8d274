"""The embedding cache computes each text once, keeps input order, and forgets the oldest first."""

import asyncio

from tracegraph.base.llm.embed_cache import CachedEmbedder


class CountingEmbedder:
    name = "counting"
    dimension = 2

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def embed(self, texts):
        self.calls.append(list(texts))
        return [[float(len(t)), 1.0] for t in texts]

    async def aclose(self) -> None:
        pass


async def test_repeated_texts_are_embedded_once_and_order_is_kept():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, capacity=3)
    assert await cached.embed(["a", "bb", "a"]) == [[1.0, 1.0], [2.0, 1.0], [1.0, 1.0]]
    assert await cached.embed(["bb", "ccc"]) == [[2.0, 1.0], [3.0, 1.0]]
    assert inner.calls == [["a", "bb"], ["ccc"]]
    assert (cached.hits, cached.misses) == (2, 3)


async def test_least_recently_used_text_is_forgotten_first():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, capacity=2)
    await cached.embed(["a", "b"])
    await cached.embed(["a"])          # a is now the most recent
    await cached.embed(["c"])          # evicts b
    await cached.embed(["a", "b"])
    assert inner.calls[-1] == ["b"]


class GatedEmbedder(CountingEmbedder):
    """Holds the first call until `gate` opens, so another request can run meanwhile."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()

    async def embed(self, texts):
        if not self.calls:
            self.calls.append(list(texts))
            await self.gate.wait()
            return [[float(len(t)), 1.0] for t in texts]
        return await super().embed(texts)


async def test_a_held_vector_evicted_while_the_model_is_awaited_is_still_answered():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, capacity=2)
    await cached.embed(["a"])
    gated = GatedEmbedder()
    cached.inner = gated
    first = asyncio.create_task(cached.embed(["a", "bbbb"]))  # "a" held, "bbbb" sent to the (slow) model
    await asyncio.sleep(0)
    assert await cached.embed(["cc", "ddd"]) == [[2.0, 1.0], [3.0, 1.0]]  # evicts "a" meanwhile
    gated.gate.set()
    assert await first == [[1.0, 1.0], [4.0, 1.0]]


async def test_a_batch_whose_new_vectors_overflow_the_cache_still_answers_its_held_ones():
    cached = CachedEmbedder(CountingEmbedder(), capacity=1)
    await cached.embed(["a"])
    assert await cached.embed(["bb", "a", "ccc"]) == [[2.0, 1.0], [1.0, 1.0], [3.0, 1.0]]
