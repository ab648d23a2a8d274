"""What the answering processors (GraphRAG, Document RAG, search, the agent) share: the clients for the
LLM and the librarian, the explainability output, how an explain event leaves them — stored in the
caller's collection for audit, and streamed to the caller with the answer — and the refusal of a
collection nothing was ever loaded into."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeVar

from tracegraph.base.errors import UnknownCollection
from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Client, Producer
from tracegraph.base.stores.protocol import ALL_GRAPHS, RETRIEVAL_GRAPH
from tracegraph.schemas.embeddings import EmbeddingsRequest, EmbeddingsResponse
from tracegraph.schemas.ingest import Metadata, Triples
from tracegraph.schemas.library import LibrarianRequest, LibrarianResponse
from tracegraph.schemas.llm import TextCompletionRequest, TextCompletionResponse
from tracegraph.flow.graph_rag.pipeline import Chunk, Explain, Finished
from tracegraph.schemas.rdf import Triple
from tracegraph.schemas.retrieval import RagRequest, RagResponse, Source
from tracegraph.schemas.triples import SparqlQueryRequest, SparqlQueryResponse, TriplesQueryRequest, TriplesQueryResponse

R = TypeVar("R", bound=RagResponse)


class AnsweringProcessor(FlowProcessor):
    explainability = Producer("explainability", Triples)
    completion = Client("text-completion", TextCompletionRequest, TextCompletionResponse)
    librarian = Client("librarian", LibrarianRequest, LibrarianResponse)
    triples = Client("triples", TriplesQueryRequest, TriplesQueryResponse)

    async def explain(self, flow: Flow, req: Any, uri: str, triples: list[Triple]) -> dict[str, Any]:
        """Send one explain event to the explainability writer, for the request's user and collection;
        returns the response fields that stream the same event to the caller."""
        meta = Metadata(id=uri, root="", user=req.user, collection=req.collection)
        await flow[self.explainability].send(Triples(metadata=meta, triples=triples))
        return explain_fields(uri, triples)

    async def require_collection(self, flow: Flow, req: Any) -> None:
        """Refuse a question for a collection the user never loaded anything into, before anything is
        written there: its trace and answer document would make it exist."""
        if not await self.collection_known(flow, req.user, req.collection):
            raise UnknownCollection(req.user, req.collection)

    async def collection_known(self, flow: Flow, user: str, collection: str) -> bool:
        """Anything stored in the collection's graphs (documents processed, triples imported, traces of
        earlier questions): one indexed lookup. Else the librarian's records: a document not processed yet."""
        reply = await flow[self.triples].request(TriplesQueryRequest(g=ALL_GRAPHS, limit=1, user=user,
                                                                     collection=collection))
        if reply.triples:
            return True
        listed = await flow[self.librarian].request(
            LibrarianRequest(operation="list-documents", user=user, collection=collection))
        return bool(listed.document_metadatas)

    async def rag_responses(self, flow: Flow, req: RagRequest, steps: AsyncIterator[Any], response: type[R],
                            stream_end: str = "chunk") -> AsyncIterator[R]:
        """A RAG pipeline's steps as responses: explain events (unless the caller asked for none), answer
        chunks, and the last message — the whole answer, or when streaming an empty one of type
        `stream_end` — with token counts and sources."""
        async for step in steps:
            if isinstance(step, Explain):
                if req.explain:
                    yield response(**await self.explain(flow, req, step.uri, step.triples))
            elif isinstance(step, Chunk):
                yield response(response=step.text, end_of_stream=step.end_of_stream)
            elif isinstance(step, Finished):
                yield response(
                    message_type=stream_end if req.streaming else "chunk",
                    response="" if req.streaming else step.answer, end_of_stream=not req.streaming,
                    end_of_session=True, in_token=step.usage.in_token, out_token=step.usage.out_token,
                    model=step.usage.model, sources=[Source(uri=u, title=t) for u, t in step.sources] or None)


class RagProcessor(AnsweringProcessor):
    """GraphRAG and Document RAG also embed the question and read the collection's graph (labels, titles)."""

    embeddings = Client("embeddings", EmbeddingsRequest, EmbeddingsResponse)
    sparql = Client("sparql", SparqlQueryRequest, SparqlQueryResponse)


def explain_fields(uri: str, triples: list[Triple], graph: str | None = None) -> dict[str, Any]:
    """An explain event as response fields (the same on every answering service's response)."""
    return {"message_type": "explain", "explain_id": uri, "explain_graph": graph or RETRIEVAL_GRAPH,
            "explain_triples": triples}
