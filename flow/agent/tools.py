"""Running one configured tool for the agent. knowledge-query asks GraphRAG and document-query asks
Document RAG: streamed, their explain events relayed as they arrive, their Question derived from the
agent's Analysis (`parent-uri`). text-completion asks the LLM; calculator does safe arithmetic."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from tracegraph.base.llm.completion import Completion
from tracegraph.base.provenance.query import Usage
from tracegraph.base.provenance.vocab import RDF, TG
from tracegraph.flow.agent.calculator import calculate, show
from tracegraph.flow.agent.tool_config import ToolDefinition
from tracegraph.schemas.rdf import Triple
from tracegraph.schemas.retrieval import DocumentRagRequest, DocumentRagResponse, GraphRagRequest, GraphRagResponse

_FOUND = (TG.selectedEdge, TG.selectedChunk)  # a retrieval step that kept something to answer from


@dataclass(frozen=True, slots=True)
class Relayed:
    """An explain event of a tool's own trace, passed on to the agent's caller (the tool stored it)."""

    uri: str
    graph: str | None
    triples: list[Triple]

    @property
    def is_question(self) -> bool:
        return any(t.p == RDF.type and t.o == TG.Question and getattr(t.s, "iri", None) == self.uri
                   for t in self.triples)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The observation text; `found` is False when a retrieval tool had nothing to answer from, and
    `low_confidence` says how the tool flagged its answer as poorly supported, when it did."""

    text: str
    found: bool = True
    usage: Usage | None = None
    low_confidence: str | None = None


class ToolServices(Protocol):
    """The services tools call, for one request's user and collection."""

    def graph_rag(self, request: GraphRagRequest) -> AsyncIterator[GraphRagResponse]:
        ...

    def document_rag(self, request: DocumentRagRequest) -> AsyncIterator[DocumentRagResponse]:
        ...

    async def complete(self, system: str, prompt: str) -> Completion:
        ...


class ToolRunner:
    """Runs tools on behalf of one agent request: its user, collection and whether it is explained."""

    def __init__(self, services: ToolServices, user: str, collection: str, explain: bool) -> None:
        self.services, self.user, self.collection, self.explain = services, user, collection, explain

    async def run(self, tool: ToolDefinition, arguments: Mapping[str, str],
                  parent_uri: str) -> AsyncIterator[Relayed | ToolResult]:
        """Relayed explain events as they come, then one ToolResult; a failing tool raises."""
        text = tool.input_of(arguments)
        if tool.type == "calculator":
            yield ToolResult(show(calculate(text)))
        elif tool.type == "text-completion":
            done = await self.services.complete("", text)
            yield ToolResult(done.text, usage=Usage(done.in_token, done.out_token, done.model))
        else:
            request = dict(query=text, user=self.user, collection=tool.collection or self.collection,
                           streaming=True, explain=self.explain, parent_uri=parent_uri)
            responses = (self.services.graph_rag(GraphRagRequest(**request)) if tool.type == "knowledge-query"
                         else self.services.document_rag(DocumentRagRequest(**request)))
            async for item in _retrieval(responses):
                yield item


async def _retrieval(responses: AsyncIterator[GraphRagResponse | DocumentRagResponse]
                     ) -> AsyncIterator[Relayed | ToolResult]:
    """GraphRAG and Document RAG answer alike: explain events, answer chunks, a final message. A
    confidence block (on the final message, or as `tg:confidence` / `tg:lowConfidenceWarning` in the
    trace, as the search service writes them) that flags the answer is passed on as `low_confidence`."""
    pieces: list[str] = []
    found = False
    confidence: str | None = None
    warned = False
    final: GraphRagResponse | DocumentRagResponse | None = None
    async for response in responses:
        if response.message_type == "explain":
            for t in response.explain_triples:
                found = found or t.p in _FOUND
                if t.p == TG.confidence:
                    confidence = getattr(t.o, "value", None)
                elif t.p == TG.lowConfidenceWarning:
                    warned = warned or getattr(t.o, "value", None) == "true"
            yield Relayed(response.explain_id or "", response.explain_graph, response.explain_triples)
            continue
        pieces.append(response.response or "")
        if response.ends_request:
            final = response
    usage = Usage(final.in_token, final.out_token, final.model) if final else None
    found = found or bool(final and final.sources)
    block = getattr(final, "confidence", None)  # a search-shaped final message carries the block itself
    if block is not None:
        confidence, warned = f"{block.confidence:.2f}", warned or block.low_confidence_warning
    low = None
    if warned:
        low = f"confidence {confidence}, with a low-confidence warning" if confidence else "a low-confidence warning"
    yield ToolResult("".join(pieces).strip(), found=found, usage=usage, low_confidence=low)
