"""A tiny flow processor for runtime tests: answers Ping with a stream of Pong, and can be told to fail."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from tracegraph.base.errors import TransientError
from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Parameter, Service
from tracegraph.schemas.base import Ping, Pong

ECHO_BLUEPRINT = {
    "description": "echo service for tests",
    "parameters": {"repeat": {"default": "1", "description": "responses per request"}},
    "processors": {
        "echo": {
            "request": {"request": "non-persistent://tg/request/echo:{id}",
                        "response": "non-persistent://tg/response/echo:{id}"},
            "repeat": "{repeat}",
        }
    },
    "interfaces": {"echo": {"request": "non-persistent://tg/request/echo:{id}",
                            "response": "non-persistent://tg/response/echo:{id}"}},
}


class EchoProcessor(FlowProcessor):
    name = "echo"
    request = Service("request", Ping, Pong)
    repeat = Parameter("repeat", int, default=1)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.transient_failures = 0

    @request.handler
    async def answer(self, ping: Ping, flow: Flow) -> AsyncIterator[Pong]:
        if ping.text == "slow":  # holds the request until the processor is stopped
            await asyncio.sleep(3600)
        if ping.text == "boom":
            raise ValueError("asked to fail")
        if ping.text == "flaky" and self.transient_failures < 2:
            self.transient_failures += 1
            raise TransientError("store briefly away")
        for i in range(flow[self.repeat]):
            yield Pong(text=f"{flow.id}:{ping.text}", seq=i)
