"""The derived structures converge: RAPTOR's first (full) build keeps the chunks whose records are not
stored yet pending instead of acknowledging them, passages announced by graph updates join, and a
reconciliation finds and repairs what a given-up message left out; the status says how much is covered."""

from __future__ import annotations

import asyncio
import hashlib
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import pytest

from tracegraph.base.communities.detect import DetectionParams
from tracegraph.base.errors import LlmUnavailable, RemoteError, TransientError
from tracegraph.base.raptor import tree as rt
from tracegraph.base.retrieval.tools import RetrievedChunk
from tracegraph.base.settings import RuntimeSettings
from tracegraph.cli.rebuild_communities import print_status
from tracegraph.flow.derived.community import CommunityProcessor
from tracegraph.flow.derived.coverage import BEHIND, CURRENT, REPAIRING, Coverage, state_of
from tracegraph.flow.derived.maintainer import Changes, RunReport
from tracegraph.flow.derived.raptor import RaptorProcessor, placed_passages
from tracegraph.schemas.ingest import Metadata, TextChunk
from tracegraph.schemas.rdf import IriTerm, Triple
from tracegraph.schemas.search import GraphUpdate

SCOPE = ("default", "c")
TEXTS = {f"urn:chunk:{n}": f"Passage {n} is about topic {n % 3} and nothing else." for n in range(12)}


def vector_of(text: str) -> np.ndarray:
    """What the embeddings service (and so the vector store) would hold for a text."""
    return np.frombuffer(hashlib.sha256(text.encode()).digest(), dtype=np.uint8).astype(np.float32) - 128


@dataclass
class Reply:
    bindings: list[dict]


@dataclass
class FakeTools:
    """The collection as the bus would show it: the passages the source graph records and those the
    vector store holds; the derived graph starts empty (saves go to the processor's fake `save`)."""

    recorded: set[str] = field(default_factory=set)
    vectors: set[str] = field(default_factory=set)
    user: str = "default"
    collection: str = "c"
    embedded: list[str] = field(default_factory=list)  # every text sent to the embeddings service
    lookups: int = 0  # vector-store requests

    async def sparql(self, query: str, *, limit: int, timeout: float) -> Reply:
        return Reply([{"chunk": IriTerm(iri=uri)} for uri in sorted(self.recorded)])

    async def match(self, **_: object) -> list:
        return []

    async def chunks(self, uris, with_vectors=False):
        self.lookups += 1
        return [RetrievedChunk(u, 1.0, TEXTS[u], "urn:doc:1", vector_of(TEXTS[u]) if with_vectors else None)
                for u in uris if u in self.vectors]

    async def embed(self, texts):
        self.embedded += texts
        return [vector_of(t) for t in texts]

    async def complete(self, system: str, prompt: str):
        raise LlmUnavailable("no LLM in this test")


def chunk(uri: str) -> TextChunk:
    return TextChunk(metadata=Metadata(id=uri, root="urn:doc:1", collection="c"), text=TEXTS[uri],
                     document="urn:doc:1", index=1)


@pytest.fixture
def raptor() -> RaptorProcessor:
    processor = RaptorProcessor(backend=None, settings=RuntimeSettings())  # type: ignore[arg-type]
    processor.params, processor.trees, processor.standing = rt.TreeParams(), {}, {}
    processor.runs = {SCOPE: RunReport()}
    processor.saved = []

    async def save(tools, *, drop=(), add=(), drop_all=False):
        processor.saved.append(len(add))

    processor.save = save  # type: ignore[method-assign]
    return processor


def arrivals(*uris: str) -> Changes:
    changes = Changes()
    for uri in uris:
        changes.absorb(chunk(uri))
    return changes


def test_coverage_counts_what_is_missing_and_what_is_kept_too_long():
    gap = Coverage.of("passages", ["a", "b", "c"], ["b", "c", "z"])
    assert gap.missing == {"a"} and gap.extra == {"z"} and not gap.complete
    assert gap.counts() == {"passages-covered": 2, "passages-total": 3, "passages-gone-but-kept": 1}
    assert state_of(gap, repairing=False) == BEHIND and state_of(gap, repairing=True) == REPAIRING
    assert state_of(Coverage.of("entities", ["a"], ["a"]), repairing=False) == CURRENT


async def test_the_first_full_build_keeps_unrecorded_chunks_pending(raptor):
    uris = sorted(TEXTS)
    tools = FakeTools(recorded=set(uris[:8]))  # the triples writer is down for the last four
    with pytest.raises(TransientError, match="4 passage"):
        await raptor.refresh(tools, SCOPE, arrivals(*uris))
    assert raptor.saved, "the recorded passages are stored meanwhile"
    assert set(placed_passages(raptor.trees[SCOPE][0])) == set(uris[:8])

    tools.recorded = set(uris)  # the writer is back: the redelivered chunks join
    assert await raptor.refresh(tools, SCOPE, arrivals(*uris)) == "incremental"
    assert set(placed_passages(raptor.trees[SCOPE][0])) == set(uris)


async def test_passages_announced_by_a_graph_update_join_from_the_vector_store(raptor):
    uris = sorted(TEXTS)
    tools = FakeTools(recorded=set(uris[:6]), vectors=set(uris))
    await raptor.refresh(tools, SCOPE, arrivals(*uris[:6]))
    tools.recorded = set(uris)
    changes = Changes()
    changes.absorb(GraphUpdate(metadata=Metadata(id="u", root="r", collection="c"), passages=uris[6:]))
    lookups = tools.lookups
    assert await raptor.refresh(tools, SCOPE, changes) == "incremental"
    assert set(placed_passages(raptor.trees[SCOPE][0])) == set(uris)
    assert tools.embedded == [] and tools.lookups == lookups + 1, "one vector-store request brings text and vector"


async def test_repair_adds_passages_whose_chunks_were_given_up_and_drops_gone_ones(raptor):
    uris = sorted(TEXTS)
    tools = FakeTools(recorded=set(uris[:6]), vectors=set(uris))
    await raptor.refresh(tools, SCOPE, arrivals(*uris[:6]))
    tools.recorded = set(uris[2:])  # six more recorded, their chunk messages given up; two removed
    gap = await raptor.coverage(tools, SCOPE)
    assert gap.missing == set(uris[6:]) and gap.extra == set(uris[:2])

    assert await raptor.repair(tools, SCOPE, gap) == "incremental"
    assert (await raptor.coverage(tools, SCOPE)).complete


async def test_repair_of_an_empty_tree_builds_it(raptor):
    tools = FakeTools(recorded=set(TEXTS), vectors=set(TEXTS))
    gap = await raptor.coverage(tools, SCOPE)
    assert gap.missing == set(TEXTS)
    assert await raptor.repair(tools, SCOPE, gap) == "full"
    assert (await raptor.coverage(tools, SCOPE)).complete


def test_status_shows_coverage_and_state(capsys):
    print_status("raptor", "c", {"counts": {"passages": 52}, "mode": "incremental", "state": "behind",
                                 "coverage": {"passages-covered": 52, "passages-total": 92,
                                              "passages-gone-but-kept": 0}})
    assert "  coverage: 52 of 92 passages in the tree (behind)" in capsys.readouterr().out
    print_status("community", "c", {"counts": {}, "state": "repairing",
                                    "coverage": {"entities-covered": 0, "entities-total": 40}})
    out = capsys.readouterr().out
    assert "no communities yet" in out and "coverage: 0 of 40 entities in communities (repairing)" in out


async def test_a_give_up_marks_the_collection_behind_and_reconciliation_repairs_it(raptor):
    uris = sorted(TEXTS)
    tools = FakeTools(recorded=set(uris[:6]), vectors=set(uris))
    await raptor.refresh(tools, SCOPE, arrivals(*uris[:6]))
    raptor.seen, raptor._locks = {}, defaultdict(asyncio.Lock)
    raptor.tools = lambda flow, scope: tools  # type: ignore[method-assign]
    flow = type("FakeFlow", (), {"id": "default"})()

    await raptor.gave_up(None, chunk(uris[6]), flow, "after 2 attempts: unavailable")  # type: ignore[arg-type]
    assert raptor.standing[SCOPE] == BEHIND and raptor.seen[SCOPE] == "default"

    tools.recorded = set(uris)
    after = await raptor.reconcile(flow, SCOPE)  # type: ignore[arg-type]
    assert after.complete and raptor.standing[SCOPE] == CURRENT
    assert raptor.runs[SCOPE].mode == "incremental"


@dataclass
class FactTools(FakeTools):
    """A collection graph of linked entities; no SPARQL (the reports go without the architecture)."""

    facts: list = field(default_factory=list)

    async def match(self, g: str | None = None, **_: object) -> list:
        return [] if g else list(self.facts)

    async def around(self, nodes, limit: int) -> list:
        wanted = set(nodes)
        return [t for t in self.facts if t.s.iri in wanted or getattr(t.o, "iri", None) in wanted]

    async def sparql(self, query: str, *, limit: int, timeout: float):
        raise RemoteError("sparql-error", "no SPARQL here")


def linked(pairs: list[tuple[int, int]]) -> list:
    return [Triple(s=IriTerm(iri=f"urn:e:{a}"), p=IriTerm(iri="https://example.org/knows"), o=IriTerm(iri=f"urn:e:{b}"))
            for a, b in pairs]


async def test_community_repair_places_entities_added_while_its_updates_were_given_up():
    processor = CommunityProcessor(backend=None, settings=RuntimeSettings())  # type: ignore[arg-type]
    processor.params, processor.states, processor.runs = DetectionParams(), {}, {SCOPE: RunReport()}

    async def save(tools, *, drop=(), add=(), drop_all=False):
        pass

    processor.save = save  # type: ignore[method-assign]
    tools = FactTools(facts=linked([(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)]))
    assert await processor.refresh(tools, SCOPE, Changes(nodes={"urn:e:0"})) == "full"
    tools.facts += linked([(6, 7), (7, 8), (8, 6), (8, 0)])  # their graph updates were given up
    gap = await processor.coverage(tools, SCOPE)
    assert gap.missing == {"urn:e:6", "urn:e:7", "urn:e:8"} and not gap.extra

    assert await processor.repair(tools, SCOPE, gap) == "incremental"
    assert (await processor.coverage(tools, SCOPE)).complete


async def test_raptor_reuses_the_stored_chunk_vectors_and_embeds_only_the_missing(raptor):
    uris = sorted(TEXTS)
    tools = FakeTools(recorded=set(uris[:8]), vectors=set(uris[:10]))  # two vectors not stored yet
    await raptor.refresh(tools, SCOPE, arrivals(*uris[:8]))
    assert tools.embedded == [], "every chunk of the first build had its vector stored"
    tools.recorded = set(uris)
    await raptor.refresh(tools, SCOPE, arrivals(*uris[8:]))
    assert sorted(tools.embedded) == sorted(TEXTS[u] for u in uris[10:]), "only the two without a stored vector"
    tree = raptor.trees[SCOPE][0]
    assert set(placed_passages(tree)) == set(uris)
    stored = vector_of(TEXTS[uris[0]])
    assert np.allclose(tree.passages[uris[0]].vector, stored / np.linalg.norm(stored))


async def test_an_incremental_refresh_asks_only_about_the_passages_it_names(raptor):
    uris = sorted(TEXTS)
    tools = FakeTools(recorded=set(uris[:8]), vectors=set(uris))
    await raptor.refresh(tools, SCOPE, arrivals(*uris[:8]))
    tools.recorded = set(uris)
    asked: list[str] = []
    answer = tools.sparql

    async def sparql(query, *, limit, timeout):
        asked.append(query)
        return await answer(query, limit=limit, timeout=timeout)

    tools.sparql = sparql  # type: ignore[method-assign]
    await raptor.refresh(tools, SCOPE, arrivals(*uris[8:]))
    assert len(asked) == 1 and "VALUES ?chunk" in asked[0] and uris[8] in asked[0] and uris[0] not in asked[0]


async def test_waiting_summaries_are_caught_up_in_budgeted_steps(raptor):
    raptor.params = rt.TreeParams(branching=2, max_cluster=3, summaries_per_passage=0.1, min_summaries=1)
    raptor._locks = defaultdict(asyncio.Lock)
    uris = sorted(TEXTS)
    tools = FakeTools(recorded=set(uris[:6]), vectors=set(uris))
    await raptor.refresh(tools, SCOPE, arrivals(*uris[:6]))
    tools.recorded = set(uris)
    await raptor.refresh(tools, SCOPE, arrivals(*uris[6:]))
    tree = raptor.trees[SCOPE][0]
    waiting = len(tree.stale)
    assert waiting > 0, "six passages with a budget of one summary leave some waiting"
    saves = len(raptor.saved)
    assert await raptor.catch_up(tools, SCOPE) == waiting
    assert not tree.stale and len(raptor.saved) - saves == waiting, "one stored step per budget of one"
