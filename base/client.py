"""Request/response over two topics: correlate by the `id` property, stream until the final response."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Generic, TypeVar

from tracegraph.base.bus import codec
from tracegraph.base.bus.protocol import Backend, Delivery
from tracegraph.base.bus.topic import Topic
from tracegraph.base.errors import RemoteError, RequestTimeout
from tracegraph.schemas.base import Message, ServiceResponse

log = logging.getLogger(__name__)

Q = TypeVar("Q", bound=Message)
R = TypeVar("R", bound=ServiceResponse)

DEFAULT_TIMEOUT = 60.0


class RequestClient(Generic[Q, R]):
    """Sends requests of type Q and yields their responses of type R.

    One response subscription per client, private to it; responses for ids this client
    did not send (another client's, or a request that already timed out) are dropped.
    """

    def __init__(self, backend: Backend, request_topic: Topic, response_topic: Topic,
                 request: type[Q], response: type[R], *, owner: str = "client",
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self.backend = backend
        self.request_topic = request_topic
        self.response_topic = response_topic
        self.request_type = request
        self.response_type = response
        self.timeout = timeout
        self._subscription = f"{owner}-{uuid.uuid4().hex[:12]}"
        self._pending: dict[str, asyncio.Queue[Delivery]] = {}
        self._stack = AsyncExitStack()
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> "RequestClient[Q, R]":
        deliveries = await self._stack.enter_async_context(
            self.backend.subscribe(self.response_topic, self._subscription, prefetch=256))
        self._reader = asyncio.create_task(self._route(deliveries), name=f"responses:{self.response_topic}")
        return self

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
            self._reader = None
        await self._stack.aclose()

    async def __aenter__(self) -> "RequestClient[Q, R]":
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _route(self, deliveries: AsyncIterator[Delivery]) -> None:
        async for delivery in deliveries:
            await delivery.ack()
            queue = self._pending.get(delivery.properties.get("id", ""))
            if queue is not None:
                queue.put_nowait(delivery)

    async def stream(self, request: Q, *, timeout: float | None = None) -> AsyncIterator[R]:
        """Yield every response to `request`, ending after the final one.

        Raises RemoteError for an error response and RequestTimeout when no response
        arrives within `timeout` seconds of the request or of the previous response.
        """
        wait = self.timeout if timeout is None else timeout
        request_id = uuid.uuid4().hex
        queue: asyncio.Queue[Delivery] = asyncio.Queue()
        self._pending[request_id] = queue
        try:
            body, props = codec.encode(request, {"id": request_id})
            await self.backend.publish(self.request_topic, body, props)
            while True:
                try:
                    delivery = await asyncio.wait_for(queue.get(), wait)
                except TimeoutError:
                    raise RequestTimeout(
                        f"no response from {self.request_topic} within {wait:g}s") from None
                response = codec.decode(delivery.body, delivery.properties, self.response_type)
                if response.error is not None:
                    raise RemoteError(response.error.type, response.error.message)
                yield response
                if response.is_final:
                    return
        finally:
            self._pending.pop(request_id, None)

    async def request(self, request: Q, *, timeout: float | None = None) -> R:
        """The final response of a request (earlier streamed responses are discarded)."""
        last: R | None = None
        async for response in self.stream(request, timeout=timeout):
            last = response
        assert last is not None  # stream() returns only after a final response
        return last
