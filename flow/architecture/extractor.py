"""architecture-extract: reads each whole library document (beside the chunker, which splits it) for
what its structure says directly: a CODEOWNERS file's rules, an ADR's decision, a post-mortem's failure
pattern, review comments, and any sentence saying where a service's code lives. Structure is lost in
chunks (a CODEOWNERS rule's meaning depends on every line after it), so this reads the document whole.

ADRs, post-mortems and review comments use the LLM's typed extraction when one is configured, else the
offline rules for their regular templates; the subgraph's tg:extractor says which."""

from __future__ import annotations

import base64
import logging

from tracegraph.base.architecture import codeowners, memory_docs, memory_llm
from tracegraph.base.architecture.code_paths import code_paths
from tracegraph.base.architecture.triples import (
    ByLine, code_path_facts, codeowners_facts, memory_facts, memory_spans, problem_triples, with_provenance,
)
from tracegraph.base.documents import CODEOWNERS, PDF, read_pages
from tracegraph.base.errors import RemoteError, is_transient
from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Client, Consumer, Producer
from tracegraph.schemas.ingest import DocumentLoad, Triples
from tracegraph.schemas.library import LibrarianRequest, LibrarianResponse
from tracegraph.flow.llm_choice import LlmChoice, ModelAsker
from tracegraph.schemas.llm import TextCompletionRequest, TextCompletionResponse

log = logging.getLogger(__name__)


def is_codeowners(load: DocumentLoad) -> bool:
    """By kind, or by the name GitHub gives the file (a title of "CODEOWNERS" or ".github/CODEOWNERS")."""
    return load.kind == CODEOWNERS or load.title.rsplit("/", 1)[-1] == "CODEOWNERS"


class ArchitectureExtractor(FlowProcessor):
    name = "architecture-extract"
    input = Consumer("input", DocumentLoad, prefetch=2)
    triples = Producer("triples", Triples)
    librarian = Client("librarian", LibrarianRequest, LibrarianResponse)
    completion = Client("text-completion", TextCompletionRequest, TextCompletionResponse)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.llm = LlmChoice(self.settings.extractor)

    @input.handler
    async def extract(self, load: DocumentLoad, flow: Flow) -> None:
        if load.kind == PDF:
            return  # the architecture kinds are text; a PDF's facts come from its chunks
        meta = load.metadata
        response = await flow[self.librarian].request(LibrarianRequest(
            operation="get-document-content", document_id=meta.id, user=meta.user))
        text = "\n".join(page.text for page in read_pages(base64.b64decode(response.content or ""), load.kind))
        lines: ByLine = code_path_facts(code_paths(text))
        triples, extractor, model, spans = [], "offline", None, {}
        if is_codeowners(load):
            parsed = codeowners.parse(text)
            _merge(lines, codeowners_facts(meta.id, parsed))
            triples += problem_triples(meta.id, parsed.problems, timestamp=meta.time)
            for problem in parsed.problems:
                log.warning("%s line %d: %s (line skipped)", meta.id, problem.line, problem.reason)
        elif kind := memory_docs.recognise(text, load.kind):
            records, model = await self._memory(text, load.kind, kind, flow)
            extractor = "llm" if model else "offline"
            _merge(lines, memory_facts(meta.id, records))
            spans = memory_spans(records)
        if not lines and not triples:
            return
        triples += with_provenance(meta.id, lines, timestamp=meta.time, extractor=extractor, model=model,
                                   spans=spans)
        await flow[self.triples].send(Triples(metadata=meta, triples=triples))
        log.info("architecture facts from %s: %d line(s) read (%s)", meta.id, len(lines), extractor)

    async def _memory(self, text: str, document_kind: str, kind: str,
                      flow: Flow) -> tuple[list[memory_docs.MemoryRecord], str | None]:
        """The LLM's typed records when one is configured (model named), else the offline rules'. `kind`
        is what the document was recognised as: adr, postmortem or review-comments."""
        if self.llm.use_llm():
            ask = ModelAsker(flow, self.completion)
            try:
                records = await memory_llm.extract_with_llm(text, kind, ask)
                return records, ask.model or "llm"
            except RemoteError as exc:
                if exc.type != "llm-unavailable" and is_transient(exc):
                    raise  # redelivered later
                if exc.type == "llm-unavailable":
                    self.llm.none_configured()
                else:
                    log.warning("LLM memory extraction failed (%s): using the offline rules", exc)
            except memory_llm.MemoryExtractionFailed as exc:
                log.warning("LLM memory extraction gave no usable records (%s): using the offline rules", exc)
        return memory_docs.extract(text, document_kind), None


def _merge(into: ByLine, more: ByLine) -> None:
    for line, facts in more.items():
        into.setdefault(line, []).extend(facts)
