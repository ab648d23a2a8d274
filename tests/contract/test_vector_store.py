"""The vector store contract, written once and run on every engine: the embedded ANN store (its exact and
its HNSW search path), Qdrant local (always) and Qdrant server (TG_QDRANT_URL)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable

import numpy as np
import pytest

from tracegraph.base.errors import ConfigError, TransientError
from tracegraph.base.stores.ann import AnnVectorStore
from tracegraph.base.stores.protocol import CollectionRef, VectorItem, VectorStore
from tracegraph.base.stores.qdrant import QdrantVectorStore
from support.names import unique

pytestmark = pytest.mark.timeout(120)

# Read now: the autouse clean_environ fixture removes TG_* variables before each test.
QDRANT_URL = os.environ.get("TG_QDRANT_URL")
QDRANT_API_KEY = os.environ.get("TG_QDRANT_API_KEY")

ENGINES = [
    "ann",
    "ann-hnsw",  # the same store with every search going through the HNSW index, however small
    "qdrant-local",
    pytest.param("qdrant-server", marks=pytest.mark.skipif(not QDRANT_URL, reason="TG_QDRANT_URL not set")),
]

E1 = "http://example.org/entity/1"
E2 = "http://example.org/entity/2"
E3 = "http://example.org/entity/3"


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def store(engine: str, tmp_path) -> AsyncIterator[VectorStore]:
    if engine == "ann":
        vectors = AnnVectorStore(tmp_path / "ann")
    elif engine == "ann-hnsw":
        vectors = AnnVectorStore(tmp_path / "ann", exact_below=0)
    elif engine == "qdrant-local":
        vectors = QdrantVectorStore(path=tmp_path / "qdrant")
    else:
        vectors = QdrantVectorStore(url=QDRANT_URL, api_key=QDRANT_API_KEY)
    yield vectors
    await vectors.aclose()


@pytest.fixture
async def new_ref(store: VectorStore) -> AsyncIterator[Callable[..., CollectionRef]]:
    """Collections under users no other test or run uses (a shared server keeps them), dropped afterwards."""
    made: list[CollectionRef] = []

    def factory(collection: str = "docs", user: str | None = None) -> CollectionRef:
        ref = CollectionRef(user or unique("u"), collection)
        made.append(ref)
        return ref

    yield factory
    for ref in made:
        await store.drop(ref)


async def test_search_gives_nearest_first_with_cosine_scores(store, new_ref):
    ref = new_ref()
    vectors = {E1: [1.0, 0.0, 0.0], E2: [0.8, 0.6, 0.0], E3: [0.0, 1.0, 0.0],
               "http://example.org/entity/4": [-2.0, 0.0, 0.0]}
    await store.upsert(ref, "entity", [VectorItem(id, v) for id, v in vectors.items()])
    hits = await store.search(ref, "entity", [3.0, 0.0, 0.0], limit=10)
    assert [h.id for h in hits] == [E1, E2, E3, "http://example.org/entity/4"]
    assert [h.score for h in hits] == pytest.approx([1.0, 0.8, 0.0, -1.0], abs=1e-5)
    assert all(-1.0 - 1e-6 <= h.score <= 1.0 + 1e-6 for h in hits)
    top = await store.search(ref, "entity", [0.0, 2.0, 0.0], limit=2)
    assert [h.id for h in top] == [E3, E2]


async def test_payload_round_trips(store, new_ref):
    ref = new_ref()
    odd_id = "http://example.org/ünïcode/entity#x?y=1&z=2"
    payload = {"document": "urn:doc:1", "label": "Zürich ☃", "n": 3, "x": 0.25, "ok": True,
               "tags": ["a", "b"], "nested": {"k": [1, 2]}}
    await store.upsert(ref, "chunk", [VectorItem(odd_id, [0.1, 0.2, 0.3, 0.4], payload)])
    [hit] = await store.search(ref, "chunk", [0.1, 0.2, 0.3, 0.4])
    assert hit.id == odd_id
    assert dict(hit.payload) == payload


async def test_upserting_the_same_id_again_overwrites(store, new_ref):
    ref = new_ref()
    await store.upsert(ref, "entity", [VectorItem(E1, [1.0, 0.0], {"v": 1}), VectorItem(E2, [0.0, 1.0], {"v": 1})])
    await store.upsert(ref, "entity", [VectorItem(E1, [0.0, 1.0], {"v": 2})])
    await store.upsert(ref, "entity", [VectorItem(E1, [0.0, 1.0], {"v": 2})])  # idempotent
    hits = await store.search(ref, "entity", [0.0, 1.0], limit=10)
    assert sorted((h.id, h.payload["v"]) for h in hits) == [(E1, 2), (E2, 1)]
    assert all(h.score == pytest.approx(1.0, abs=1e-5) for h in hits)


async def test_the_last_of_duplicate_ids_in_one_batch_wins(store, new_ref):
    ref = new_ref()
    await store.upsert(ref, "chunk", [VectorItem(E1, [1.0, 0.0], {"v": 1}), VectorItem(E1, [0.0, 1.0], {"v": 2})])
    [hit] = await store.search(ref, "chunk", [0.0, 1.0])
    assert (hit.id, hit.payload["v"], round(hit.score, 4)) == (E1, 2, 1.0)


async def test_entity_and_chunk_vectors_are_kept_apart(store, new_ref):
    ref = new_ref()
    await store.upsert(ref, "entity", [VectorItem(E1, [1.0, 0.0, 0.0])])
    assert await store.search(ref, "chunk", [1.0, 0.0, 0.0]) == []
    await store.upsert(ref, "chunk", [VectorItem(E2, [1.0, 0.0, 0.0, 0.0, 0.0])])  # each kind has its own size
    assert [h.id for h in await store.search(ref, "entity", [1.0, 0.0, 0.0])] == [E1]
    assert [h.id for h in await store.search(ref, "chunk", [1.0, 0.0, 0.0, 0.0, 0.0])] == [E2]
    assert await store.delete(ref, "chunk", [E1]) == 0
    assert [h.id for h in await store.search(ref, "entity", [1.0, 0.0, 0.0])] == [E1]


async def test_users_and_collections_are_isolated(store, new_ref):
    alice = unique("alice")
    refs = [new_ref("docs", alice), new_ref("docs"), new_ref("other", alice),
            # names that would run together if joined with "__" alone
            new_ref("c", f"{alice}__b"), new_ref("b__c", alice),
            # names that differ only in case (one folder on a case-insensitive filesystem)
            new_ref("Docs", alice)]
    for n, ref in enumerate(refs):
        await store.upsert(ref, "chunk", [VectorItem(f"urn:v:{n}", [1.0, 0.5], {"owner": str(ref)})])
    for n, ref in enumerate(refs):
        hits = await store.search(ref, "chunk", [1.0, 0.5], limit=10)
        assert [(h.id, h.payload["owner"]) for h in hits] == [(f"urn:v:{n}", str(ref))]


async def test_delete_by_ids_counts_what_existed(store, new_ref):
    ref = new_ref()
    await store.upsert(ref, "entity", [VectorItem(E1, [1.0, 0.0]), VectorItem(E2, [0.9, 0.1]),
                                       VectorItem(E3, [0.0, 1.0])])
    assert await store.delete(ref, "entity", [E1, E2, E2, "urn:never-stored"]) == 2
    assert [h.id for h in await store.search(ref, "entity", [1.0, 0.0], limit=10)] == [E3]
    assert await store.delete(ref, "entity", [E1]) == 0
    assert await store.delete(ref, "entity", []) == 0
    assert await store.delete(new_ref(), "entity", [E3]) == 0  # unknown collection


async def test_delete_where_removes_vectors_by_payload_value(store, new_ref):
    ref = new_ref()
    items = [VectorItem(f"urn:chunk:{doc}:{i}", [1.0, float(i)], {"document": f"urn:doc:{doc}", "lang": lang})
             for doc, count, lang in (("a", 3, "en"), ("b", 2, "de")) for i in range(count)]
    await store.upsert(ref, "chunk", items)
    assert await store.delete_where(ref, "chunk", "document", "urn:doc:a") == 3
    left = await store.search(ref, "chunk", [1.0, 0.0], limit=10)
    assert sorted(h.id for h in left) == ["urn:chunk:b:0", "urn:chunk:b:1"]
    assert await store.delete_where(ref, "chunk", "document", "urn:doc:a") == 0
    assert await store.delete_where(ref, "chunk", "lang", "de") == 2  # any payload key
    assert await store.search(ref, "chunk", [1.0, 0.0]) == []
    assert await store.delete_where(new_ref(), "chunk", "document", "urn:doc:a") == 0  # unknown collection


async def test_drop_removes_both_kinds_of_one_collection_only(store, new_ref):
    ref = new_ref()
    kept = new_ref("kept", ref.user)
    for r in (ref, kept):
        await store.upsert(r, "entity", [VectorItem(E1, [1.0, 0.0])])
        await store.upsert(r, "chunk", [VectorItem(E2, [0.0, 1.0, 0.0])])
    await store.drop(ref)
    assert await store.search(ref, "entity", [1.0, 0.0]) == []
    assert await store.search(ref, "chunk", [0.0, 1.0, 0.0]) == []
    assert [h.id for h in await store.search(kept, "entity", [1.0, 0.0])] == [E1]
    assert [h.id for h in await store.search(kept, "chunk", [0.0, 1.0, 0.0])] == [E2]
    await store.drop(ref)  # dropping again is harmless
    await store.upsert(ref, "entity", [VectorItem(E3, [0.0, 0.0, 0.0, 1.0])])  # recreated, at a new size
    assert [h.id for h in await store.search(ref, "entity", [0.0, 0.0, 0.0, 1.0])] == [E3]


async def test_search_of_an_unknown_collection_gives_nothing(store, new_ref):
    ref = new_ref()
    assert await store.search(ref, "entity", [1.0, 0.0]) == []
    assert await store.search(ref, "chunk", [1.0, 0.0]) == []
    await store.drop(ref)  # dropping what never existed is harmless


async def test_another_vector_size_is_a_clear_error(store, new_ref):
    ref = new_ref()
    await store.upsert(ref, "chunk", [VectorItem(E1, [1.0, 0.0, 0.0])])
    with pytest.raises(ConfigError, match=r"holds 3-dimensional vectors, the batch has 4"):
        await store.upsert(ref, "chunk", [VectorItem(E2, [1.0, 0.0, 0.0, 0.0])])
    with pytest.raises(ConfigError, match=r"holds 3-dimensional vectors, the query vector has 2"):
        await store.search(ref, "chunk", [1.0, 0.0])
    with pytest.raises(ConfigError, match=r"mixes vector sizes \[2, 3\]"):
        await store.upsert(ref, "chunk", [VectorItem(E2, [1.0, 0.0]), VectorItem(E3, [1.0, 0.0, 0.0])])
    assert [h.id for h in await store.search(ref, "chunk", [1.0, 0.0, 0.0], limit=10)] == [E1]


async def test_reserved_payload_key_is_refused(store, new_ref):
    with pytest.raises(ConfigError, match="reserved"):
        await store.upsert(new_ref(), "chunk", [VectorItem(E1, [1.0], {"_tg_id": "x"})])


async def test_a_batch_of_1000_vectors(store, new_ref):
    ref = new_ref()
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(1000, 32)).astype(np.float32)
    await store.upsert(ref, "chunk", [VectorItem(f"urn:chunk:{i}", row, {"document": f"urn:doc:{i % 10}"})
                                      for i, row in enumerate(matrix)])
    stored = await store.get(ref, "chunk", [f"urn:chunk:{i}" for i in range(1000)])  # every one kept, exactly
    assert [(h.id, h.payload["document"]) for h in stored] == [(f"urn:chunk:{i}", f"urn:doc:{i % 10}")
                                                                 for i in range(1000)]
    found = 0  # an HNSW search is approximate: most probes, not all, must find themselves first
    for i in range(0, 1000, 10):
        [best, *_] = await store.search(ref, "chunk", matrix[i].tolist(), limit=3)
        if best.id == f"urn:chunk:{i}":
            found += 1
            assert (best.payload["document"], best.score) == (f"urn:doc:{i % 10}", pytest.approx(1.0, abs=1e-4))
    assert found / 100 >= RECALL
    assert await store.delete_where(ref, "chunk", "document", "urn:doc:3") == 100


async def test_concurrent_first_upserts_create_the_collection_once(store, new_ref):
    ref = new_ref()
    await asyncio.gather(*(store.upsert(ref, "entity", [VectorItem(f"urn:e:{i}", [1.0, float(i)])])
                           for i in range(8)))
    assert len(await store.search(ref, "entity", [1.0, 0.0], limit=20)) == 8


# Local mode only: persistence, and the folder lock.

async def test_local_vectors_survive_reopening(tmp_path):
    ref = CollectionRef("alice", "docs")
    async with QdrantVectorStore(path=tmp_path) as vectors:
        await vectors.upsert(ref, "chunk", [VectorItem(E1, [0.6, 0.8], {"document": "urn:doc:1"})])
    async with QdrantVectorStore(path=tmp_path) as vectors:
        [hit] = await vectors.search(ref, "chunk", [0.6, 0.8])
        assert (hit.id, dict(hit.payload)) == (E1, {"document": "urn:doc:1"})
        with pytest.raises(ConfigError, match="holds 2-dimensional"):  # the size is remembered too
            await vectors.upsert(ref, "chunk", [VectorItem(E2, [1.0, 0.0, 0.0])])


async def test_local_folder_open_in_another_process_is_a_clear_error(tmp_path):
    child = ("import asyncio, sys\n"
             "from tracegraph.base.stores.qdrant import QdrantVectorStore\n"
             "async def main():\n"
             "    try:\n"
             "        await QdrantVectorStore(path=sys.argv[1]).open()\n"
             "    except Exception as exc:\n"
             "        print(type(exc).__name__, exc)\n"
             "asyncio.run(main())\n")
    async with QdrantVectorStore(path=tmp_path) as vectors:
        await vectors.upsert(CollectionRef("alice", "docs"), "chunk", [VectorItem(E1, [1.0, 0.0])])
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", child, str(tmp_path),
                                                    stdout=asyncio.subprocess.PIPE)
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert out.decode().startswith("ConfigError Qdrant local folder"), out
    assert "locked by another process" in out.decode()
    assert "url=" in out.decode()


async def test_local_folder_open_twice_in_one_process_is_a_clear_error(tmp_path):
    async with QdrantVectorStore(path=tmp_path):
        with pytest.raises(ConfigError, match="locked by another process or store"):
            await QdrantVectorStore(path=tmp_path).open()
    async with QdrantVectorStore(path=tmp_path):  # released on close
        pass


async def test_closed_store_refuses_further_calls(tmp_path):
    vectors = QdrantVectorStore(path=tmp_path)
    await vectors.aclose()
    await vectors.aclose()
    with pytest.raises(ConfigError, match="closed"):
        await vectors.search(CollectionRef("alice", "docs"), "chunk", [1.0])


def test_exactly_one_of_path_or_url():
    with pytest.raises(ConfigError, match="exactly one"):
        QdrantVectorStore()
    with pytest.raises(ConfigError, match="exactly one"):
        QdrantVectorStore(path="x", url="http://127.0.0.1:6333")


async def test_unreachable_server_is_a_transient_error():
    import socket
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    vectors = QdrantVectorStore(url=f"http://127.0.0.1:{port}", timeout=2)
    try:
        with pytest.raises(TransientError, match=f"cannot reach Qdrant at http://127.0.0.1:{port}"):
            await vectors.search(CollectionRef("alice", "docs"), "chunk", [1.0])
    finally:
        await vectors.aclose()



async def test_get_returns_stored_payloads_in_the_order_asked(store, new_ref):
    ref = new_ref()
    await store.upsert(ref, "chunk", [VectorItem("urn:chunk:a", [1.0, 0.0], {"text": "alpha", "document": "d1"}),
                                      VectorItem("urn:chunk:b", [0.0, 1.0], {"text": "beta", "document": "d2"})])
    hits = await store.get(ref, "chunk", ["urn:chunk:b", "urn:chunk:missing", "urn:chunk:a"])
    assert [(h.id, h.payload["text"]) for h in hits] == [("urn:chunk:b", "beta"), ("urn:chunk:a", "alpha")]
    assert await store.get(ref, "entity", ["urn:chunk:a"]) == []
    assert await store.get(new_ref("empty"), "chunk", ["urn:chunk:a"]) == []


async def test_get_brings_the_stored_vectors_when_asked(store, new_ref):
    """What the RAPTOR tree reads instead of embedding every chunk a second time."""
    ref = new_ref()
    await store.upsert(ref, "chunk", [VectorItem("urn:chunk:a", [0.6, 0.8], {"text": "alpha"}),
                                      VectorItem("urn:chunk:b", [0.0, 1.0], {"text": "beta"})])
    hits = await store.get(ref, "chunk", ["urn:chunk:a", "urn:chunk:b"], with_vectors=True)
    assert [h.id for h in hits] == ["urn:chunk:a", "urn:chunk:b"]
    assert np.allclose([list(h.vector) for h in hits], [[0.6, 0.8], [0.0, 1.0]], atol=1e-6)
    assert all(h.vector is None for h in await store.get(ref, "chunk", ["urn:chunk:a"]))

# The ANN store only: persistence, recovery after SIGKILL, its HNSW recall, and the folder lock.

def clustered(count: int, dim: int, seed: int, clusters: int = 40) -> np.ndarray:
    """Unit vectors drawn around a few centres (the same for every seed): neighbours that matter, unlike uniform noise."""
    centres = np.random.default_rng(0).normal(size=(clusters, dim))
    rng = np.random.default_rng(seed)
    points = centres[rng.integers(0, clusters, size=count)] + 0.35 * rng.normal(size=(count, dim))
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


# Durability is checked exactly (exhaustive search, SQLite lookups); HNSW recall separately, against a stated
# tolerance: an approximate search may miss a vector now and then, and a test that needs it never to is flaky.
EXHAUSTIVE = 1_000_000_000  # an `exact_below` no test collection reaches: every search scans the whole index
RECALL = 0.95  # the share of probes that must find themselves among an HNSW search's first RECALL_K hits
RECALL_K = 10


async def self_recall(vectors: VectorStore, ref: CollectionRef, kind: str,
                      probes: dict[str, np.ndarray], k: int = RECALL_K) -> float:
    """The share of probes (id -> its own vector) whose id is among the first k hits of a search for it."""
    found = 0
    for ident, vector in probes.items():
        found += ident in {h.id for h in await vectors.search(ref, kind, vector, limit=k)}
    return found / len(probes)


async def test_ann_vectors_survive_reopening(tmp_path):
    ref = CollectionRef("alice", "docs")
    async with AnnVectorStore(tmp_path) as vectors:
        await vectors.upsert(ref, "chunk", [VectorItem(E1, [0.6, 0.8], {"document": "urn:doc:1", "text": "é" * 3000}),
                                            VectorItem(E2, [0.8, 0.6], {"document": "urn:doc:2"})])
        assert await vectors.delete(ref, "chunk", [E2]) == 1
    assert list((tmp_path / "index").glob("*.usearch")), "closing saves the index"
    async with AnnVectorStore(tmp_path, exact_below=0) as vectors:
        [hit] = await vectors.search(ref, "chunk", [0.6, 0.8])
        assert (hit.id, dict(hit.payload)) == (E1, {"document": "urn:doc:1", "text": "é" * 3000})
        assert hit.score == pytest.approx(1.0, abs=1e-5)
        assert [h.id for h in await vectors.get(ref, "chunk", [E2, E1])] == [E1]
        with pytest.raises(ConfigError, match="holds 2-dimensional"):  # the size is remembered too
            await vectors.upsert(ref, "chunk", [VectorItem(E2, [1.0, 0.0, 0.0])])


async def test_ann_index_file_lost_or_damaged_is_rebuilt_from_sqlite(tmp_path):
    ref = CollectionRef("alice", "docs")
    matrix = clustered(300, 8, seed=3)
    async with AnnVectorStore(tmp_path) as vectors:
        await vectors.upsert(ref, "entity", [VectorItem(f"urn:e:{i}", row) for i, row in enumerate(matrix)])
    [file] = (tmp_path / "index").glob("*.usearch")
    for damage in (lambda: file.write_bytes(b"not an index"), file.unlink):
        damage()
        async with AnnVectorStore(tmp_path, exact_below=EXHAUSTIVE) as vectors:  # the rebuilt index holds them all
            everything = await vectors.search(ref, "entity", matrix[0], limit=1000)
            assert sorted(h.id for h in everything) == sorted(f"urn:e:{i}" for i in range(300))
            for i in (0, 150, 299):
                [best] = await vectors.search(ref, "entity", matrix[i], limit=1)
                assert best.id == f"urn:e:{i}"
        async with AnnVectorStore(tmp_path, exact_below=0) as vectors:  # and its HNSW graph finds them
            probes = {f"urn:e:{i}": matrix[i] for i in range(300)}
            assert await self_recall(vectors, ref, "entity", probes) >= RECALL


async def test_ann_delete_then_upsert_again(tmp_path):
    ref = CollectionRef("alice", "docs")
    async with AnnVectorStore(tmp_path, exact_below=0) as vectors:
        await vectors.upsert(ref, "entity", [VectorItem(E1, [1.0, 0.0, 0.0], {"v": 1}),
                                             VectorItem(E2, [0.0, 1.0, 0.0], {"v": 1})])
        assert await vectors.delete(ref, "entity", [E1]) == 1
        [only] = await vectors.search(ref, "entity", [1.0, 0.0, 0.0], limit=1)
        assert only.id == E2
        await vectors.upsert(ref, "entity", [VectorItem(E1, [0.0, 0.0, 1.0], {"v": 2})])
        [best] = await vectors.search(ref, "entity", [0.0, 0.0, 1.0], limit=1)
        assert (best.id, best.payload, round(best.score, 4)) == (E1, {"v": 2}, 1.0)
        for _ in range(3):  # each overwrite retires the previous version from the index
            await vectors.upsert(ref, "entity", [VectorItem(E1, [0.0, 0.0, 1.0], {"v": 3})])
        hits = await vectors.search(ref, "entity", [0.0, 0.0, 1.0], limit=10)
        assert [(h.id, h.payload["v"]) for h in hits] == [(E1, 3), (E2, 1)]
    async with AnnVectorStore(tmp_path, exact_below=0) as vectors:
        hits = await vectors.search(ref, "entity", [0.0, 0.0, 1.0], limit=10)
        assert [(h.id, h.payload["v"]) for h in hits] == [(E1, 3), (E2, 1)]


async def test_ann_delete_where_by_document_or_nested_key_persists(tmp_path):
    ref = CollectionRef("alice", "docs")
    items = [VectorItem(f"urn:chunk:{doc}:{i}", [1.0, float(i), 0.5], {"document": f"urn:doc:{doc}", "meta": {"lang": lang}})
             for doc, lang in (("a", "en"), ("b", "de"), ("c", "en")) for i in range(50)]
    async with AnnVectorStore(tmp_path, exact_below=0) as vectors:
        await vectors.upsert(ref, "chunk", items)
        assert await vectors.delete_where(ref, "chunk", "document", "urn:doc:a") == 50
        assert await vectors.delete_where(ref, "chunk", "meta.lang", "de") == 50
        assert await vectors.delete_where(ref, "chunk", "meta.lang", "fr") == 0
        with pytest.raises(ConfigError, match="payload key"):
            await vectors.delete_where(ref, "chunk", "meta..lang", "de")
    async with AnnVectorStore(tmp_path, exact_below=EXHAUSTIVE) as vectors:
        left = await vectors.search(ref, "chunk", [1.0, 0.0, 0.5], limit=200)
        assert sorted(h.id for h in left) == sorted(f"urn:chunk:c:{i}" for i in range(50))


async def test_ann_search_recall_against_exact(tmp_path):
    ref = CollectionRef("alice", "docs")
    data, queries = clustered(5_000, 48, seed=11), clustered(100, 48, seed=12)
    exact = np.argsort(-(queries @ data.T), axis=1)[:, :10]
    async with AnnVectorStore(tmp_path, exact_below=0) as vectors:
        for start in range(0, len(data), 1_000):
            await vectors.upsert(ref, "chunk", [VectorItem(f"urn:c:{i}", data[i])
                                                for i in range(start, start + 1_000)])
        found = 0
        for query, truth in zip(queries, exact):
            hits = await vectors.search(ref, "chunk", query, limit=10)
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
            found += len({h.id for h in hits} & {f"urn:c:{i}" for i in truth})
    assert found / exact.size >= 0.95


KILLED_CHILD = """
import asyncio, sys
import numpy as np
from tracegraph.base.stores.ann import AnnVectorStore
from tracegraph.base.stores.protocol import CollectionRef, VectorItem

async def main(path):
    ref = CollectionRef("alice", "docs")
    rng = np.random.default_rng(5)
    matrix = rng.normal(size=(3000, 16)).astype(np.float32)
    vectors = AnnVectorStore(path, save_every=1000)  # saved once midway: recovery loads it and catches up
    for start in range(0, 3000, 500):
        await vectors.upsert(ref, "chunk", [VectorItem(f"urn:c:{i}", matrix[i], {"document": f"urn:doc:{i % 7}"})
                                            for i in range(start, start + 500)])
    await vectors.delete(ref, "chunk", [f"urn:c:{i}" for i in range(0, 3000, 10)])
    await vectors.delete_where(ref, "chunk", "document", "urn:doc:3")
    await vectors.upsert(ref, "chunk", [VectorItem(f"urn:c:{i}", -matrix[i], {"document": "urn:doc:new"})
                                        for i in range(1, 3000, 10)])
    print("stored", flush=True)
    await asyncio.sleep(600)  # killed here, never closed

asyncio.run(main(sys.argv[1]))
"""


async def test_ann_store_recovers_everything_after_sigkill(tmp_path):
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", KILLED_CHILD, str(tmp_path),
                                                stdout=asyncio.subprocess.PIPE)
    try:
        assert await asyncio.wait_for(proc.stdout.readline(), 90) == b"stored\n"
    finally:
        proc.kill()  # SIGKILL: no close, no final save of the index
        await proc.wait()
    matrix = np.random.default_rng(5).normal(size=(3000, 16)).astype(np.float32)
    expected = {}
    for i in range(3000):
        if i % 10 == 1:
            expected[f"urn:c:{i}"] = (-matrix[i], "urn:doc:new")
        elif i % 10 and i % 7 != 3:
            expected[f"urn:c:{i}"] = (matrix[i], f"urn:doc:{i % 7}")
    ref = CollectionRef("alice", "docs")
    gone = [i for i in range(3000) if f"urn:c:{i}" not in expected]
    async with AnnVectorStore(tmp_path, exact_below=EXHAUSTIVE) as vectors:  # durability, exactly
        everything = await vectors.search(ref, "chunk", matrix[2], limit=5000)
        assert sorted(h.id for h in everything) == sorted(expected)  # nothing lost, no deleted key left
        stored = await vectors.get(ref, "chunk", list(expected))
        assert {h.id: h.payload["document"] for h in stored} == {i: doc for i, (_, doc) in expected.items()}
        for i in range(0, 3000, 37):
            [best] = await vectors.search(ref, "chunk", matrix[i], limit=1)
            if f"urn:c:{i}" in expected and i % 10 != 1:
                assert (best.id, best.score) == (f"urn:c:{i}", pytest.approx(1.0, abs=1e-4))
            else:  # deleted, or replaced by its negation: the old vector is nowhere
                assert best.score < 1.0 - 1e-4
    async with AnnVectorStore(tmp_path, exact_below=0) as vectors:  # recall of the recovered HNSW graph
        probes = {ident: vector for ident, (vector, _) in list(expected.items())[::5]}
        assert await self_recall(vectors, ref, "chunk", probes) >= RECALL
        for i in gone[::5]:  # whatever it misses, a deleted vector is never found again
            hits = await vectors.search(ref, "chunk", matrix[i], limit=RECALL_K)
            assert all(h.score < 1.0 - 1e-4 for h in hits)


async def test_ann_folder_open_twice_is_a_clear_error(tmp_path):
    child = ("import asyncio, sys\n"
             "from tracegraph.base.stores.ann import AnnVectorStore\n"
             "async def main():\n"
             "    try:\n"
             "        await AnnVectorStore(sys.argv[1]).open()\n"
             "    except Exception as exc:\n"
             "        print(type(exc).__name__, exc)\n"
             "asyncio.run(main())\n")
    async with AnnVectorStore(tmp_path) as vectors:
        await vectors.upsert(CollectionRef("alice", "docs"), "chunk", [VectorItem(E1, [1.0, 0.0])])
        with pytest.raises(ConfigError, match="locked by another process or store"):
            await AnnVectorStore(tmp_path).open()
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", child, str(tmp_path),
                                                    stdout=asyncio.subprocess.PIPE)
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert out.decode().startswith(f"ConfigError vector folder {tmp_path} is locked by another process"), out
    assert "TG_QDRANT_URL" in out.decode()
    async with AnnVectorStore(tmp_path) as vectors:  # released on close
        assert [h.id for h in await vectors.search(CollectionRef("alice", "docs"), "chunk", [1.0, 0.0])] == [E1]


async def test_closed_ann_store_refuses_further_calls(tmp_path):
    vectors = AnnVectorStore(tmp_path)
    await vectors.aclose()
    await vectors.aclose()
    with pytest.raises(ConfigError, match="closed"):
        await vectors.search(CollectionRef("alice", "docs"), "chunk", [1.0])


async def test_ann_store_refuses_a_qdrant_local_folder(tmp_path):
    async with QdrantVectorStore(path=tmp_path) as vectors:
        await vectors.upsert(CollectionRef("alice", "docs"), "chunk", [VectorItem(E1, [1.0, 0.0])])
    with pytest.raises(ConfigError, match="holds Qdrant local-mode data.*TG_VECTOR_ENGINE=qdrant-local"):
        await AnnVectorStore(tmp_path).open()


def test_settings_choose_the_vector_engine(tmp_path):
    from tracegraph.base.settings import RuntimeSettings
    from tracegraph.flow.vectors import open_vector_store
    default = open_vector_store(RuntimeSettings(data_dir=tmp_path), "entity")
    assert isinstance(default, AnnVectorStore) and default.path == tmp_path / "vectors" / "entity"
    local = open_vector_store(RuntimeSettings(data_dir=tmp_path, vector_engine="qdrant-local"), "chunk")
    assert isinstance(local, QdrantVectorStore) and local.path == str(tmp_path / "vectors" / "chunk")
    server = open_vector_store(RuntimeSettings(data_dir=tmp_path, qdrant_url="http://127.0.0.1:6333"), "chunk")
    assert isinstance(server, QdrantVectorStore) and server.url == "http://127.0.0.1:6333"


def test_ann_store_and_the_bundled_embedder_live_in_one_process():
    """usearch 2.26.2-2.26.6, once loaded, made onnxruntime's import crash the process (SIGSEGV)."""
    import subprocess
    child = ("import asyncio\n"
             "from tracegraph.base.stores.ann import AnnVectorStore\n"
             "from tracegraph.base.llm.local_embed import LocalEmbedder\n"
             "async def main():\n"
             "    embedder = LocalEmbedder()\n"
             "    print(len((await embedder.embed(['usearch first, then onnxruntime']))[0]))\n"
             "    await embedder.aclose()\n"
             "asyncio.run(main())\n")
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "384\n"), done.stderr[-2000:]
