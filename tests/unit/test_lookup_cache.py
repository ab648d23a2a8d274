"""The per-collection caches of labels and edge-text vectors that answering services keep."""

from __future__ import annotations

import asyncio

import numpy as np

from tracegraph.base.retrieval.lookup_cache import LabelCache, VectorCache

A, B = ("alice", "docs"), ("bob", "docs")


class Fetcher:
    def __init__(self, known: dict[str, str]) -> None:
        self.known, self.asked = known, []

    async def __call__(self, iris: list[str]) -> dict[str, str]:
        self.asked.append(list(iris))
        return {i: self.known[i] for i in iris if i in self.known}


async def test_labels_are_fetched_once_per_collection_including_the_absent_ones():
    cache, fetch = LabelCache(), Fetcher({"urn:x": "X"})
    assert await cache.labels(A, ["urn:x", "urn:y", "urn:x"], fetch) == {"urn:x": "X"}
    assert await cache.labels(A, ["urn:x", "urn:y"], fetch) == {"urn:x": "X"}
    assert fetch.asked == [["urn:x", "urn:y"]], "a label, or its absence, is not asked for again"
    await cache.labels(B, ["urn:x"], fetch)
    assert fetch.asked[-1] == ["urn:x"], "another user's collection has its own labels"


async def test_a_graph_update_drops_the_labels_of_the_nodes_it_touched():
    cache, fetch = LabelCache(), Fetcher({"urn:x": "X", "urn:y": "Y"})
    await cache.labels(A, ["urn:x", "urn:y"], fetch)
    fetch.known["urn:x"] = "X renamed"
    cache.invalidate(A, ["urn:x"])
    assert await cache.labels(A, ["urn:x", "urn:y"], fetch) == {"urn:x": "X renamed", "urn:y": "Y"}
    assert fetch.asked[-1] == ["urn:x"]


async def test_labels_older_than_max_age_are_fetched_again_and_entries_stay_bounded():
    cache, fetch = LabelCache(max_age=0.0, max_entries=3), Fetcher({})
    await cache.labels(A, ["urn:1", "urn:2", "urn:3", "urn:4"], fetch)
    assert len(cache._labels) == 3
    await asyncio.sleep(0.01)
    await cache.labels(A, ["urn:4"], fetch)
    assert fetch.asked[-1] == ["urn:4"]


class Embedder:
    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    async def __call__(self, texts: list[str]) -> list[list[float]]:
        self.asked.append(list(texts))
        return [[float(len(t)), 1.0, 0.0, 0.0] for t in texts]


async def test_vectors_are_computed_once_per_text_and_returned_in_order():
    cache, embed = VectorCache(), Embedder()
    first = await cache.embed(A, ["ab", "abc", "ab"], embed)
    assert [v[0] for v in first] == [2.0, 3.0, 2.0] and first[0].dtype == np.float32
    again = await cache.embed(A, ["abcd", "abc"], embed)
    assert [v[0] for v in again] == [4.0, 3.0]
    assert embed.asked == [["ab", "abc"], ["abcd"]]
    assert (cache.hits, cache.misses) == (1, 3)


async def test_vectors_stay_within_their_byte_bound_and_a_dropped_collection_is_forgotten():
    cache, embed = VectorCache(max_bytes=16 * 3), Embedder()  # three 4-float vectors
    await cache.embed(A, ["a", "bb", "ccc", "dddd"], embed)
    assert cache.bytes == 48
    await cache.embed(A, ["a"], embed)
    assert embed.asked[-1] == ["a"], "the least recently used vector was evicted"
    cache.drop(A)
    assert cache.bytes == 0
    assert len(await cache.embed(A, ["a"], embed)) == 1


async def test_a_zero_byte_cache_keeps_nothing_but_still_answers():
    cache, embed = VectorCache(max_bytes=0), Embedder()
    assert len(await cache.embed(A, ["a"], embed)) == 1
    await cache.embed(A, ["a"], embed)
    assert embed.asked == [["a"], ["a"]] and cache.bytes == 0


async def test_an_eviction_while_computing_loses_no_vector_already_found():
    cache, embed = VectorCache(max_bytes=16), Embedder()  # room for one vector
    await cache.embed(A, ["kept"], embed)
    gate = asyncio.Event()

    async def slow(texts: list[str]) -> list[list[float]]:
        await gate.wait()
        return await embed(texts)

    waiting = asyncio.create_task(cache.embed(A, ["kept", "new"], slow))
    await asyncio.sleep(0)
    await cache.embed(A, ["other"], embed)  # evicts "kept" meanwhile
    gate.set()
    assert [v[0] for v in await waiting] == [4.0, 3.0]
