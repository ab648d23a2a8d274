"""A scripted OpenAI-compatible HTTP server for tests: real sockets on 127.0.0.1, no mocks.

    async with OpenAIStub(replies=["Paris."], embed=lambda text, model: [1.0, 0.0]) as stub:
        client = AsyncOpenAI(base_url=stub.base_url, api_key="k")
        stub.fail("/v1/embeddings", Fail(500), Fail(429, headers={"retry-after-ms": "10"}))
        ...
        assert [r.path for r in stub.requests] == [...]

Serves `/v1/embeddings` from a function, `/v1/chat/completions` from a script of replies (plain JSON,
or SSE when the request says `"stream": true`), and `/v1/models`. Scripted failures (`fail()`)
are answered first, in order, per path; `delay` holds any answer back, to trigger client timeouts.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import struct
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from aiohttp import web

EmbedFn = Callable[[str, str], Sequence[float]]


@dataclass(frozen=True, slots=True)
class Fail:
    """An HTTP error answer in OpenAI's shape: `{"error": {"message", "type", "code"}}`."""

    status: int
    message: str = "scripted failure"
    type: str = "server_error"
    code: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True, slots=True)
class Reply:
    """One chat completion. Streamed as `chunks` (default: `content` split after each space)."""

    content: str = ""
    chunks: Sequence[str] | None = None
    finish_reason: str = "stop"
    delay: float = 0.0  # before the answer (or its first chunk)
    chunk_delay: float = 0.0  # between streamed chunks
    abort_after: int | None = None  # drop the connection after this many streamed chunks
    usage: Mapping[str, int] | None = None

    def pieces(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        words = self.content.split(" ")
        return [w + " " for w in words[:-1]] + [words[-1]] if self.content else []


Scripted = Reply | Fail | str | Callable[[dict[str, Any]], "Reply | Fail | str"]


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]
    body: Any  # the decoded JSON body, or None


def hashed_embedding(text: str, model: str = "", dimension: int = 8) -> list[float]:
    """A deterministic, text-dependent vector: equal texts give equal vectors."""
    digest = hashlib.sha256(f"{model}\0{text}".encode()).digest()
    return [(b - 127.5) / 127.5 for b in itertools.islice(itertools.cycle(digest), dimension)]


class OpenAIStub:
    """Async context manager: starts on a free port, `base_url` ends in `/v1`, `requests` records calls.

    `api_key` (if set) must arrive as a Bearer token, else 401. `models` (if set) lists the models
    that exist; any other model name gets 404 `model_not_found`, as OpenAI answers.
    """

    def __init__(self, *, embed: EmbedFn = hashed_embedding, replies: Iterable[Scripted] = (),
                 api_key: str | None = None, models: Iterable[str] | None = None, delay: float = 0.0) -> None:
        self.embed = embed
        self.replies: deque[Scripted] = deque(replies)
        self.api_key = api_key
        self.models = set(models) if models is not None else None
        self.delay = delay
        self.requests: list[RecordedRequest] = []
        self._failures: dict[str, deque[Fail]] = {}
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def fail(self, path: str, *failures: Fail) -> None:
        """Answer the next requests to `path` (e.g. "/v1/embeddings") with these errors, in order."""
        self._failures.setdefault(path, deque()).extend(failures)

    def script(self, *replies: Scripted) -> None:
        """Append chat replies: a Reply, a plain string, a Fail, or a function of the request body."""
        self.replies.extend(replies)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == path]

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- request handling ------------------------------------------------------------------------

    async def _admit(self, request: web.Request) -> tuple[Any, web.Response | None]:
        """Record the request; return its body and, if it is to be refused, the refusal."""
        body = await request.json() if request.can_read_body else None
        self.requests.append(RecordedRequest(request.method, request.path, dict(request.headers), body))
        if self.delay:
            await asyncio.sleep(self.delay)
        queued = self._failures.get(request.path)
        if queued:
            return body, await _error(queued.popleft())
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return body, await _error(Fail(401, "Incorrect API key provided", "invalid_request_error",
                                           "invalid_api_key"))
        model = body.get("model") if isinstance(body, dict) else None
        if self.models is not None and model is not None and model not in self.models:
            return body, await _error(Fail(404, f"The model `{model}` does not exist", "invalid_request_error",
                                           "model_not_found"))
        return body, None

    async def _models(self, request: web.Request) -> web.Response:
        _, refused = await self._admit(request)
        if refused is not None:
            return refused
        names = sorted(self.models or ())
        return web.json_response({"object": "list", "data": [
            {"id": n, "object": "model", "created": 0, "owned_by": "stub"} for n in names]})

    async def _embeddings(self, request: web.Request) -> web.Response:
        body, refused = await self._admit(request)
        if refused is not None:
            return refused
        texts = body["input"]
        if isinstance(texts, str):
            texts = [texts]
        model = body.get("model", "")
        data = []
        for index, text in enumerate(texts):
            vector = [float(x) for x in self.embed(text, model)]
            if body.get("encoding_format") == "base64":
                encoded: Any = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            else:
                encoded = vector
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(len(str(t).split()) for t in texts)
        return web.json_response({"object": "list", "data": data, "model": model,
                                  "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body, refused = await self._admit(request)
        if refused is not None:
            return refused
        if not self.replies:
            return await _error(Fail(500, "stub: no scripted reply left"))
        scripted = self.replies.popleft()
        if callable(scripted):
            scripted = scripted(body)
        if isinstance(scripted, Fail):
            return await _error(scripted)
        reply = Reply(scripted) if isinstance(scripted, str) else scripted
        if reply.delay:
            await asyncio.sleep(reply.delay)
        model = body.get("model", "")
        ident = f"chatcmpl-stub{len(self.requests)}"
        usage = dict(reply.usage or {"prompt_tokens": 1, "completion_tokens": len(reply.pieces()),
                                     "total_tokens": 1 + len(reply.pieces())})
        if not body.get("stream"):
            return web.json_response({
                "id": ident, "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content},
                             "finish_reason": reply.finish_reason, "logprobs": None}],
                "usage": usage})
        return await self._stream(request, reply, ident, model, usage,
                                  include_usage=bool((body.get("stream_options") or {}).get("include_usage")))

    async def _stream(self, request: web.Request, reply: Reply, ident: str, model: str,
                      usage: dict[str, int], *, include_usage: bool) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
            payload = {"id": ident, "object": "chat.completion.chunk", "created": int(time.time()),
                       "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish,
                                                    "logprobs": None}], **extra}
            return f"data: {json.dumps(payload)}\n\n".encode()

        await response.write(chunk({"role": "assistant", "content": ""}))
        for n, piece in enumerate(reply.pieces()):
            if reply.abort_after is not None and n >= reply.abort_after:
                if request.transport is not None:
                    request.transport.close()  # a server that dies mid-answer
                return response
            if n and reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
            await response.write(chunk({"content": piece}))
        await response.write(chunk({}, reply.finish_reason))
        if include_usage:
            payload = {"id": ident, "object": "chat.completion.chunk", "created": int(time.time()),
                       "model": model, "choices": [], "usage": usage}
            await response.write(f"data: {json.dumps(payload)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


async def _error(fail: Fail) -> web.Response:
    if fail.delay:
        await asyncio.sleep(fail.delay)
    return web.json_response({"error": {"message": fail.message, "type": fail.type, "param": None,
                                        "code": fail.code}}, status=fail.status, headers=dict(fail.headers))
