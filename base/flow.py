"""One flow of one processor: its specs bound to topics, the tasks that consume them, typed handles."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from tracegraph.base.bus import codec
from tracegraph.base.bus.protocol import Backend, Delivery
from tracegraph.base.bus.topic import Topic
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import ConfigError, DecodeError, TraceGraphError, TransientError
from tracegraph.base.specs import Client, Consumer, Parameter, Producer, Service, Spec
from tracegraph.schemas.base import Error, Message, ServiceResponse

if TYPE_CHECKING:
    from tracegraph.base.processor import Processor

log = logging.getLogger(__name__)

M = TypeVar("M", bound=Message)
Q = TypeVar("Q", bound=Message)
R = TypeVar("R", bound=ServiceResponse)
T = TypeVar("T")

TopicMap = Mapping[str, Any]  # spec name -> topic string, or {"request": ..., "response": ...}


class ProducerHandle(Generic[M]):
    """Publishes messages of one schema on the topic a flow bound to a Producer spec."""

    def __init__(self, backend: Backend, topic: Topic, schema: type[M]) -> None:
        self.backend = backend
        self.topic = topic
        self.schema = schema

    async def send(self, message: M, properties: Mapping[str, str] | None = None) -> None:
        if not isinstance(message, self.schema):
            raise TypeError(f"{self.topic} carries {self.schema.__name__}, not {type(message).__name__}")
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
        """Bind every spec; on failure, undo what was bound and re-raise."""
        try:
            for spec in self.processor.specs.values():
                await self._bind(spec)
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
            client = RequestClient(backend, self._topic(spec, "request"), self._topic(spec, "response"),
                                   spec.request, spec.response, owner=self.processor.name,
                                   timeout=self.processor.settings.request_timeout)
            self._handles[id(spec)] = await self._stack.enter_async_context(client)
        elif isinstance(spec, Service):
            await self._consume(self._topic(spec, "request"), spec.prefetch, ServiceRunner(self, spec))
        elif isinstance(spec, Consumer):
            await self._consume(self._topic(spec), spec.prefetch, ConsumerRunner(self, spec))

    async def _consume(self, topic: Topic, prefetch: int, runner: "Runner") -> None:
        deliveries = await self._stack.enter_async_context(
            self.processor.backend.subscribe(topic, self.processor.subscription, prefetch=prefetch))
        task = asyncio.create_task(self._pump(deliveries, runner), name=f"{self.processor.name}:{topic}")
        self._tasks.add(task)

    async def _pump(self, deliveries: AsyncIterator[Delivery], runner: "Runner") -> None:
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
    """Runs a handler for one delivery and settles it: ack on success, nack only for transient errors."""

    def __init__(self, flow: Flow, spec: Consumer[Any] | Service[Any, Any]) -> None:
        self.flow = flow
        self.spec = spec
        self.processor = flow.processor
        self.schema = spec.request if isinstance(spec, Service) else spec.schema

    async def settle(self, delivery: Delivery) -> None:
        try:
            message = codec.decode(delivery.body, delivery.properties, self.schema)
        except DecodeError as exc:
            log.error("%s: dropped undecodable message on %r: %s", self.processor.name, self.spec.name, exc)
            self.processor.stats.undecodable += 1
            await self.refuse(delivery, Error(type="bad-request", message=str(exc)))
            await delivery.ack()
            return
        try:
            await self.handle(message, delivery)
        except TransientError as exc:
            if delivery.attempt < self.processor.settings.max_attempts:
                log.warning("%s: attempt %d failed, will retry: %s", self.processor.name, delivery.attempt, exc)
                await delivery.nack()
                return
            log.error("%s: giving up after %d attempts: %s", self.processor.name, delivery.attempt, exc)
            await self.refuse(delivery, Error(type="gave-up", message=f"after {delivery.attempt} attempts: {exc}"))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if isinstance(exc, TraceGraphError):  # an expected refusal: no traceback needed
                log.info("%s: %r refused a request: %s", self.processor.name, self.spec.name, exc)
            else:
                log.exception("%s: handler %r failed", self.processor.name, self.spec.name)
            self.processor.stats.failed += 1
            kind = getattr(exc, "error_type", None) or f"{self.processor.name}-error"
            await self.refuse(delivery, Error(type=kind, message=str(exc) or type(exc).__name__))
        else:
            self.processor.stats.handled += 1
        await delivery.ack()

    async def handle(self, message: Message, delivery: Delivery) -> None:
        raise NotImplementedError

    async def refuse(self, delivery: Delivery, error: Error) -> None:
        """Tell the sender, where there is one to tell, that its message failed."""


class ConsumerRunner(Runner):
    async def handle(self, message: Message, delivery: Delivery) -> None:
        await self.spec.run(self.processor, message, self.flow)


class ServiceRunner(Runner):
    """Streams a handler's responses, one behind, so the last can be marked final before it is sent."""

    def __init__(self, flow: Flow, spec: Service[Any, Any]) -> None:
        super().__init__(flow, spec)
        self.responses = flow._topic(spec, "response")
        self.response_type: type[ServiceResponse] = spec.response

    async def _send(self, response: ServiceResponse, request_id: str) -> None:
        body, props = codec.encode(response, {"id": request_id})
        await self.processor.backend.publish(self.responses, body, props)

    async def handle(self, message: Message, delivery: Delivery) -> None:
        request_id = delivery.properties.get("id", "")
        previous: ServiceResponse | None = None
        try:
            async for response in self.spec.run(self.processor, message, self.flow):
                if previous is not None:
                    await self._send(previous, request_id)
                previous = response
        except Exception:
            if previous is not None:  # what the handler said before failing still reaches the caller
                await self._send(previous, request_id)
            raise
        if previous is None:
            previous = self.response_type.model_validate({self.response_type.final_field: True})
        await self._send(previous.as_final(), request_id)

    async def refuse(self, delivery: Delivery, error: Error) -> None:
        request_id = delivery.properties.get("id")
        if request_id:
            await self._send(self.response_type.failure(error), request_id)
