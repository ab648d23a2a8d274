"""Text completion service, in upstream's shape."""

from __future__ import annotations

from typing import ClassVar

from tracegraph.schemas.base import Message, ServiceResponse


class TextCompletionRequest(Message):
    schema_name: ClassVar[str] = "text-completion-request"

    system: str = ""
    prompt: str
    streaming: bool = False


class TextCompletionResponse(ServiceResponse):
    schema_name: ClassVar[str] = "text-completion-response"

    response: str = ""
    in_token: int | None = None
    out_token: int | None = None
    model: str | None = None
    end_of_stream: bool = False
