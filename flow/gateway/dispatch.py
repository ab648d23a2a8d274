"""From (service, flow, JSON body, caller) to a started request client and a validated message.

REST (POST bodies and GET query strings alike) and the WebSocket share this, so that all check
the same things in the same order: the service exists, the caller may use it, the body is bound
to the caller's user (and names the caller where the service records who acted) and is a valid
request, and the flow runs and offers the service.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from tracegraph.base.client import RequestClient
from tracegraph.base.error_text import field_problem
from tracegraph.base.errors import ConfigError
from tracegraph.flow.gateway.auth import Identity
from tracegraph.flow.gateway.refusals import GatewayError
from tracegraph.flow.gateway.services import (
    ADMIN_FLOW_SERVICES, ADMIN_OPERATIONS, CALLER_FIELDS, FLOW_IMPORTS, FLOW_SERVICES, GLOBAL_SERVICES,
)
from tracegraph.flow.gateway.tenancy import AccessDenied, bind_user, caller_name
from tracegraph.schemas.base import Message, ServiceResponse
from tracegraph.schemas.fields import MAX_ID_CHARS, shown

if TYPE_CHECKING:
    from tracegraph.flow.gateway.app import GatewayProcessor


def validation_message(exc: ValidationError) -> str:
    """The first problem, with where it is: `request.query: Field required`, `collection: at most 200
    characters`. A schema's own check speaks for itself (`at: 'yesterday' is not a date; …`)."""
    return field_problem(exc.errors(include_input=False)[0])


def _validate(request_type: type[Message], body: Any, identity: Identity, workspace: str | None,
              caller_field: str | None = None) -> Message:
    if not isinstance(body, dict):
        raise GatewayError(400, "bad-request", "the request must be a JSON object")
    try:
        bound = bind_user(body, identity, workspace)
    except AccessDenied as exc:
        raise GatewayError(403, "access-denied", str(exc)) from None
    if caller_field is not None:
        bound = {**bound, caller_field: caller_name(identity)}
    try:
        return request_type.model_validate(bound)
    except ValidationError as exc:
        raise GatewayError(400, "bad-request", validation_message(exc)) from None


class Dispatcher:
    """Opens the route for one request; the gateway keeps the clients."""

    def __init__(self, gateway: "GatewayProcessor") -> None:
        self.gateway = gateway

    async def open(self, service: str, flow: str | None, body: Any, identity: Identity,
                   workspace: str | None = None) -> tuple[RequestClient[Any, Any], Message]:
        """The started client for the route and the request to send on it; GatewayError if refused."""
        if flow is None:
            return await self._global(service, body, identity, workspace)
        if service not in FLOW_SERVICES:
            raise GatewayError(404, "unknown-service",
                               f"no flow service {shown(service)}; try one of {', '.join(FLOW_SERVICES)}")
        if service in ADMIN_FLOW_SERVICES and not identity.admin:
            raise GatewayError(403, "access-denied", f"the {service} service needs an admin token")
        if len(flow) > MAX_ID_CHARS:
            raise GatewayError(400, "bad-request", f"flow id over {MAX_ID_CHARS:,} characters")
        request_type, response_type = FLOW_SERVICES[service]
        message = _validate(request_type, body, identity, workspace, CALLER_FIELDS.get(service))
        try:
            client = await self.gateway.client(flow, service, request_type, response_type)
        except ConfigError as exc:
            unknown = "unknown-flow" if flow not in self.gateway.interfaces else "unknown-service"
            raise GatewayError(404, unknown, str(exc)) from None
        return client, message

    async def _global(self, service: str, body: Any, identity: Identity,
                      workspace: str | None) -> tuple[RequestClient[Any, Any], Message]:
        if service not in GLOBAL_SERVICES:
            raise GatewayError(404, "unknown-service",
                               f"no service {shown(service)}; try one of {', '.join(GLOBAL_SERVICES)}")
        operation = body.get("operation") if isinstance(body, dict) else None
        if isinstance(operation, str) and operation in ADMIN_OPERATIONS.get(service, ()) and not identity.admin:
            raise GatewayError(403, "access-denied", f"{service} {operation} needs an admin token")
        request_type = GLOBAL_SERVICES[service][0]
        message = _validate(request_type, body, identity, workspace)
        return await self.gateway.global_client(service), message

    async def stream(self, service: str, flow: str | None, body: Any, identity: Identity,
                     workspace: str | None = None) -> AsyncIterator[ServiceResponse]:
        """Every response to the request; the client's errors (RemoteError, RequestTimeout,
        ServiceUnavailable, …) propagate for `refusals.failure_of` to answer."""
        client, message = await self.open(service, flow, body, identity, workspace)
        async for response in client.stream(message):
            yield response

    async def publish(self, flow: str, kind: str, body: Any, identity: Identity) -> None:
        """Send one message on a flow's one-way interface (bulk imports)."""
        if kind not in FLOW_IMPORTS:
            raise GatewayError(404, "unknown-service",
                               f"no import {shown(kind)}; try one of {', '.join(FLOW_IMPORTS)}")
        message = _validate(FLOW_IMPORTS[kind], body, identity, None)
        try:
            await self.gateway.send(flow, kind, message)
        except ConfigError as exc:
            raise GatewayError(404, "unknown-flow", str(exc)) from None
