"""keyword-index: keeps a BM25 index of each collection's facts in step with the graph-update events
the triples writer sends, and answers keyword searches over it. No index logic here."""

from __future__ import annotations

from collections.abc import AsyncIterator

from tracegraph.base.flow import Flow
from tracegraph.base.processor import FlowProcessor
from tracegraph.base.specs import Consumer, Service
from tracegraph.base.stores.keyword import KeywordIndex
from tracegraph.base.stores.protocol import CollectionRef
from tracegraph.flow.store_folder import store_folder_held
from tracegraph.schemas.search import GraphUpdate, KeywordMatch, KeywordQueryRequest, KeywordQueryResponse


class KeywordIndexProcessor(FlowProcessor):
    name = "keyword-index"
    # One update at a time, so a removal never overtakes the write it undoes.
    input = Consumer("input", GraphUpdate, prefetch=1)
    query = Service("query", KeywordQueryRequest, KeywordQueryResponse, prefetch=16)

    async def start(self) -> None:
        folder = self.settings.data_dir / "keywords"
        await self._stack.enter_async_context(store_folder_held(self.name, folder))
        self.index = KeywordIndex(folder)
        self._stack.push_async_callback(self.index.aclose)
        await super().start()

    @input.handler
    async def update(self, message: GraphUpdate, flow: Flow) -> None:
        meta = message.metadata
        await self.index.apply(CollectionRef(meta.user, meta.collection), message.added, message.removed)

    @query.handler
    async def search(self, req: KeywordQueryRequest, flow: Flow) -> AsyncIterator[KeywordQueryResponse]:
        hits = await self.index.search(CollectionRef(req.user, req.collection), req.query, req.limit)
        yield KeywordQueryResponse(matches=[KeywordMatch(triple=h.triple, text=h.text, score=h.score) for h in hits])
