"""Whether an extractor asks the LLM, and asking it: shared by kg-extract and architecture-extract.

In "auto" mode an extractor asks the LLM until the text-completion service says none is configured,
then works offline and asks again only after RECHECK_LLM_SECONDS (an endpoint may be configured later)."""

from __future__ import annotations

import time

from tracegraph.base.flow import Flow
from tracegraph.base.specs import Client
from tracegraph.schemas.llm import TextCompletionRequest

RECHECK_LLM_SECONDS = 60.0


class LlmChoice:
    def __init__(self, mode: str) -> None:
        self.mode = mode  # the extractor setting: auto, llm or offline
        self._offline_until = 0.0

    def use_llm(self) -> bool:
        return self.mode == "llm" or (self.mode == "auto" and time.monotonic() >= self._offline_until)

    def none_configured(self) -> None:
        """The service said no LLM is configured: offline for a while."""
        self._offline_until = time.monotonic() + RECHECK_LLM_SECONDS


class ModelAsker:
    """`ask(system, prompt) -> text` through a flow's text-completion client, remembering which model
    answered (named in the extraction's provenance)."""

    def __init__(self, flow: Flow, client: Client) -> None:
        self.flow, self.client = flow, client
        self.models: list[str] = []

    async def __call__(self, system: str, prompt: str) -> str:
        reply = await self.flow[self.client].request(TextCompletionRequest(system=system, prompt=prompt))
        self.models.append(reply.model or "")
        return reply.response

    @property
    def model(self) -> str | None:
        return self.models[-1] if self.models else None
