"""Request/response over two topics: correlate by the `id` property, stream until the final response."""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections.abc import AsyncIterator, Callable
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
        token = uuid.uuid4().hex[:12]
        self._subscription = f"{owner}-{token}"
        self._ids = (f"{token}-{n}" for n in itertools.count())  # unique without a uuid per request
        self._pending: dict[str, Callable[[Delivery], None]] = {}
        self._stack = AsyncExitStack()
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> "RequestClient[Q, R]":
        deliveries = await self._stack.enter_async_context(self.backend.subscribe(
            self.response_topic, self._subscription, prefetch=256, auto_ack=True))
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
        pending = self._pending
        async for delivery in deliveries:
            deliver = pending.get(delivery.properties.get("id", ""))
            if deliver is not None:
                deliver(delivery)

    async def _send(self, request: Q, deliver: Callable[[Delivery], None]) -> str:
        request_id = next(self._ids)
        self._pending[request_id] = deliver
        body, props = codec.encode(request, {"id": request_id})
        try:
            await self.backend.publish(self.request_topic, body, props)
        except BaseException:
            self._pending.pop(request_id, None)
            raise
        return request_id

    def _decode(self, delivery: Delivery) -> R:
        response = codec.decode(delivery.body, delivery.properties, self.response_type)
        if response.error is not None:
            raise RemoteError(response.error.type, response.error.message)
        return response

    def _timed_out(self, wait: float) -> RequestTimeout:
        return RequestTimeout(f"no response from {self.request_topic} within {wait:g}s")

    async def stream(self, request: Q, *, timeout: float | None = None) -> AsyncIterator[R]:
        """Yield every response to `request`, ending after the final one.

        Raises RemoteError for an error response and RequestTimeout when no response
        arrives within `timeout` seconds of the request or of the previous response.
        """
        wait = self.timeout if timeout is None else timeout
        queue: asyncio.Queue[Delivery] = asyncio.Queue()
        request_id = await self._send(request, queue.put_nowait)
        try:
            while True:
                try:
                    async with asyncio.timeout(wait):
                        delivery = await queue.get()
                except TimeoutError:
                    raise self._timed_out(wait) from None
                response = self._decode(delivery)
                yield response
                if response.ends_request:
                    return
        finally:
            self._pending.pop(request_id, None)

    async def request(self, request: Q, *, timeout: float | None = None) -> R:
        """The final response of a request (earlier streamed responses are discarded).

        The same deadline rule as `stream()`, without a queue per request: the common
        single-response call is the hot path of every service.
        """
        wait = self.timeout if timeout is None else timeout
        loop = asyncio.get_running_loop()
        done: asyncio.Future[R] = loop.create_future()
        deadline: asyncio.Timeout | None = None

        def deliver(delivery: Delivery) -> None:
            if done.done():
                return
            try:
                response = self._decode(delivery)
            except Exception as exc:  # an error response or an undecodable one ends the request
                done.set_exception(exc)
                return
            if response.ends_request:
                done.set_result(response)
            elif deadline is not None:
                deadline.reschedule(loop.time() + wait)

        request_id = await self._send(request, deliver)
        try:
            async with asyncio.timeout(wait) as deadline:
                return await done
        except TimeoutError:
            raise self._timed_out(wait) from None
        finally:
            self._pending.pop(request_id, None)
