"""GET routes whose query string is a flow service's request (`GET /api/v1/temporal?at=2025-06-01`):
which parameters each accepts, and how they become the body the service's schema then validates,
so a bad value is refused by the same checks, with the same messages, as a POSTed body."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from multidict import MultiMapping

from tracegraph.flow.gateway.refusals import GatewayError
from tracegraph.flow.gateway.services import DEFAULT_FLOW
from tracegraph.schemas.fields import shown

# Every query route takes these: where to ask, and (optionally) as whom; a user other than the caller's is refused.
COMMON_PARAMETERS = {
    "flow": f"a running flow's id (default: {DEFAULT_FLOW})",
    "collection": "the collection to ask about (default: default)",
    "user": "the user whose collection it is; behind tokens only the caller's own (default: the caller's)",
    "workspace": "upstream clients' name for `user`",
}
AT_PARAMETERS = ("at", "known")
DIFF_PARAMETERS = ("from", "to", "axis")


def _bad(message: str) -> GatewayError:
    return GatewayError(400, "bad-request", message)


@dataclass(frozen=True, slots=True)
class QueryRoute:
    """`GET /api/v1/{service}`: the query string, less `flow`, is the body of a request to that
    flow service, with the `operation` that `operation_of` picks from the parameters given."""

    service: str
    summary: str
    parameters: Mapping[str, str]  # the service's own parameters: name → what it means
    operation_of: Callable[[frozenset[str]], str]
    shape: Callable[[dict[str, str]], dict[str, object]] = dict  # query values → body fields, where they differ

    @property
    def accepted(self) -> Mapping[str, str]:
        return MappingProxyType({**self.parameters, **COMMON_PARAMETERS})

    def request(self, query: MultiMapping[str]) -> tuple[str, dict[str, str]]:
        """(flow, body) for a query string. GatewayError 400 for a parameter that is unknown, given
        twice, or that cannot go with the others; the values themselves are the schema's to check."""
        unknown = sorted(set(query) - set(self.accepted))
        if unknown:
            raise _bad(f"unknown query parameter(s) {shown(', '.join(unknown))}; "
                       f"{self.service} takes {', '.join(self.accepted)}")
        repeated = sorted(name for name in set(query) if len(query.getall(name)) > 1)
        if repeated:
            raise _bad(f"query parameter(s) {', '.join(repeated)} given more than once")
        body = dict(query)
        flow = body.pop("flow", "") or DEFAULT_FLOW
        return flow, {"operation": self.operation_of(frozenset(body)), **self.shape(body)}


def temporal_operation(given: frozenset[str]) -> str:
    """`diff` when a window is asked for (`from`, `to`, `axis`), else `at`; asking both is refused.

    >>> temporal_operation(frozenset({"at", "subject"})), temporal_operation(frozenset({"from", "to"}))
    ('at', 'diff')
    """
    at, diff = [name for name in AT_PARAMETERS if name in given], [name for name in DIFF_PARAMETERS if name in given]
    if at and diff:
        raise _bad(f"{', '.join(at)} ask(s) for the graph at one moment and {', '.join(diff)} for the changes "
                   "between two; give one or the other")
    return "diff" if diff else "at"


QUERY_ROUTES: dict[str, QueryRoute] = {route.service: route for route in (
    QueryRoute("temporal", "the graph as it held at a date, or what changed between two dates", {
        "at": "valid time: the graph as it held then (default: now); YYYY-MM-DD, YYYY-MM or ISO 8601",
        "known": "record time: as the system knew it then (default: now); same forms as `at`",
        "from": "start of the window of a diff (asking for a diff); same forms as `at`",
        "to": "end of the window of a diff; after `from`",
        "axis": "`valid` (when facts held in the world, the default) or `recorded` (when the system "
                "learned or retracted them)",
        "subject": "only facts about this entity IRI",
        "limit": "most facts or changes to return (default 1000)",
    }, temporal_operation),
    QueryRoute("review", "the queue of doubtful extractions awaiting a reviewer (admins only)", {
        "status": "`pending` (the default), `approved`, `rejected` or `all`",
        "limit": "most items to return (default 1000)",
    }, lambda given: "list"),
)}


def architecture_body(query: dict[str, str]) -> dict[str, object]:
    """`q` is the request's `query`; `predicates` a comma-separated list.

    >>> architecture_body({"q": "why two regions?", "predicates": "depends on, calls"})
    {'predicates': ['depends on', 'calls'], 'query': 'why two regions?'}
    """
    body: dict[str, object] = dict(query)
    if "q" in body:
        body["query"] = body.pop("q")
    if "predicates" in body:
        body["predicates"] = [p.strip() for p in str(body["predicates"]).split(",") if p.strip()]
    return body


AS_OF_PARAMETER = {"as-of": "the answer as the graph held at this valid time (default: now); YYYY-MM-DD, YYYY-MM "
                            "or ISO 8601"}


def _architecture(operation: str, summary: str, parameters: Mapping[str, str]) -> QueryRoute:
    return QueryRoute("architecture", summary, {**parameters, **AS_OF_PARAMETER}, lambda given: operation,
                      architecture_body)


# `GET /api/v1/{kind}/{entity}`: the architecture service about one entity (a name such as Skyline, or an IRI).
ENTITY_ROUTES: dict[str, QueryRoute] = {
    "ownership": _architecture("ownership", "who owns an entity: the graph's owner edges merged with CODEOWNERS", {}),
    "dependencies": _architecture("dependencies", "an entity's dependency tree, cycles reported", {
        "depth": "how many edges away, 1 to 3 (default 1)",
        "direction": "`out`: what it depends on (the default); `in`: what depends on it",
        "predicates": "comma-separated verbs to follow instead of the default (depends on, calls, uses, "
                      "imports, runs on, …)",
        "max-edges": "most edges in the tree, nearest levels first (default 200); `truncated` says when more exist",
    }),
    "memory": _architecture("memory", "decisions, failure patterns, exceptions and memories about an entity, "
                            "ranked by relevance and recency", {
        "q": "a question to rank by (default: why the entity is as it is)",
        "limit": "most items to return (default 20)",
    }),
}
# `POST /api/v1/intent-check?flow=F`: its body is the architecture request less `operation`.
INTENT_ROUTE = "intent-check"
