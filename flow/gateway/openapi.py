"""The OpenAPI 3.1 description of the REST API, generated from the same registries and pydantic
models the gateway validates with, so the document cannot drift from what the server accepts."""

from __future__ import annotations

import warnings
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from pydantic.json_schema import PydanticJsonSchemaWarning

from tracegraph.flow.gateway.query_routes import ENTITY_ROUTES, INTENT_ROUTE, QUERY_ROUTES, QueryRoute
from tracegraph.flow.gateway.services import (
    ADMIN_FLOW_SERVICES, ADMIN_OPERATIONS, DEFAULT_FLOW, FLOW_IMPORTS, FLOW_SERVICES, GLOBAL_SERVICES, SHORTCUTS,
)
from tracegraph.schemas.base import Message
from tracegraph.schemas.fields import MAX_ID_CHARS

REF = "#/components/schemas/{model}"

DESCRIPTION = """\
REST: one POST per service, JSON in and out. A service's own error is HTTP 200 with
`{"error": {"type", "message"}}`; the gateway's refusals use 4xx/5xx with the same body.
Flow services answer with their final response, or with every response as NDJSON when
`?stream=true`. A few also answer `GET` with their request as a query string (`GET
/api/v1/temporal?at=2025-06-01`); an unknown or repeated parameter is a 400 naming it.

Streaming and multiplexing are on the WebSocket `GET /api/v1/socket` (upstream TrustGraph's
framing): send `{"type":"auth","token":"…"}` first, then `{"id","service","flow"?,"request"}`
frames; responses come back as `{"id","response","complete"}` or `{"id","error","complete":true}`.

With `TG_GATEWAY_SECRET` or `TG_GATEWAY_TOKENS` set every call needs `Authorization: Bearer
<token>`; the token decides the `user` of the request, and bodies naming another user get 403.
"""


def _package_version() -> str:
    try:
        return version("tracegraph")
    except PackageNotFoundError:
        return "0"


def _error_schema() -> dict[str, Any]:
    return {"type": "object", "required": ["error"], "properties": {"error": {
        "type": "object", "required": ["type", "message"],
        "properties": {"type": {"type": "string"}, "message": {"type": "string"}}}}}


def _errors(*statuses: int) -> dict[str, Any]:
    meaning = {400: "malformed JSON or a body that is not a valid request", 401: "missing or unknown token",
               403: "the body names another user, or the operation needs an admin token",
               404: "unknown service or flow", 413: "body over the size limit",
               503: "the bus is down or no live processor serves the request; worth retrying",
               504: "no answer in time"}
    return {str(s): {"description": meaning[s], "content": {"application/json": {
        "schema": {"$ref": REF.format(model="GatewayError")}}}} for s in statuses}


def _answers(response: type[Message] | None, streaming: bool = False) -> dict[str, Any]:
    ok: dict[str, Any] = {"application/json": {"schema": {"$ref": REF.format(model=response.__name__)}}} \
        if response else {"application/json": {"schema": {"type": "object"}}}
    if streaming:
        ok["application/x-ndjson"] = {"schema": {"$ref": REF.format(model=response.__name__)}}
    return {"200": {"description": "the service's (final) response, or its error", "content": ok},
            **_errors(400, 401, 403, 404, 413, 503, 504)}


def _operation(summary: str, request: type[Message], response: type[Message] | None,
               tag: str, streaming: bool = False) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": summary, "tags": [tag],
        "requestBody": {"required": True, "content": {"application/json": {
            "schema": {"$ref": REF.format(model=request.__name__)}}}},
        "responses": _answers(response, streaming),
    }
    if streaming:
        op["parameters"] = [{"name": "stream", "in": "query", "required": False, "schema": {"type": "boolean"},
                             "description": "every response as it arrives, one JSON object per line"}]
    return op


FLOW_PARAMETER = {"name": "flow", "in": "path", "required": True, "schema": {"type": "string"},
                  "description": "a running flow's id (see POST /api/v1/flow list-flows)", "example": "default"}


def _admin_note(kind: str) -> str:
    return " (admins only)" if kind in ADMIN_FLOW_SERVICES else ""


def _query_schema(property_schema: dict[str, Any]) -> dict[str, Any]:
    """A request field's schema as a query parameter's: never null (absent is the default), no alias title.
    Text the field does not bound (a date, `flow`, `workspace`) is refused beyond MAX_ID_CHARS anyway (a date much
    sooner), so the document says so, and a client knows how long a URL it may need."""
    kept = {k: v for k, v in property_schema.items() if k not in ("title", "anyOf", "default")}
    options = [o for o in property_schema.get("anyOf", []) if o.get("type") != "null"]
    schema = {**(options[0] if len(options) == 1 else {}), **kept} or {"type": "string"}
    if schema.get("type") == "string" and "enum" not in schema:
        schema.setdefault("maxLength", MAX_ID_CHARS)
    return schema


def _query_operation(route: QueryRoute, request: type[Message], response: type[Message],
                     tag: str = "history") -> dict[str, Any]:
    """A GET route: each accepted query parameter, typed by the request field of the same name."""
    fields = request.model_json_schema(by_alias=True)["properties"]
    parameters = [{"name": name, "in": "query", "required": False, "description": meaning,
                   "schema": _query_schema(fields.get(name, {}))} for name, meaning in route.accepted.items()]
    return {"summary": f"{route.summary} (the request as a query string)", "tags": [tag],
            "parameters": parameters, "responses": _answers(response)}


ENTITY_PARAMETER = {"name": "entity", "in": "path", "required": True, "schema": {"type": "string", "maxLength": 500},
                    "description": "the entity's name as the documents write it (Skyline, the Storage Gateway) or "
                                   "its IRI, URL-encoded; unknown in the collection: 404 naming it. For ownership, "
                                   "also a repository path (services/skyline/, src/app.py): the CODEOWNERS rule "
                                   "deciding it",
                    "example": "Skyline"}


def _architecture_paths() -> dict[str, Any]:
    request, response = FLOW_SERVICES["architecture"]
    paths: dict[str, Any] = {}
    for kind, route in ENTITY_ROUTES.items():
        op = _query_operation(route, request, response, "architecture")
        op["parameters"] = [ENTITY_PARAMETER, *op["parameters"]]
        op["responses"]["404"] = {"description": "no such entity in the collection (or no such collection)",
                                  "content": {"application/json": {"schema": {"$ref": REF.format(model="GatewayError")}}}}
        paths[f"/api/v1/{kind}/{{entity}}"] = {"get": op}
    op = _operation("does a change match its work item? (RSN-09: cosine of their embeddings, flagged below the "
                    "threshold, 0.6 by default)", request, response, "architecture")
    op["parameters"] = [{**FLOW_PARAMETER, "in": "query", "required": False,
                         "description": f"a running flow's id (default: {DEFAULT_FLOW})"}]
    paths[f"/api/v1/{INTENT_ROUTE}"] = {"post": op}
    return paths


def openapi_document() -> dict[str, Any]:
    models: list[type[Message]] = []
    paths: dict[str, Any] = {}
    for kind, (request, response, _topics) in GLOBAL_SERVICES.items():
        models += [request, response]
        admin = ADMIN_OPERATIONS.get(kind)
        note = f" ({', '.join(sorted(admin))} need an admin token)" if admin else ""
        paths[f"/api/v1/{kind}"] = {"post": _operation(f"the {kind} service{note}", request, response, kind)}
    for kind, (request, response) in FLOW_SERVICES.items():
        models += [request, response]
        op = _operation(f"the flow's {kind} service{_admin_note(kind)}", request, response, "flow services",
                        streaming=True)
        op["parameters"] = [FLOW_PARAMETER, *op["parameters"]]
        paths[f"/api/v1/flow/{{flow}}/service/{kind}"] = {"post": op}
    for kind, tag in SHORTCUTS.items():
        request, response = FLOW_SERVICES[kind]
        op = _operation(f"the {kind} service of a flow{_admin_note(kind)} (short route)", request, response, tag,
                        streaming=True)
        op["parameters"] = [{**FLOW_PARAMETER, "in": "query", "required": False,
                             "description": f"a running flow's id (default: {DEFAULT_FLOW})"}, *op["parameters"]]
        paths[f"/api/v1/{kind}"] = {"post": op}
    for kind, route in QUERY_ROUTES.items():
        request, response = FLOW_SERVICES[route.service]
        paths.setdefault(f"/api/v1/{kind}", {})["get"] = _query_operation(route, request, response)
    paths.update(_architecture_paths())
    for kind, message in FLOW_IMPORTS.items():
        models.append(message)
        op = _operation(f"publish one {kind} message into the flow", message, None, "imports")
        op["parameters"] = [FLOW_PARAMETER]
        paths[f"/api/v1/flow/{{flow}}/import/{kind}"] = {"post": op}
    paths["/api/v1/processing"] = {"get": {
        "summary": "messages waiting at each stage queue of ?flow= (null where the bus cannot count)",
        "tags": ["meta"], "parameters": [{"name": "flow", "in": "query", "schema": {"type": "string"}}],
        "responses": {"200": {"description": '{"flow", "stages": [{"queue", "processor", "waiting", "consumers"}]}'},
                      "404": {"description": "no such flow"}}}}
    paths["/api/v1/health"] = {"get": {"summary": "liveness, config version and running flows", "tags": ["meta"],
                                       "security": [], "responses": {"200": {"description": "ok"}}}}
    components: dict[str, Any] = {"GatewayError": _error_schema()}
    with warnings.catch_warnings():
        # The recursive RDF term union gets `oneOf` without an OpenAPI `discriminator` mapping; that is all it warns.
        warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
        for model in dict.fromkeys(models):
            schema = model.model_json_schema(by_alias=True, ref_template=REF)
            components.update(schema.pop("$defs", {}))
            components[model.__name__] = schema
    return {
        "openapi": "3.1.0",
        "info": {"title": "TraceGraph gateway", "version": _package_version(), "description": DESCRIPTION},
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "components": {"schemas": components,
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "paths": paths,
    }
