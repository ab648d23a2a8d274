"""Topic names in Pulsar's shape, `persistent://tg/flow/<name>`, parsed once into a value object."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tracegraph.base.errors import TopicNotFound

_TOPIC = re.compile(r"^(persistent|non-persistent)://([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.:\-]+)$")


@dataclass(frozen=True, slots=True)
class Topic:
    """A parsed topic: durability, tenant, kind (flow, request, response, config) and name.

    `persistent` topics keep messages for their subscriptions until acknowledged;
    `non-persistent` ones deliver only to subscribers present at publish time.
    """

    persistent: bool
    tenant: str
    kind: str
    name: str

    @classmethod
    def parse(cls, text: str) -> "Topic":
        """Parse `persistent://tg/flow/chunk-load:default` and the like.

        >>> Topic.parse("non-persistent://tg/request/graph-rag:default").kind
        'request'
        """
        match = _TOPIC.match(text.strip())
        if not match:
            raise TopicNotFound(
                f"not a topic name: {text!r} (expected e.g. persistent://tg/flow/<queue>:<flow-id>)"
            )
        scheme, tenant, kind, name = match.groups()
        return cls(scheme == "persistent", tenant, kind, name)

    def __str__(self) -> str:
        scheme = "persistent" if self.persistent else "non-persistent"
        return f"{scheme}://{self.tenant}/{self.kind}/{self.name}"

    @property
    def serves_requests(self) -> bool:
        """Request topics keep their queue while the service restarts, so a request sent meanwhile
        is served once it is back (the message itself expires when its caller stops waiting)."""
        return self.kind == "request"

    @property
    def slug(self) -> str:
        """A flat name for brokers that have no hierarchy: `tg.flow.chunk-load:default`."""
        return f"{self.tenant}.{self.kind}.{self.name}"


# Every copy of a service consumes its request topic under this one name, so a caller can ask the
# broker whether anyone is serving it (only one kind of processor ever serves a request topic).
SERVICE_SUBSCRIPTION = "service"


def request_topic(service: str, flow_id: str | None = None) -> Topic:
    """The request topic of a service, per flow or global (the config service)."""
    suffix = f":{flow_id}" if flow_id else ""
    return Topic(False, "tg", "request", f"{service}{suffix}")


def response_topic(service: str, flow_id: str | None = None) -> Topic:
    """The response topic paired with `request_topic`."""
    suffix = f":{flow_id}" if flow_id else ""
    return Topic(False, "tg", "response", f"{service}{suffix}")


# The services outside flows: the config service's own topics and its change broadcast.
CONFIG_REQUEST_TOPIC = request_topic("config")
CONFIG_RESPONSE_TOPIC = response_topic("config")
FLOW_REQUEST_TOPIC = request_topic("flow")
FLOW_RESPONSE_TOPIC = response_topic("flow")
CONFIG_PUSH_TOPIC = Topic(False, "tg", "config", "push")
LIBRARIAN_REQUEST_TOPIC = request_topic("librarian")
LIBRARIAN_RESPONSE_TOPIC = response_topic("librarian")
