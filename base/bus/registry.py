"""Backends by name, imported lazily so a broker library is needed only when it is used."""

from __future__ import annotations

import importlib

from tracegraph.base.bus.protocol import Backend
from tracegraph.base.errors import ConfigError

BACKENDS: dict[str, str] = {
    "inproc": "tracegraph.base.bus.inproc:InprocBackend",
    "rabbitmq": "tracegraph.base.bus.rabbitmq:RabbitMQBackend",
    "pulsar": "tracegraph.base.bus.pulsar:PulsarBackend",
}

EXTRAS = {"rabbitmq": "tracegraph[rabbitmq]", "pulsar": "tracegraph[pulsar]"}


def create_backend(name: str, url: str | None = None) -> Backend:
    """A backend instance for `--pubsub NAME`; not yet connected."""
    target = BACKENDS.get(name)
    if target is None:
        raise ConfigError(f"unknown pubsub backend {name!r}; choose one of {', '.join(BACKENDS)}")
    module_name, class_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"pubsub backend {name!r} needs `pip install {EXTRAS.get(name, name)}`: {exc}") from exc
    return getattr(module, class_name)(url)
