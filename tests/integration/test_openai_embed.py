"""OpenAIEmbedder through the real `openai` client, over HTTP, against the scripted stub server."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator

import pytest
from openai import APIConnectionError, AsyncOpenAI, InternalServerError

from support.openai_stub import Fail, OpenAIStub, Reply, hashed_embedding
from tracegraph.base.errors import ConfigError, RemoteError, TransientError
from tracegraph.base.llm.openai_embed import OpenAIEmbedder
from tracegraph.base.settings import RuntimeSettings

FAST_RETRY = {"retry-after-ms": "10"}  # the client honours it instead of its 0.5 s+ backoff


@pytest.fixture
async def stub() -> AsyncIterator[OpenAIStub]:
    async with OpenAIStub(api_key="sk-test", models={"embed-small"},
                          embed=lambda text, model: hashed_embedding(text, model, dimension=12)) as server:
        yield server


@pytest.fixture
async def embedder(stub: OpenAIStub) -> AsyncIterator[OpenAIEmbedder]:
    engine = OpenAIEmbedder(model="embed-small", base_url=stub.base_url, api_key="sk-test", batch_size=3)
    yield engine
    await engine.aclose()


async def test_embeds_in_order_in_batches_and_normalises(stub: OpenAIStub, embedder: OpenAIEmbedder) -> None:
    texts = [f"text number {i}" for i in range(7)]
    vectors = await embedder.embed(texts)

    assert len(vectors) == 7 and embedder.dimension == 12
    for text, vector in zip(texts, vectors, strict=True):
        raw = hashed_embedding(text, "embed-small", dimension=12)
        norm = math.hypot(*raw)
        assert vector == pytest.approx([x / norm for x in raw])
    sent = stub.requests_to("/v1/embeddings")
    assert [r.body["input"] for r in sent] == [texts[0:3], texts[3:6], texts[6:7]]
    assert {r.body["model"] for r in sent} == {"embed-small"}
    assert all(r.headers["Authorization"] == "Bearer sk-test" for r in sent)


async def test_empty_input_sends_nothing(stub: OpenAIStub, embedder: OpenAIEmbedder) -> None:
    assert await embedder.embed([]) == []
    assert stub.requests == []


async def test_a_500_is_retried_and_then_succeeds(stub: OpenAIStub, embedder: OpenAIEmbedder) -> None:
    stub.fail("/v1/embeddings", Fail(500, headers=FAST_RETRY), Fail(429, "slow down", "rate_limit_exceeded",
                                                                    headers=FAST_RETRY))
    vectors = await embedder.embed(["alpha", "beta"])
    assert len(vectors) == 2
    assert len(stub.requests_to("/v1/embeddings")) == 3  # two failures, then the answer


async def test_persistent_server_errors_become_transient_after_the_retries(stub: OpenAIStub) -> None:
    stub.fail("/v1/embeddings", *[Fail(503, "overloaded", headers=FAST_RETRY)] * 3)
    engine = OpenAIEmbedder(model="embed-small", base_url=stub.base_url, api_key="sk-test", max_retries=2)
    try:
        with pytest.raises(TransientError, match="503"):
            await engine.embed(["alpha"])
    finally:
        await engine.aclose()
    assert len(stub.requests) == 3  # the first try and two retries


async def test_a_timeout_is_transient(stub: OpenAIStub) -> None:
    stub.delay = 1.0
    engine = OpenAIEmbedder(model="embed-small", base_url=stub.base_url, api_key="sk-test",
                            timeout=0.2, max_retries=0)
    try:
        with pytest.raises(TransientError, match="unreachable"):
            await engine.embed(["alpha"])
    finally:
        await engine.aclose()


async def test_a_wrong_key_is_a_config_error(stub: OpenAIStub) -> None:
    engine = OpenAIEmbedder(model="embed-small", base_url=stub.base_url, api_key="sk-wrong")
    try:
        with pytest.raises(ConfigError, match="rejected the API key"):
            await engine.embed(["alpha"])
    finally:
        await engine.aclose()
    assert len(stub.requests) == 1  # 401 is not retried


async def test_an_unknown_model_is_a_config_error(stub: OpenAIStub) -> None:
    engine = OpenAIEmbedder(model="embed-huge", base_url=stub.base_url, api_key="sk-test")
    try:
        with pytest.raises(ConfigError, match="no model 'embed-huge'"):
            await engine.embed(["alpha"])
    finally:
        await engine.aclose()


async def test_a_refused_request_is_a_remote_error(stub: OpenAIStub, embedder: OpenAIEmbedder) -> None:
    stub.fail("/v1/embeddings", Fail(400, "input too long", "invalid_request_error"))
    with pytest.raises(RemoteError) as caught:
        await embedder.embed(["alpha"])
    assert caught.value.type == "http-400" and caught.value.message == "input too long"


async def test_dimension_is_learned_then_enforced(stub: OpenAIStub, embedder: OpenAIEmbedder) -> None:
    with pytest.raises(RuntimeError, match="after the first embed"):
        _ = embedder.dimension
    await embedder.embed(["alpha"])
    assert embedder.dimension == 12
    (again,) = await embedder.embed(["beta"])
    assert len(again) == 12

    stub.embed = lambda text, model: hashed_embedding(text, model, dimension=16)  # the endpoint's model changed
    with pytest.raises(ConfigError, match="returned 16 dimensions, expected 12"):
        await embedder.embed(["gamma"])


async def test_a_declared_dimension_is_checked_from_the_first_answer(stub: OpenAIStub) -> None:
    engine = OpenAIEmbedder(model="embed-small", base_url=stub.base_url, api_key="sk-test", dimension=1536)
    try:
        assert engine.dimension == 1536
        with pytest.raises(ConfigError, match="returned 12 dimensions"):
            await engine.embed(["alpha"])
    finally:
        await engine.aclose()


async def test_built_from_tg_settings(stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TG_EMBEDDINGS_URL", stub.base_url)
    monkeypatch.setenv("TG_EMBEDDINGS_MODEL", "embed-small")
    monkeypatch.setenv("TG_EMBEDDINGS_API_KEY", "sk-test")
    engine = OpenAIEmbedder.from_settings(RuntimeSettings())
    try:
        assert len((await engine.embed(["alpha"]))[0]) == 12
    finally:
        await engine.aclose()
    with pytest.raises(ConfigError, match="TG_EMBEDDINGS_URL"):
        OpenAIEmbedder.from_settings(RuntimeSettings(embeddings_url=None))


# The stub's chat side, through the same official client (the chat engine's tests will lean on it).

async def test_stub_serves_scripted_chat_replies_plain_and_streamed() -> None:
    replies = ["Paris.", Reply("The answer is 42", chunk_delay=0.01),
               Fail(500, "boom", headers={"x-should-retry": "false"})]
    async with OpenAIStub(replies=replies) as stub:
        client = AsyncOpenAI(base_url=stub.base_url, api_key="sk-any", max_retries=0)
        try:
            plain = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "capital?"}])
            assert plain.choices[0].message.content == "Paris."

            stream = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}],
                                                          stream=True)
            pieces = [chunk.choices[0].delta.content async for chunk in stream if chunk.choices]
            assert "".join(p or "" for p in pieces) == "The answer is 42"
            assert len([p for p in pieces if p]) == 4

            with pytest.raises(InternalServerError, match="boom"):
                await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
        finally:
            await client.close()
        assert [r.body["messages"][0]["content"] for r in stub.requests_to("/v1/chat/completions")] == [
            "capital?", "q", "q"]


async def test_stub_speaks_base64_embeddings_and_can_drop_a_stream_midway() -> None:
    async with OpenAIStub(replies=[Reply("one two three four", abort_after=2)]) as stub:
        client = AsyncOpenAI(base_url=stub.base_url, api_key="sk-any", max_retries=0)
        try:
            # Without encoding_format the client asks for base64 and decodes it itself.
            response = await client.embeddings.create(model="m", input=["alpha"])
            assert list(response.data[0].embedding) == pytest.approx(hashed_embedding("alpha", "m"), abs=1e-6)

            stream = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}],
                                                          stream=True)
            received: list[str] = []
            with pytest.raises(APIConnectionError):
                async for chunk in stream:
                    received.append(chunk.choices[0].delta.content or "")
            assert "".join(received) == "one two "
        finally:
            await client.close()
