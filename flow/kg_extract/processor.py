"""kg-extract: each chunk → facts (default graph) + the subgraph that contains them (urn:graph:source)
+ entity contexts for the graph embeddings. LLM when one is configured, otherwise offline. A fact
whose confidence is below the flow's review-threshold goes to the review queue instead of the graph."""

from __future__ import annotations

import logging

from tracegraph.base.documents import CODEOWNERS
from tracegraph.base.errors import RemoteError, is_transient
from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.provenance.extraction import Component, failed_extraction_triples
from tracegraph.base.provenance.uris import entity_uri, subgraph_uri
from tracegraph.base.provenance.vocab import SKOS
from tracegraph.base.specs import Client, Consumer, Parameter, Producer
from tracegraph.flow.kg_extract import llm
from tracegraph.flow.llm_choice import RECHECK_LLM_SECONDS, LlmChoice, ModelAsker
from tracegraph.base.extraction.facts import Extraction, label_triples, mentioned, rated_facts, stated_dates, triage
from tracegraph.flow.kg_extract.placing import placed_provenance
from tracegraph.flow.kg_extract.workers import OfflineExtractor
from tracegraph.flow.triples.tombstone import removed_upstream
from tracegraph.schemas.ingest import EntityContext, EntityContexts, TextChunk, Triples
from tracegraph.schemas.llm import TextCompletionRequest, TextCompletionResponse
from tracegraph.schemas.triples import TriplesQueryRequest, TriplesQueryResponse

log = logging.getLogger(__name__)
COMPONENT = Component("kg-extract", "1.0")


class KnowledgeExtractor(FlowProcessor):
    name = "kg-extract"
    input = Consumer("input", TextChunk, prefetch=4)
    triples = Producer("triples", Triples)
    entities = Producer("entity-contexts", EntityContexts)
    completion = Client("text-completion", TextCompletionRequest, TextCompletionResponse)
    store = Client("triples-query", TriplesQueryRequest, TriplesQueryResponse)  # is the document removed?
    review_threshold = Parameter("review-threshold", float, default=0.3)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.llm = LlmChoice(self.settings.extractor)
        self.failed_chunks = 0
        self.offline = OfflineExtractor(self.settings.extract_workers, self.settings.spacy_model)

    async def stop(self) -> None:
        await super().stop()
        await self.offline.aclose()

    @input.handler
    async def extract(self, chunk: TextChunk, flow: Flow) -> None:
        if await self._removed(chunk, flow):
            return
        model: str | None = None
        extractor = "offline"
        if chunk.kind == CODEOWNERS:
            # Path patterns and handles are no prose: architecture-extract reads the whole file's rules. The
            # chunk still gets its (empty) subgraph, so waiting for extraction sees it done.
            await self._emit(chunk, flow, Extraction(), extractor, model)
            return
        try:
            if self.llm.use_llm():
                extraction, model = await self._with_llm(chunk, flow)
                extractor = "llm" if model is not None else "offline"
            else:
                extraction = await self._offline(chunk)
        except (llm.ExtractionFailed, RemoteError) as exc:
            if is_transient(exc):
                raise  # the text-completion service is away: redelivered later, recorded if it stays away
            # The LLM answered, but not usefully (its client already retried rate limits): report it.
            await self._record_failure(chunk, flow, "llm", str(exc))
            return
        # Removed while an LLM extracted it (seconds)? Offline extraction is too quick to ask twice.
        if model is None or not await self._removed(chunk, flow):
            await self._emit(chunk, flow, extraction, extractor, model)

    async def _removed(self, chunk: TextChunk, flow: Flow) -> bool:
        """Work for a removed document is dropped (the triples writer would refuse it anyway, but its
        entity vectors would still be written). With the triples service away the chunk is extracted:
        the writer still refuses it, and extraction does not wait on a read it can do without."""
        try:
            if not await removed_upstream(flow[self.store], chunk.metadata):
                return False
        except Exception as exc:
            if not is_transient(exc):
                raise
            log.warning("could not ask whether document %s was removed (%s); extracting chunk %s",
                        chunk.metadata.root, type(exc).__name__, chunk.metadata.id)
            return False
        log.info("dropped chunk %s: document %s was removed", chunk.metadata.id, chunk.metadata.root)
        return True

    async def gave_up(self, spec, message, flow: Flow, error: str) -> None:
        if spec is self.input:
            await self._record_failure(message, flow, "llm" if self.llm.use_llm() else "offline", error)

    async def _with_llm(self, chunk: TextChunk, flow: Flow) -> tuple[Extraction, str | None]:
        """LLM extraction; in auto mode, offline (model None) when no endpoint is configured."""
        ask = ModelAsker(flow, self.completion)
        try:
            extraction = await llm.extract(chunk.text, ask, first_line=chunk.line, model=self.settings.spacy_model)
        except RemoteError as exc:
            if exc.type == "llm-unavailable" and self.settings.extractor == "auto":
                log.info("no LLM configured: extracting offline (will ask again in %.0fs)", RECHECK_LLM_SECONDS)
                self.llm.none_configured()
                return await self._offline(chunk), None
            raise
        return extraction, ask.model

    async def _offline(self, chunk: TextChunk) -> Extraction:
        """The parser-based extraction, off the event loop (a chunk takes the parser tens of milliseconds)."""
        return await self.offline.extract(chunk)

    async def _emit(self, chunk: TextChunk, flow: Flow, extraction: Extraction, extractor: str,
                    model: str | None) -> None:
        meta = chunk.metadata
        facts = triage(rated_facts(extraction), flow[self.review_threshold])
        provenance = placed_provenance(meta.id, facts.accepted, extraction, component=COMPONENT, timestamp=meta.time,
                                       extractor=extractor, llm_model=model)
        await flow[self.triples].send(Triples(
            metadata=meta, triples=facts.accepted + label_triples(extraction) + provenance,
            confidence=facts.confidence, review=facts.queued, reasons=facts.reasons,
            valid_from=stated_dates(extraction)))
        # A definition under review is no context to find its entity by: it may be the model's invention.
        trusted = {fact.s.iri for fact in facts.accepted if fact.p == SKOS.definition}
        contexts = [EntityContext(entity=entity_uri(label), label=label, chunk=meta.id,
                                  context=extraction.definitions.get(label, "") if entity_uri(label) in trusted
                                  else extraction.contexts.get(label, ""))
                    for label in mentioned(extraction)]
        if contexts:
            await flow[self.entities].send(EntityContexts(metadata=meta, entities=contexts))

    async def _record_failure(self, chunk: TextChunk, flow: Flow, extractor: str, error: str) -> None:
        """Never a silent gap: the chunk's subgraph says extraction failed, and why."""
        self.failed_chunks += 1
        log.error("extraction failed for chunk %s of %s: %s", chunk.metadata.id, chunk.document, error)
        meta = chunk.metadata
        # Its own subgraph id: a later successful extraction does not mix with this record.
        record = failed_extraction_triples(subgraph_uri(meta.id, f"{extractor}:failed"), meta.id, component=COMPONENT,
                                           timestamp=meta.time, extractor=extractor, error=error[:1000])
        await flow[self.triples].send(Triples(metadata=meta, triples=record))
