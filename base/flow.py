"""One flow of one processor: its specs bound to topics, the tasks that consume them, typed handles."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from tracegraph.base.bus import codec
from tracegraph.base.bus.protocol import Backend, Delivery
from tracegraph.base.bus.topic import SERVICE_SUBSCRIPTION, Topic
from tracegraph.base.client import FINAL, FINAL_ONLY, RequestClient
from tracegraph.base.error_text import bounded, bounded_error, bounded_traceback, public_message
from tracegraph.base.errors import (
    TRANSIENT_ERROR_TYPES, ConfigError, DecodeError, RemoteError, ServiceUnavailable, TraceGraphError,
    OutOfSpace, TransientError, is_out_of_space, is_transient,
)
from tracegraph.base.priority import Busy, PriorityScheduler, priority_of, queue_patience
from tracegraph.base.specs import Client, Consumer, Parameter, Producer, Service, Spec
from tracegraph.schemas.base import Error, Message, ServiceResponse

if TYPE_CHECKING:
    from tracegraph.base.processor import Processor

log = logging.getLogger(__name__)

M = TypeVar("M", bound=Message)
Q = TypeVar("Q", bound=Message)
R = TypeVar("R", bound=ServiceResponse)
T = TypeVar("T")

MAX_BACKOFF = 30.0  # seconds: the longest pause before a redelivery
SERVICE_ATTEMPTS = 3  # a service's own tries at a transiently failing request before answering the error

TopicMap = Mapping[str, Any]  # spec name -> topic string, or {"request": ..., "response": ...}


def backoff(first: float, attempt: int) -> float:
    """Seconds to wait after failed attempt `attempt` (1, 2, …): `first`, doubling, at most MAX_BACKOFF.

    >>> [backoff(0.5, n) for n in (1, 2, 3, 9)]
    [0.5, 1.0, 2.0, 30.0]
    """
    return min(first * 2 ** (attempt - 1), MAX_BACKOFF)


class ProducerHandle(Generic[M]):
    """Publishes messages of one schema on the topic a flow bound to a Producer spec."""

    def __init__(self, backend: Backend, topic: Topic, schema: type[M]) -> None:
        self.backend = backend
        self.topic = topic
        self.schema = schema

    async def send(self, message: M | codec.Encoded[M], properties: Mapping[str, str] | None = None) -> None:
        """Publish `message`; an `Encoded` one goes as the bytes it came in."""
        kind = message.schema if isinstance(message, codec.Encoded) else type(message)
        if not issubclass(kind, self.schema):
            raise TypeError(f"{self.topic} carries {self.schema.__name__}, not {kind.__name__}")
        body, props = codec.encode(message, properties)
        await self.backend.publish(self.topic, body, props)


class Flow:
    """The specs of `processor` bound to the topics of flow `id`; start() subscribes, stop() tears down."""

    def __init__(self, processor: "Processor", flow_id: str, topics: TopicMap,
                 parameters: Mapping[str, Any] | None = None) -> None:
        self.processor = processor
        self.id = flow_id
        self.topics = dict(topics)
        self.parameters = dict(parameters or {})
        self._handles: dict[int, Any] = {}
        self._stack = AsyncExitStack()
        self._tasks: set[asyncio.Task[None]] = set()
        self._ready = asyncio.Event()  # set once every spec is bound

    @overload
    def __getitem__(self, spec: Producer[M]) -> ProducerHandle[M]: ...
    @overload
    def __getitem__(self, spec: Client[Q, R]) -> RequestClient[Q, R]: ...
    @overload
    def __getitem__(self, spec: Parameter[T]) -> T: ...

    def __getitem__(self, spec: Spec) -> Any:
        try:
            return self._handles[id(spec)]
        except KeyError:
            raise ConfigError(f"spec {spec.name!r} is not bound in flow {self.id!r}") from None

    def _topic(self, spec: Spec, part: str | None = None) -> Topic:
        raw = self.topics.get(spec.name)
        if isinstance(raw, Mapping) and part is not None:
            raw = raw.get(part)
        if not isinstance(raw, str):
            what = f"{spec.name}.{part}" if part else spec.name
            raise ConfigError(
                f"flow {self.id!r} gives processor {self.processor.name!r} no topic for {what!r}")
        return Topic.parse(raw)

    async def start(self) -> None:
        """Bind every spec; on failure, undo what was bound and re-raise.

        Consumers subscribe first, so their queues exist (and keep what is published) as early as
        possible, but handle nothing until every client and producer is bound: a message taken
        before then would be refused for want of them."""
        specs = self.processor.specs.values()
        try:
            for spec in sorted(specs, key=lambda s: not isinstance(s, (Consumer, Service))):
                await self._bind(spec)
            self._ready.set()
        except BaseException:
            await self.stop()
            raise

    async def _bind(self, spec: Spec) -> None:
        backend = self.processor.backend
        if isinstance(spec, Parameter):
            self._handles[id(spec)] = spec.parse(self.parameters.get(spec.name, self.topics.get(spec.name)))
        elif isinstance(spec, Producer):
            self._handles[id(spec)] = ProducerHandle(backend, self._topic(spec), spec.schema)
        elif isinstance(spec, Client):
            settings = self.processor.settings
            client = RequestClient(backend, self._topic(spec, "request"), self._topic(spec, "response"),
                                   spec.request, spec.response, owner=self.processor.name,
                                   timeout=settings.request_timeout, unavailable_after=settings.unavailable_timeout,
                                   priority=spec.priority)
            self._handles[id(spec)] = await self._stack.enter_async_context(client)
        elif isinstance(spec, Service):
            await self._consume(self._topic(spec, "request"), SERVICE_SUBSCRIPTION, spec.prefetch,
                                ServiceRunner(self, spec))
        elif isinstance(spec, Consumer):
            await self._consume(self._topic(spec), self.processor.subscription, spec.prefetch,
                                ConsumerRunner(self, spec))

    async def _consume(self, topic: Topic, subscription: str, prefetch: int, runner: "Runner") -> None:
        deliveries = await self._stack.enter_async_context(
            self.processor.backend.subscribe(topic, subscription, prefetch=prefetch))
        task = asyncio.create_task(self._pump(deliveries, runner), name=f"{self.processor.name}:{topic}")
        self._tasks.add(task)

    async def _pump(self, deliveries: AsyncIterator[Delivery], runner: "Runner") -> None:
        await self._ready.wait()
        # The broker's prefetch bounds how many deliveries are in flight at once.
        async for delivery in deliveries:
            task = asyncio.create_task(runner.settle(delivery))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        """Cancel consumers and in-flight handlers, then release subscriptions in reverse order."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        await self._stack.aclose()


class Runner:
    """Runs a handler for one delivery and settles it: ack once the work is done or has failed for good.

    A consumer's message that fails transiently (a service unavailable, a timeout, the broker
    reconnecting) is redelivered after a backoff until `max-attempts`, then given up on and
    reported through the processor's `gave_up`. A service answers every failure at once, typed,
    and leaves retrying to its caller: a retry would repeat responses already streamed.
    """

    retries = False

    def __init__(self, flow: Flow, spec: Consumer[Any] | Service[Any, Any]) -> None:
        self.flow = flow
        self.spec = spec
        self.processor = flow.processor
        self.schema = spec.request if isinstance(spec, Service) else spec.schema
        self.read = codec.encoded if isinstance(spec, Consumer) and not spec.parsed else codec.decode

    async def settle(self, delivery: Delivery) -> None:
        try:
            message = self.read(delivery.body, delivery.properties, self.schema)
        except DecodeError as exc:
            await self._undecodable(delivery, exc)
            return
        try:
            await self.handle(message, delivery)
        except asyncio.CancelledError:
            raise  # unsettled: the broker hands the message to the next consumer
        except Exception as exc:
            if isinstance(exc, DecodeError) and isinstance(message, codec.Encoded):
                await self._undecodable(delivery, exc)  # a relay's own message, read only in its handler
                return
            if self.retries and is_transient(exc):
                if await self._retry_later(delivery, exc):
                    return
                await self.give_up(message, delivery, exc)
            else:
                await self.fail(delivery, exc)
        else:
            self.processor.stats.handled += 1
        await delivery.ack()

    async def _undecodable(self, delivery: Delivery, exc: DecodeError) -> None:
        log.error("%s: dropped undecodable message on %r: %s", self.processor.name, self.spec.name, bounded(str(exc)))
        self.processor.stats.undecodable += 1
        await self.refuse(delivery, Error(type="bad-request", message=bounded(str(exc))))
        await delivery.ack()

    async def _retry_later(self, delivery: Delivery, exc: Exception) -> bool:
        """Nack after a backoff (True), unless the attempts are spent (False). A full disk spends none:
        it passes once space is freed, and giving the message up would lose its data for good."""
        settings = self.processor.settings
        if delivery.attempt >= settings.max_attempts and not is_out_of_space(exc):
            return False
        delay = backoff(settings.retry_backoff, delivery.attempt)
        log.warning("%s: attempt %d on %r failed, retrying in %.1fs: %s", self.processor.name, delivery.attempt,
                    self.spec.name, delay, bounded_error(exc))
        await asyncio.sleep(delay)
        await delivery.nack()
        return True

    async def give_up(self, message: Message, delivery: Delivery, exc: Exception) -> None:
        log.error("%s: giving up on %r after %d attempts: %s", self.processor.name, self.spec.name,
                  delivery.attempt, bounded_error(exc))
        self.processor.stats.failed += 1
        error = f"after {delivery.attempt} attempts: {public_message('gave-up', exc)}"  # the log has the detail
        await self.refuse(delivery, Error(type="gave-up", message=error))
        await self.processor.gave_up(self.spec, message, self.flow, error)

    async def fail(self, delivery: Delivery, exc: Exception) -> None:
        if isinstance(exc, TraceGraphError):  # an expected refusal: no traceback needed
            log.info("%s: %r refused a request: %s", self.processor.name, self.spec.name, bounded_error(exc))
        else:  # the traceback, with the message (which may quote any input) bounded
            log.error("%s: handler %r failed\n%s", self.processor.name, self.spec.name, bounded_traceback(exc))
        self.processor.stats.failed += 1
        # A downstream service's own error is this service's failure, except "it is away", which the
        # caller may retry (and the gateway answers with 503).
        relayed = exc.type if isinstance(exc, RemoteError) and exc.type in TRANSIENT_ERROR_TYPES else None
        full = OutOfSpace.error_type if is_out_of_space(exc) else None  # an engine's own full-disk error
        kind = getattr(exc, "error_type", None) or relayed or full or f"{self.processor.name}-error"
        await self.refuse(delivery, Error(type=kind, message=public_message(kind, exc)))  # the log has the detail

    async def handle(self, message: Message, delivery: Delivery) -> None:
        raise NotImplementedError

    async def refuse(self, delivery: Delivery, error: Error) -> None:
        """Tell the sender, where there is one to tell, that its message failed."""


class ConsumerRunner(Runner):
    retries = True

    async def handle(self, message: Message, delivery: Delivery) -> None:
        await self.spec.run(self.processor, message, self.flow)


class ServiceRunner(Runner):
    """Streams a handler's responses, one behind, so the last can be marked final before it is sent.

    Deliveries wait for a slot of the service's `PriorityScheduler`: questions pass queued bulk
    work, and a request that cannot start within its caller's patience is answered `unavailable`."""

    def __init__(self, flow: Flow, spec: Service[Any, Any]) -> None:
        super().__init__(flow, spec)
        self.responses = flow._topic(spec, "response")
        self.response_type: type[ServiceResponse] = spec.response
        self.scheduler = PriorityScheduler(spec.concurrency or spec.prefetch, name=self.processor.name)

    async def settle(self, delivery: Delivery) -> None:
        try:
            async with self.scheduler.turn(priority_of(delivery.properties), queue_patience(delivery.properties)):
                await super().settle(delivery)
        except Busy as exc:  # never started: refused, so the caller hears at once and may retry
            await self.fail(delivery, exc)
            await delivery.ack()

    async def _send(self, response: ServiceResponse, request_id: str, final_only: bool = False) -> None:
        if response.ends_request or response.error is not None:
            body, props = codec.encode(response, {"id": request_id, FINAL: "1"})
        elif final_only:  # the caller keeps only the final response: a bare mark keeps its deadline alive
            body, props = b"", {"id": request_id, FINAL: "0"}
        else:
            body, props = codec.encode(response, {"id": request_id, FINAL: "0"})
        await self.processor.backend.publish(self.responses, body, props)

    async def handle(self, message: Message, delivery: Delivery) -> None:
        request_id = delivery.properties.get("id", "")
        final_only = delivery.properties.get(FINAL_ONLY) == "1"
        attempt = 1
        while True:
            try:
                answered = await self._answer(message, request_id, final_only)
            except TransientError as exc:
                # A store or dependency briefly away: try again while nothing has reached the caller.
                # A downstream service that is gone is reported at once; the caller decides.
                if isinstance(exc, ServiceUnavailable) or attempt >= SERVICE_ATTEMPTS or exc.answered:
                    raise
                delay = backoff(self.processor.settings.retry_backoff, attempt)
                log.warning("%s: %r attempt %d failed, retrying in %.1fs: %s", self.processor.name,
                            self.spec.name, attempt, delay, bounded_error(exc))
                await asyncio.sleep(delay)
                attempt += 1
                continue
            await self._send(answered.as_final(), request_id)
            return

    async def _answer(self, message: Message, request_id: str, final_only: bool) -> ServiceResponse:
        """Run the handler, sending each response but the last (returned, to be marked final).
        An exception raised after something was sent carries `answered = True`."""
        previous: ServiceResponse | None = None
        sent = False
        try:
            async for response in self.spec.run(self.processor, message, self.flow):
                if previous is not None:
                    await self._send(previous, request_id, final_only)
                    sent = True
                previous = response
        except Exception as exc:
            if previous is not None:  # what the handler said before failing still reaches the caller
                await self._send(previous, request_id, final_only)
                sent = True
            exc.answered = sent
            raise
        if previous is None:
            previous = self.response_type.model_validate({self.response_type.final_field: True})
        return previous

    async def refuse(self, delivery: Delivery, error: Error) -> None:
        request_id = delivery.properties.get("id")
        if request_id:
            await self._send(self.response_type.failure(error), request_id)
