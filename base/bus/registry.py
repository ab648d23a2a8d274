"""Backends by name, imported lazily so a broker library is needed only when it is used."""

from __future__ import annotations

from tracegraph.base.bus.protocol import Backend
from tracegraph.base.plugins import load

BACKENDS: dict[str, str] = {
    "inproc": "tracegraph.base.bus.inproc:InprocBackend",
    "rabbitmq": "tracegraph.base.bus.rabbitmq:RabbitMQBackend",
    "pulsar": "tracegraph.base.bus.pulsar:PulsarBackend",
}

EXTRAS = {"rabbitmq": "tracegraph[rabbitmq]", "pulsar": "tracegraph[pulsar]"}


def create_backend(name: str, url: str | None = None) -> Backend:
    """A backend instance for `--pubsub NAME`; not yet connected."""
    return load(BACKENDS, name, "pubsub backend", EXTRAS)(url)
