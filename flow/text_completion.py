"""text-completion: the LLM behind an OpenAI-compatible endpoint, as a service on the bus.
With no endpoint configured it answers `llm-unavailable`, so callers switch to their offline strategy."""

from __future__ import annotations

from collections.abc import AsyncIterator

from tracegraph.base.errors import LlmUnavailable, TraceGraphError, TransientError
from tracegraph.base.flow import Flow
from tracegraph.base.llm.completion import Completion, CompletionClient
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Service
from tracegraph.schemas.llm import TextCompletionRequest, TextCompletionResponse


class LlmFailed(TraceGraphError):
    """The endpoint kept failing after the client's own retries."""

    error_type = "llm-error"


class TextCompletionProcessor(FlowProcessor):
    name = "text-completion"
    request = Service("request", TextCompletionRequest, TextCompletionResponse, prefetch=8)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        s = self.settings
        self.client = CompletionClient(s.llm_url, s.llm_model, s.llm_api_key.get_secret_value() if s.llm_api_key
                                       else None, timeout=s.llm_timeout) if s.llm_url else None

    async def stop(self) -> None:
        await super().stop()
        if self.client is not None:
            await self.client.aclose()

    @request.handler
    async def complete(self, req: TextCompletionRequest, flow: Flow) -> AsyncIterator[TextCompletionResponse]:
        try:
            async for response in self._complete(req):
                yield response
        except TransientError as exc:
            # The openai client has already retried; redelivering would multiply the calls. Report it.
            raise LlmFailed(str(exc)) from exc

    async def _complete(self, req: TextCompletionRequest) -> AsyncIterator[TextCompletionResponse]:
        if self.client is None:
            raise LlmUnavailable("no LLM endpoint configured (set TG_LLM_URL to an OpenAI-compatible /v1 URL)")
        if not req.streaming:
            done = await self.client.complete(req.system, req.prompt)
            yield TextCompletionResponse(response=done.text, model=done.model, in_token=done.in_token,
                                         out_token=done.out_token)
            return
        async for piece in self.client.stream(req.system, req.prompt):
            if isinstance(piece, Completion):
                yield TextCompletionResponse(response="", model=piece.model, in_token=piece.in_token,
                                             out_token=piece.out_token)
            else:
                yield TextCompletionResponse(response=piece)
