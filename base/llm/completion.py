"""Chat completion against any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp),
through the official `openai` client; failures mapped onto our error tree."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import openai

from tracegraph.base.errors import ConfigError, TransientError


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    model: str | None
    in_token: int | None = None
    out_token: int | None = None


class CompletionClient:
    """`await client.complete(system, prompt)` or `async for piece in client.stream(...)`.

    The openai client retries connection errors, 429 and 5xx itself (`max_retries`); what
    still fails becomes TransientError (worth redelivering) or ConfigError (fix the settings).
    """

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 120.0,
                 max_retries: int = 2) -> None:
        self.model = model
        self.base_url = base_url
        self._openai = openai
        self._options = {"base_url": base_url, "api_key": api_key or "not-needed", "timeout": timeout,
                         "max_retries": max_retries}
        self._client_instance: openai.AsyncOpenAI | None = None

    async def _client(self):
        # Building the client reads CA certificates and OS files: do it once, off the event loop.
        if self._client_instance is None:
            self._client_instance = await asyncio.to_thread(lambda: self._openai.AsyncOpenAI(**self._options))
        return self._client_instance

    def _messages(self, system: str, prompt: str) -> list[dict[str, str]]:
        return ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]

    def _translate(self, exc: Exception) -> Exception:
        o = self._openai
        where = f"LLM endpoint {self.base_url} (model {self.model})"
        if isinstance(exc, (o.AuthenticationError, o.PermissionDeniedError)):
            return ConfigError(f"{where} refused the credentials: {exc}")
        if isinstance(exc, o.NotFoundError):
            return ConfigError(f"{where}: not found (wrong URL or model name?): {exc}")
        if isinstance(exc, (o.APITimeoutError, o.APIConnectionError, o.RateLimitError, o.InternalServerError)):
            return TransientError(f"{where} unavailable: {exc}")
        if isinstance(exc, o.APIStatusError):
            return ConfigError(f"{where} rejected the request: {exc}")
        return exc

    async def complete(self, system: str, prompt: str, *, json_mode: bool = False) -> Completion:
        extra = {"response_format": {"type": "json_object"}} if json_mode else {}
        try:
            reply = await (await self._client()).chat.completions.create(
                model=self.model, messages=self._messages(system, prompt), **extra)
        except self._openai.OpenAIError as exc:
            raise self._translate(exc) from exc
        usage = reply.usage
        return Completion(text=reply.choices[0].message.content or "", model=reply.model or self.model,
                          in_token=usage.prompt_tokens if usage else None,
                          out_token=usage.completion_tokens if usage else None)

    async def stream(self, system: str, prompt: str) -> AsyncIterator[str | Completion]:
        """Text pieces as they arrive, then one Completion with the whole text and token counts."""
        pieces: list[str] = []
        model, usage = self.model, None
        try:
            stream = await (await self._client()).chat.completions.create(
                model=self.model, messages=self._messages(system, prompt), stream=True,
                stream_options={"include_usage": True})
            async for event in stream:
                model = event.model or model
                usage = event.usage or usage
                if event.choices and event.choices[0].delta.content:
                    pieces.append(event.choices[0].delta.content)
                    yield event.choices[0].delta.content
        except self._openai.OpenAIError as exc:
            raise self._translate(exc) from exc
        yield Completion(text="".join(pieces), model=model, in_token=usage.prompt_tokens if usage else None,
                         out_token=usage.completion_tokens if usage else None)

    async def aclose(self) -> None:
        if self._client_instance is not None:
            await self._client_instance.close()
