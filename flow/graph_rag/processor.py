"""graph-rag over the bus: requests in, GraphRagPipeline out. Explain events go to the caller (inline,
as upstream's client expects) and to the explainability topic (stored by the writer)."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace

from tracegraph.base.errors import LlmUnavailable, RemoteError, TraceGraphError
from tracegraph.base.flow import Flow
from tracegraph.base.llm.completion import Completion
from tracegraph.base.provenance.vocab import RDFS
from tracegraph.base.specs import Client, Service
from tracegraph.flow.answering import RagProcessor
from tracegraph.flow.graph_rag.pipeline import GraphRagPipeline, Limits
from tracegraph.schemas.embeddings import EmbeddingsRequest, VectorQueryRequest, VectorQueryResponse
from tracegraph.schemas.library import DocumentMetadata, LibrarianRequest
from tracegraph.schemas.llm import TextCompletionRequest
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Term, Triple
from tracegraph.schemas.retrieval import GraphRagRequest, GraphRagResponse
from tracegraph.schemas.triples import SparqlQueryRequest, TriplesQueryRequest


class BusTools:
    """GraphRagTools over the flow's clients, for one request's user and collection."""

    def __init__(self, processor: "GraphRagProcessor", flow: Flow, req: GraphRagRequest) -> None:
        self.p, self.flow, self.user, self.collection = processor, flow, req.user, req.collection

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), 256):
            reply = await self.flow[self.p.embeddings].request(EmbeddingsRequest(texts=list(texts[start:start + 256])))
            vectors += reply.vectors
        return vectors

    async def nearest_entities(self, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        reply = await self.flow[self.p.graph_embeddings].request(VectorQueryRequest(
            vector=list(vector), limit=limit, user=self.user, collection=self.collection))
        return [(m.id, m.score) for m in reply.matches]

    async def match(self, s: Term | None = None, p: IriTerm | None = None, o: Term | None = None,
                    g: str | None = None, limit: int = 100) -> list[Triple]:
        reply = await self.flow[self.p.triples].request(TriplesQueryRequest(
            s=s, p=p, o=o, g=g, limit=limit, user=self.user, collection=self.collection))
        return reply.triples

    async def labels(self, iris: Sequence[str]) -> dict[str, str]:
        """One SPARQL query per 400 IRIs; an engine without SPARQL gets one pattern lookup per IRI."""
        found: dict[str, str] = {}
        for start in range(0, len(iris), 400):
            batch = [i for i in iris[start:start + 400] if ">" not in i and " " not in i]
            query = ("SELECT ?s ?l WHERE { VALUES ?s { " + " ".join(f"<{i}>" for i in batch) +
                     " } ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l }")
            try:
                reply = await self.flow[self.p.sparql].request(SparqlQueryRequest(
                    query=query, limit=len(batch) * 4, user=self.user, collection=self.collection))
            except RemoteError:
                for value in batch:
                    hit = await self.match(s=IriTerm(iri=value), p=RDFS.label, limit=1)
                    if hit and isinstance(hit[0].o, LiteralTerm):
                        found[value] = hit[0].o.value
                continue
            for row in reply.bindings:
                s, label = row.get("s"), row.get("l")
                if isinstance(s, IriTerm) and isinstance(label, LiteralTerm):
                    found.setdefault(s.iri, label.value)
        return found

    async def complete(self, system: str, prompt: str) -> Completion:
        try:
            reply = await self.flow[self.p.completion].request(TextCompletionRequest(system=system, prompt=prompt))
        except RemoteError as exc:
            raise (LlmUnavailable(exc.message) if exc.type == "llm-unavailable" else exc) from None
        return Completion(reply.response, reply.model, reply.in_token, reply.out_token)

    async def stream(self, system: str, prompt: str) -> AsyncIterator[str | Completion]:
        pieces: list[str] = []
        try:
            async for reply in self.flow[self.p.completion].stream(
                    TextCompletionRequest(system=system, prompt=prompt, streaming=True)):
                if reply.response:
                    pieces.append(reply.response)
                    yield reply.response
                if reply.end_of_stream:
                    yield Completion("".join(pieces), reply.model, reply.in_token, reply.out_token)
        except RemoteError as exc:
            raise (LlmUnavailable(exc.message) if exc.type == "llm-unavailable" else exc) from None

    async def save_answer(self, document_id: str, title: str, text: str) -> bool:
        try:
            await self.flow[self.p.librarian].request(LibrarianRequest(
                operation="add-document", user=self.user, collection=self.collection,
                content=base64.b64encode(text.encode()).decode(),
                document_metadata=DocumentMetadata(id=document_id, kind="text/plain", title=title,
                                                   document_type="answer", collection=self.collection)))
            return True
        except TraceGraphError:
            return False  # the trace then has no tg:document, as upstream does


class GraphRagProcessor(RagProcessor):
    name = "graph-rag"
    request = Service("request", GraphRagRequest, GraphRagResponse, prefetch=8)
    graph_embeddings = Client("graph-embeddings", VectorQueryRequest, VectorQueryResponse)

    limits = Limits()

    @request.handler
    async def answer(self, req: GraphRagRequest, flow: Flow) -> AsyncIterator[GraphRagResponse]:
        overrides = {k: v for k, v in {
            "entity_limit": req.entity_limit, "triple_limit": req.triple_limit,
            "max_subgraph_size": req.max_subgraph_size, "max_path_length": req.max_path_length,
            "edge_limit": req.edge_limit}.items() if v is not None}
        pipeline = GraphRagPipeline(BusTools(self, flow, req), replace(self.limits, **overrides))
        steps = pipeline.run(req.query, streaming=req.streaming, parent_uri=req.parent_uri)
        async for response in self.rag_responses(flow, req, steps, GraphRagResponse):
            yield response
