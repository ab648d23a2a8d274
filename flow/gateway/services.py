"""Which request/response schemas each gateway route speaks; new services register here."""

from __future__ import annotations

from tracegraph.schemas.base import Message, Ping, Pong, ServiceResponse
from tracegraph.schemas.config import ConfigRequest, ConfigResponse, FlowRequest, FlowResponse

# POST /api/v1/{kind}: services outside flows.
GLOBAL_SERVICES: dict[str, tuple[type[Message], type[ServiceResponse]]] = {
    "config": (ConfigRequest, ConfigResponse),
    "flow": (FlowRequest, FlowResponse),
}

# POST /api/v1/flow/{flow}/service/{kind}: services a flow's blueprint exposes as interfaces.
FLOW_SERVICES: dict[str, tuple[type[Message], type[ServiceResponse]]] = {
    "ping": (Ping, Pong),
}
