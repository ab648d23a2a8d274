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
from tracegraph.base.bus.topic import SERVICE_SUBSCRIPTION, Topic
from tracegraph.base.errors import NoRoute, RemoteError, RequestTimeout, ServiceUnavailable
from tracegraph.base.priority import BULK, INTERACTIVE, PATIENCE, PRIORITY, Priority
from tracegraph.schemas.base import Message, ServiceResponse

log = logging.getLogger(__name__)

Q = TypeVar("Q", bound=Message)
R = TypeVar("R", bound=ServiceResponse)

DEFAULT_TIMEOUT = 60.0
DEFAULT_UNAVAILABLE_AFTER = 4.5  # with the 0.5 s polling, a dead service is reported within 5 s
# Response property a service stamps: "0" on a response that neither ends its request nor carries an
# error, "1" on any other. `request()` keeps only the final response, so it skips decoding the "0"s: a
# GraphRAG answer over REST came with five explain events that cost more to decode than the answer.
FINAL = "final"
# Request property `request()` stamps ("1"): the caller keeps only the final response, so the service
# sends the earlier ones as bare marks (no body) that only keep the caller's deadline alive.
FINAL_ONLY = "final-only"


class _Pending:
    """One request awaiting responses: where they go, how to fail it, and the connection it was sent on."""

    __slots__ = ("deliver", "fail", "epoch")

    def __init__(self, deliver: Callable[[Delivery], None], fail: Callable[[BaseException], None],
                 epoch: int) -> None:
        self.deliver, self.fail, self.epoch = deliver, fail, epoch


class RequestClient(Generic[Q, R]):
    """Sends requests of type Q and yields their responses of type R.

    One response subscription per client, private to it; responses for ids this client
    did not send (another client's, or a request that already timed out) are dropped.

    While requests are pending, a watcher asks the broker whether the service still has a
    consumer: after `unavailable_after` seconds without one, or once the broker connection
    was lost (its responses may never come), pending requests fail with `ServiceUnavailable`
    instead of waiting out `timeout`. Each request expires in the broker's queue after
    `timeout`, so a service that comes back does not work for callers long gone.

    Once requests failed that way, the service is marked down for `unavailable_after` seconds:
    a request sent meanwhile fails at once if the broker still counts no consumer, so the
    requests queued behind the first (a service's prefetch at a time) do not each wait their
    own `unavailable_after`. Any response, or a consumer seen again, clears the mark. A publish
    the broker does not take within `unavailable_after` (its connection is down) fails the same way.

    Requests carry the caller's patience (`timeout`), so a busy service refuses one it could not
    start in time rather than leave it unanswered, and, from a client built with `priority=BULK`,
    the bulk mark that lets a service serve questions ahead of them (base/priority.py).
    """

    def __init__(self, backend: Backend, request_topic: Topic, response_topic: Topic,
                 request: type[Q], response: type[R], *, owner: str = "client",
                 timeout: float = DEFAULT_TIMEOUT, unavailable_after: float = DEFAULT_UNAVAILABLE_AFTER,
                 priority: Priority = INTERACTIVE) -> None:
        self.backend = backend
        self.priority = priority
        self.request_topic = request_topic
        self.response_topic = response_topic
        self.request_type = request
        self.response_type = response
        self.timeout = timeout
        self.unavailable_after = unavailable_after
        token = uuid.uuid4().hex[:12]
        self._subscription = f"{owner}-{token}"
        self._ids = (f"{token}-{n}" for n in itertools.count())  # unique without a uuid per request
        self._pending: dict[str, _Pending] = {}
        self._stack = AsyncExitStack()
        self._reader: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._down_until = 0.0  # loop time until which the service counts as gone; 0: not marked

    async def start(self) -> "RequestClient[Q, R]":
        deliveries = await self._stack.enter_async_context(self.backend.subscribe(
            self.response_topic, self._subscription, prefetch=256, auto_ack=True))
        self._reader = asyncio.create_task(self._route(deliveries), name=f"responses:{self.response_topic}")
        return self

    async def stop(self) -> None:
        for task in (self._reader, self._watcher):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._reader = self._watcher = None
        await self._stack.aclose()

    async def __aenter__(self) -> "RequestClient[Q, R]":
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _route(self, deliveries: AsyncIterator[Delivery]) -> None:
        pending = self._pending
        async for delivery in deliveries:
            self._down_until = 0.0  # the service answers
            waiting = pending.get(delivery.properties.get("id", ""))
            if waiting is not None:
                waiting.deliver(delivery)

    async def _send(self, request: Q, deliver: Callable[[Delivery], None],
                    fail: Callable[[BaseException], None], ttl: float, final_only: bool = False) -> str:
        if self._down_until:
            await self._refuse_while_down()
        request_id = next(self._ids)
        self._pending[request_id] = _Pending(deliver, fail, self.backend.epoch)
        body, props = codec.encode(request, self._properties(request_id, ttl, final_only))
        try:
            await self._publish_when_served(body, props, ttl)
        except BaseException:
            self._pending.pop(request_id, None)
            raise
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch(), name=f"liveness:{self.request_topic}")
        return request_id

    def _properties(self, request_id: str, patience: float, final_only: bool) -> dict[str, str]:
        props = {"id": request_id, PATIENCE: f"{patience:g}"}
        if final_only:
            props[FINAL_ONLY] = "1"
        if self.priority == BULK:  # unmarked means interactive: older callers are never slowed
            props[PRIORITY] = BULK
        return props

    async def _publish_when_served(self, body: bytes, props: dict[str, str], ttl: float) -> None:
        """Publish; while no queue takes the request (its service not subscribed yet, say at start-up),
        wait for a consumer and send it again, for at most `unavailable_after` seconds."""
        loop = asyncio.get_running_loop()
        patience = min(self.unavailable_after, ttl)
        give_up = loop.time() + patience
        pause = 0.05
        unrouted = False
        while True:
            try:
                async with asyncio.timeout_at(give_up):  # a lost broker connection waits no longer
                    await self.backend.publish(self.request_topic, body, props, ttl=ttl)
                return
            except TimeoutError:
                if unrouted:
                    self._mark_down()
                    raise self._nobody_serving(patience) from None
                raise ServiceUnavailable(f"the message bus did not take a request for {self.request_topic} "
                                         f"within {patience:g}s: is the broker reachable? try again") from None
            except NoRoute as exc:
                unrouted = True
                if loop.time() + pause > give_up:
                    self._mark_down()
                    raise self._nobody_serving(patience) from exc
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.5)

    async def _refuse_while_down(self) -> None:
        """Fail at once while the service is marked down and the broker still counts no consumer."""
        if asyncio.get_running_loop().time() >= self._down_until:
            self._down_until = 0.0  # the window passed: this request waits its own `unavailable_after`
            return
        count = await self._consumers()
        if count == 0:
            self._mark_down()  # still gone: keep failing fast
            raise self._nobody_serving(self.unavailable_after)
        if count is not None:
            self._down_until = 0.0

    def _mark_down(self) -> None:
        self._down_until = asyncio.get_running_loop().time() + self.unavailable_after

    async def _consumers(self) -> int | None:
        """The service's consumer count, None when the broker cannot tell (soon enough)."""
        try:
            async with asyncio.timeout(self.unavailable_after):  # a hung broker cannot hold callers
                return await self.backend.consumers(self.request_topic, SERVICE_SUBSCRIPTION)
        except Exception as exc:  # the watcher must outlive a broker hiccup, or callers wait the full timeout
            log.debug("cannot count consumers of %s: %s", self.request_topic, exc)
            return None

    async def _watch(self) -> None:
        """Fail pending requests that cannot be answered: no consumer for `unavailable_after`
        seconds, or sent on a connection that has since been lost. Ends when nothing is pending."""
        loop = asyncio.get_running_loop()
        interval = min(0.5, self.unavailable_after / 4)
        alive_at = loop.time()  # when a consumer was last seen (or could not be counted), else when we began
        while self._pending:
            await asyncio.sleep(interval)
            epoch = self.backend.epoch
            self._fail_where(lambda p: p.epoch < epoch, lambda: ServiceUnavailable(
                f"the broker connection was lost while waiting for {self.request_topic}; try again"))
            count = await self._consumers()
            if count is None or count > 0:
                alive_at = loop.time()
                continue
            if loop.time() - alive_at >= self.unavailable_after:
                self._mark_down()
                self._fail_where(lambda p: True, lambda: self._nobody_serving(self.unavailable_after))

    def _nobody_serving(self, seconds: float) -> ServiceUnavailable:
        return ServiceUnavailable(f"no service is consuming {self.request_topic} (none for {seconds:g}s): "
                                  "is its processor running?")

    def _fail_where(self, doomed: Callable[[_Pending], bool], error: Callable[[], BaseException]) -> None:
        for request_id, waiting in list(self._pending.items()):
            if doomed(waiting):
                del self._pending[request_id]
                waiting.fail(error())

    def _decode(self, delivery: Delivery) -> R:
        response = codec.decode(delivery.body, delivery.properties, self.response_type)
        if response.error is not None:
            raise RemoteError(response.error.type, response.error.message)
        return response

    def _timed_out(self, wait: float) -> RequestTimeout:
        return RequestTimeout(f"no response from {self.request_topic} within {wait:g}s")

    async def stream(self, request: Q, *, timeout: float | None = None) -> AsyncIterator[R]:
        """Yield every response to `request`, ending after the final one.

        Raises RemoteError for an error response, RequestTimeout when no response arrives
        within `timeout` seconds of the request or of the previous response, and
        ServiceUnavailable when the service is gone (see the class docstring).
        """
        wait = self.timeout if timeout is None else timeout
        queue: asyncio.Queue[Delivery | BaseException] = asyncio.Queue()
        request_id = await self._send(request, queue.put_nowait, queue.put_nowait, wait)
        try:
            while True:
                try:
                    async with asyncio.timeout(wait):
                        delivery = await queue.get()
                except TimeoutError:
                    raise self._timed_out(wait) from None
                if isinstance(delivery, BaseException):
                    raise delivery
                response = self._decode(delivery)
                yield response
                if response.ends_request:
                    return
        finally:
            self._pending.pop(request_id, None)

    async def request(self, request: Q, *, timeout: float | None = None) -> R:
        """The final response of a request. Earlier ones are discarded: the service is asked to send
        them bare (`FINAL_ONLY`), and any marked `FINAL` "0" is not decoded.

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
            if delivery.properties.get(FINAL) == "0":  # neither the answer nor an error: not decoded
                if deadline is not None:
                    deadline.reschedule(loop.time() + wait)
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

        def fail(exc: BaseException) -> None:
            if not done.done():
                done.set_exception(exc)

        request_id = await self._send(request, deliver, fail, wait, final_only=True)
        try:
            async with asyncio.timeout(wait) as deadline:
                return await done
        except TimeoutError:
            raise self._timed_out(wait) from None
        finally:
            self._pending.pop(request_id, None)
