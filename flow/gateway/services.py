"""Which request/response schemas each gateway route speaks; new services register here."""

from __future__ import annotations

from tracegraph.base.bus.topic import (
    CONFIG_REQUEST_TOPIC, CONFIG_RESPONSE_TOPIC, FLOW_REQUEST_TOPIC, FLOW_RESPONSE_TOPIC, LIBRARIAN_REQUEST_TOPIC,
    LIBRARIAN_RESPONSE_TOPIC, Topic,
)
from tracegraph.schemas.agent import AgentRequest, AgentResponse
from tracegraph.schemas.architecture import ArchitectureRequest, ArchitectureResponse
from tracegraph.schemas.base import Message, Ping, Pong, ServiceResponse
from tracegraph.schemas.config import ConfigRequest, ConfigResponse, FlowRequest, FlowResponse
from tracegraph.schemas.derived import DerivedRequest, DerivedResponse
from tracegraph.schemas.embeddings import (
    EmbeddingsRequest, EmbeddingsResponse, PassageKeywordRequest, PassageKeywordResponse, VectorQueryRequest,
    VectorQueryResponse,
)
from tracegraph.schemas.ingest import TriplesBatch
from tracegraph.schemas.library import LibrarianRequest, LibrarianResponse
from tracegraph.schemas.llm import TextCompletionRequest, TextCompletionResponse
from tracegraph.schemas.search import KeywordQueryRequest, KeywordQueryResponse, SearchRequest, SearchResponse
from tracegraph.schemas.retrieval import DocumentRagRequest, DocumentRagResponse, GraphRagRequest, GraphRagResponse
from tracegraph.schemas.temporal import ReviewRequest, ReviewResponse, TemporalRequest, TemporalResponse
from tracegraph.schemas.triples import (
    SparqlQueryRequest, SparqlQueryResponse, TriplesQueryRequest, TriplesQueryResponse,
)

# POST /api/v1/{kind}: services outside flows, with their fixed topics.
GLOBAL_SERVICES: dict[str, tuple[type[Message], type[ServiceResponse], tuple[Topic, Topic]]] = {
    "config": (ConfigRequest, ConfigResponse, (CONFIG_REQUEST_TOPIC, CONFIG_RESPONSE_TOPIC)),
    "flow": (FlowRequest, FlowResponse, (FLOW_REQUEST_TOPIC, FLOW_RESPONSE_TOPIC)),
    "librarian": (LibrarianRequest, LibrarianResponse, (LIBRARIAN_REQUEST_TOPIC, LIBRARIAN_RESPONSE_TOPIC)),
}

# POST /api/v1/flow/{flow}/service/{kind}: services a flow's blueprint exposes as interfaces.
FLOW_SERVICES: dict[str, tuple[type[Message], type[ServiceResponse]]] = {
    "ping": (Ping, Pong),
    "triples": (TriplesQueryRequest, TriplesQueryResponse),
    "sparql": (SparqlQueryRequest, SparqlQueryResponse),
    "embeddings": (EmbeddingsRequest, EmbeddingsResponse),
    "graph-embeddings": (VectorQueryRequest, VectorQueryResponse),
    "document-embeddings": (VectorQueryRequest, VectorQueryResponse),
    "text-completion": (TextCompletionRequest, TextCompletionResponse),
    "graph-rag": (GraphRagRequest, GraphRagResponse),
    "document-rag": (DocumentRagRequest, DocumentRagResponse),
    "agent": (AgentRequest, AgentResponse),
    "search": (SearchRequest, SearchResponse),
    "keyword-query": (KeywordQueryRequest, KeywordQueryResponse),
    "passage-keywords": (PassageKeywordRequest, PassageKeywordResponse),
    "community": (DerivedRequest, DerivedResponse),
    "raptor": (DerivedRequest, DerivedResponse),
    "temporal": (TemporalRequest, TemporalResponse),
    "review": (ReviewRequest, ReviewResponse),
    "architecture": (ArchitectureRequest, ArchitectureResponse),
}

# POST /api/v1/{kind}?flow=F: short routes to flow services (the reasoning service's, RSN-12), by OpenAPI tag.
SHORTCUTS: dict[str, str] = {"search": "reasoning", "sparql": "reasoning", "review": "history"}
DEFAULT_FLOW = "default"

# POST /api/v1/flow/{flow}/import/{kind}: one-way interfaces a client may publish to.
FLOW_IMPORTS: dict[str, type[Message]] = {
    "triples-bulk": TriplesBatch,
}

# Operations that change what everybody shares (config, flows): admins only once tokens are required.
ADMIN_OPERATIONS: dict[str, frozenset[str]] = {
    "config": frozenset({"put", "delete"}),
    "flow": frozenset({"put-blueprint", "delete-blueprint", "start-flow", "stop-flow"}),
}

# Flow services for admins only, whatever the operation and whichever route (REST or WebSocket) reaches them:
# the review queue decides which extracted facts every reader of a collection will see.
ADMIN_FLOW_SERVICES = frozenset({"review"})

# Fields the gateway sets to the caller's name, overriding the body: who did it is not the caller's to claim.
CALLER_FIELDS: dict[str, str] = {"review": "reviewer"}
