"""A diagnostic service in every flow: answers Ping with Pong, so `tg-ping` (and the bus benchmark)
can check a flow's wiring end to end on any broker."""

from __future__ import annotations

from collections.abc import AsyncIterator

from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Service
from tracegraph.schemas.base import Ping, Pong


class PingProcessor(FlowProcessor):
    """Replies with the request's text and sequence number, prefixed by the flow id."""

    name = "ping"
    request = Service("request", Ping, Pong, prefetch=64)

    @request.handler
    async def answer(self, ping: Ping, flow: Flow) -> AsyncIterator[Pong]:
        yield Pong(text=f"{flow.id}/{self.instance}: {ping.text}", seq=ping.seq)
