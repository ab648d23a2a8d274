"""embeddings: texts → vectors, with the bundled model (no server, no key) or, when
TG_EMBEDDINGS_URL is set, an OpenAI-compatible embeddings endpoint."""

from __future__ import annotations

from collections.abc import AsyncIterator

from tracegraph.base.flow import Flow
from tracegraph.base.llm.embed_cache import CachedEmbedder
from tracegraph.base.llm.embeddings import Embedder
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.settings import RuntimeSettings
from tracegraph.base.specs import Service
from tracegraph.schemas.embeddings import EmbeddingsRequest, EmbeddingsResponse


def open_embedder(settings: RuntimeSettings) -> Embedder:
    if settings.embeddings_url:
        from tracegraph.base.llm.openai_embed import OpenAIEmbedder
        return OpenAIEmbedder.from_settings(settings)
    from tracegraph.base.llm.local_embed import LocalEmbedder
    return LocalEmbedder()


class EmbeddingsProcessor(FlowProcessor):
    name = "embeddings"
    # Bulk callers (vector indexing, derived structures) keep a few batches each in flight: a deep
    # prefetch takes them all into the service's own queue, where a question's request passes them,
    # and few slots keep the model's thread queue short. Bulk requests use all slots but one, and
    # LocalEmbedder runs a question's model calls ahead of bulk ones: its texts wait for the small
    # batches (BATCH_TOKENS) already running, never for a whole bulk request.
    request = Service("request", EmbeddingsRequest, EmbeddingsResponse, prefetch=64, concurrency=4)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.embedder = CachedEmbedder(open_embedder(self.settings))

    async def start(self) -> None:
        self._stack.push_async_callback(self.embedder.aclose)
        await super().start()

    @request.handler
    async def embed(self, req: EmbeddingsRequest, flow: Flow) -> AsyncIterator[EmbeddingsResponse]:
        yield EmbeddingsResponse(vectors=await self.embedder.embed(req.texts), model=self.embedder.name)
