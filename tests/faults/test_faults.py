"""The fault suite: every processor its own OS process on RabbitMQ; kill -9 one of them mid-ingest, or
stop each with SIGTERM in turn, or drop every broker connection, and the collection ends up exactly as
a clean run left it — no quad, chunk vector or entity vector lost, no chunk extracted twice — and
every explain trace of the questions answered meanwhile is stored. The structures derived from the
graph (communities, the RAPTOR tree) depend on the order updates arrived in, so they are not compared
with the clean run's: they must cover the collection as it ended up, every linked entity in one
finest-level community and every passage under one tree cluster, with nothing gone left in them. A GraphRAG process killed
mid-answer costs its caller an error within the configured deadline, not the request timeout."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tracegraph.base.errors import TraceGraphError
from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import add_document, process, wait_for_extraction

from support.cluster import PROCESSES, Cluster
from support.fault_corpus import write_corpus
from support.ingest import CORPUS
from support.names import vhost_of

pytestmark = [pytest.mark.rabbitmq, pytest.mark.faults, pytest.mark.timeout(300)]

UNAVAILABLE_AFTER = 3.0  # seconds: the deadline a caller of a dead service is held to
INGEST_TIMEOUT = 240.0
FAULT_AFTER_DOCUMENTS = 3  # the fault strikes once this many documents are on their way
VECTOR_LIMIT = 1000  # the most one vector query lists: the corpus stays below it
VICTIMS = ["librarian", "chunker", "kg-extract", "architecture-extract", "embeddings", "graph-embeddings",
           "document-embeddings", "triples", "explainability", "community", "raptor"]
QUESTIONS = ["What does the json module encode?", "How does heapq keep a heap?",
             "Which hash algorithms does hashlib offer?"]

ALL_QUADS = ("SELECT ?g ?s ?p ?o WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } "
             "FILTER(?g NOT IN (<urn:graph:community>, <urn:graph:raptor>)) } }")
LEVEL_0_MEMBERS = """PREFIX tg: <https://trustgraph.ai/ns/>
SELECT ?e ?c WHERE { GRAPH <urn:graph:community> { ?c tg:level 0 ; tg:member ?e } }"""
CLUSTERED_PASSAGES = """PREFIX tg: <https://trustgraph.ai/ns/>
SELECT ?chunk ?n WHERE { GRAPH <urn:graph:raptor> { ?n tg:level 1 ; tg:childNode ?chunk } }"""
PASSAGES = """PREFIX tg: <https://trustgraph.ai/ns/>
SELECT ?chunk WHERE { GRAPH <urn:graph:source> { ?chunk a tg:Chunk } }"""
SUBGRAPHS_PER_CHUNK = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX tg: <https://trustgraph.ai/ns/>
SELECT ?chunk (COUNT(?subgraph) AS ?n) WHERE { GRAPH <urn:graph:source> {
  ?chunk a tg:Chunk . OPTIONAL { ?subgraph a tg:Subgraph ; prov:wasDerivedFrom ?chunk } } } GROUP BY ?chunk"""


@dataclass(frozen=True)
class Snapshot:
    """What an ingest left in one collection, comparable across collections."""

    quads: frozenset[str]
    subgraphs_per_chunk: dict[str, int]
    chunk_vectors: frozenset[str]
    entity_vectors: frozenset[str]

    def differences(self, clean: "Snapshot") -> list[str]:
        found = []
        for what in ("quads", "chunk_vectors", "entity_vectors"):
            mine, theirs = getattr(self, what), getattr(clean, what)
            if mine != theirs:
                found.append(f"{what}: {len(theirs - mine)} lost, {len(mine - theirs)} extra "
                             f"(e.g. lost {sorted(theirs - mine)[:2]}, extra {sorted(mine - theirs)[:2]})")
        if self.subgraphs_per_chunk != clean.subgraphs_per_chunk:
            odd = {c: n for c, n in self.subgraphs_per_chunk.items() if n != clean.subgraphs_per_chunk.get(c)}
            found.append(f"subgraphs per chunk differ: {dict(list(odd.items())[:3])}")
        return found


TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")


def _term(binding: dict | None) -> str:
    """A term as comparable text; times (when a run loaded its documents) are the one expected difference."""
    return TIMESTAMP.sub("<time>", json.dumps(binding, sort_keys=True)) if binding else "-"


def _value(term: dict) -> str:
    """An IRI's or a literal's text from a SPARQL binding in the wire's term form."""
    return term.get("i") or term.get("v") or ""


async def snapshot(api: Api, collection: str) -> Snapshot:
    reply = await api.flow_service("default", "sparql", {"query": ALL_QUADS, "collection": collection,
                                                         "limit": 1_000_000})
    assert not reply.get("truncated"), "the quad dump was truncated"
    quads = frozenset("|".join(_term(row.get(v)) for v in ("g", "s", "p", "o")) for row in reply["bindings"])
    rows = (await api.flow_service("default", "sparql", {"query": SUBGRAPHS_PER_CHUNK,
                                                         "collection": collection}))["bindings"]
    per_chunk = {_value(row["chunk"]): int(_value(row["n"])) for row in rows}
    probe = (await api.flow_service("default", "embeddings", {"texts": ["probe"]}))["vectors"][0]
    vectors = {}
    for kind in ("document-embeddings", "graph-embeddings"):
        matches = (await api.flow_service("default", kind, {"vector": probe, "limit": VECTOR_LIMIT,
                                                            "collection": collection}))["matches"]
        assert len(matches) < VECTOR_LIMIT, f"more {kind} vectors than one query lists: use a smaller corpus"
        vectors[kind] = frozenset(m["id"] for m in matches)
    return Snapshot(quads, per_chunk, vectors["document-embeddings"], vectors["graph-embeddings"])


async def settled_snapshot(api: Api, timeout: float = 120, quiet: float = 5.0) -> Snapshot:
    """The snapshot once it has stayed the same for `quiet` seconds (redeliveries may still be landing,
    after a backoff, and a loaded machine may pause longer than one second between two of them)."""
    deadline = time.monotonic() + timeout
    previous, since = await snapshot(api, COLLECTION), time.monotonic()
    while True:
        await asyncio.sleep(1.0)
        current = await snapshot(api, COLLECTION)
        if current != previous:
            previous, since = current, time.monotonic()
        if time.monotonic() - since >= quiet or time.monotonic() > deadline:
            return current


async def ingest(api: Api, corpus: list[Path], started: asyncio.Event | None = None) -> list[str]:
    """Add and process every document (ids the same for every user), as a careful client does:
    a call refused as unavailable (its service restarting) is tried again. `started` is set once
    the first few documents are on their way, so a fault can strike mid-ingest."""
    ids = []
    for n, path in enumerate(corpus, 1):
        meta = await patiently(lambda: add_document(api, path, collection=COLLECTION,
                                                    document_id=f"urn:fault-corpus:{path.stem}"))
        await patiently(lambda: process(api, meta["id"], "default", COLLECTION))
        ids.append(meta["id"])
        if started is not None and n == FAULT_AFTER_DOCUMENTS:
            started.set()
    return ids


async def patiently(call, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await call()
        except TraceGraphError as exc:
            if "unavailable" not in str(exc) or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


COLLECTION = "corpus"


@dataclass
class Env:
    cluster: Cluster
    api: Api  # the user whose collection the questions are asked of (the clean run's)
    corpus: list[Path]
    clean: Snapshot
    clean_seconds: float
    next_user: int = 1
    last_api: Api | None = None  # the latest scenario's user

    def fresh_api(self) -> Api:
        """A user of its own for the next scenario: the same document ids land in a store of their own."""
        user = f"user{self.next_user}"
        self.next_user += 1
        self.last_api = Api(self.cluster.gateway, token=self.cluster.tokens[user], timeout=120)
        return self.last_api


@pytest.fixture(scope="module")
def env(rabbitmq_url: str, tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("faults")
    cluster = Cluster(rabbitmq_url, work / "data", work / "logs",
                      TG_UNAVAILABLE_TIMEOUT=str(UNAVAILABLE_AFTER), TG_RETRY_BACKOFF="0.25",
                      TG_REQUEST_TIMEOUT="60")
    # The stdlib prose, and a CODEOWNERS file and an ADR that architecture-extract reads whole.
    corpus = write_corpus(work / "corpus") + [CORPUS / "CODEOWNERS", CORPUS / "adr-0007-skyline-storage-gateway.md"]

    async def start() -> Env:
        await cluster.start_all(PROCESSES)
        api = Api(cluster.gateway, token=cluster.tokens["user0"], timeout=120)
        began = time.monotonic()
        ids = await ingest(api, corpus)
        await wait_for_extraction(api, "default", ids, COLLECTION, INGEST_TIMEOUT)
        clean_seconds = time.monotonic() - began
        clean = await settled_snapshot(api)
        assert len(clean.subgraphs_per_chunk) >= 40 and clean.chunk_vectors and clean.entity_vectors
        await assert_derived_complete(api)
        return Env(cluster, api, corpus, clean, clean_seconds)

    try:
        yield asyncio.run(start())
    finally:
        asyncio.run(cluster.stop_all())


async def ask(api: Api, question: str) -> list[str] | None:
    """Ask GraphRAG over the gateway; the explain ids its stream named, or None if it failed."""
    explained = []
    try:
        async for response in api.stream("default", "graph-rag", {"query": question, "collection": COLLECTION}):
            if response.get("explain_id"):
                explained.append(response["explain_id"])
    except TraceGraphError:
        return None  # a caller may be refused while a service restarts; it is not answered, so owed nothing
    return explained


async def stored_explain_ids(api: Api, collection: str) -> set[str]:
    reply = await api.flow_service("default", "sparql", {
        "query": "SELECT DISTINCT ?s WHERE { GRAPH <urn:graph:retrieval> { ?s ?p ?o } }",
        "collection": collection, "limit": 1_000_000})
    return {_value(row["s"]) for row in reply["bindings"]}


async def derived_gaps(api: Api) -> list[str]:
    """How the collection's communities and RAPTOR tree fail to cover its graph ([] when they do)."""
    from tracegraph.base.communities.graph import fact_graph
    from tracegraph.schemas.rdf import Triple

    async def rows(query: str) -> list[dict]:
        return (await api.flow_service("default", "sparql", {"query": query, "collection": COLLECTION,
                                                             "limit": 1_000_000}))["bindings"]

    facts = (await api.flow_service("default", "triples", {"collection": COLLECTION, "limit": 1_000_000}))["response"]
    linked = set(fact_graph(Triple.model_validate(t) for t in facts).entities)
    members = [_value(r["e"]) for r in await rows(LEVEL_0_MEMBERS)]
    clustered = [_value(r["chunk"]) for r in await rows(CLUSTERED_PASSAGES)]
    passages = {_value(r["chunk"]) for r in await rows(PASSAGES)}
    gaps = []
    for what, wanted, held in (("entities", linked, members), ("passages", passages, clustered)):
        if set(held) != wanted or len(held) != len(set(held)):
            gaps.append(f"{what}: {len(wanted - set(held))} uncovered, {len(set(held) - wanted)} gone but kept, "
                        f"{len(held) - len(set(held))} held twice")
    return gaps


async def assert_derived_complete(api: Api, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while (gaps := await derived_gaps(api)) and time.monotonic() < deadline:
        await asyncio.sleep(1.0)
    assert not gaps, "; ".join(gaps)


async def run_scenario(env: Env, fault) -> tuple[Snapshot, list[list[str]]]:
    """Ingest the corpus for a fresh user while `fault()` strikes and questions are asked of the clean
    run's collection; returns the settled snapshot and the explain ids of every answered question."""
    api = env.fresh_api()
    started = asyncio.Event()
    loading = asyncio.create_task(ingest(api, env.corpus, started))
    questions = asyncio.gather(*(ask(env.api, q) for q in QUESTIONS))
    await started.wait()
    await fault()
    ids = await loading
    await wait_for_extraction(api, "default", ids, COLLECTION, INGEST_TIMEOUT)
    answered = [ids for ids in await questions if ids]
    return await settled_snapshot(api), answered


async def assert_traces_stored(env: Env, answered: list[list[str]]) -> None:
    wanted = {i for ids in answered for i in ids}
    deadline = time.monotonic() + 30
    while True:
        missing = wanted - await stored_explain_ids(env.api, COLLECTION)
        if not missing or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    assert not missing, f"{len(missing)} of {len(wanted)} explain events never stored, e.g. {sorted(missing)[:3]}"


def assert_same(found: Snapshot, clean: Snapshot, what: str) -> None:
    differences = found.differences(clean)
    assert not differences, f"{what}: " + "; ".join(differences)


@pytest.mark.parametrize("victim", VICTIMS)
async def test_kill_9_mid_ingest_loses_nothing(env: Env, victim: str):
    async def fault() -> None:
        await env.cluster.kill(victim)
        await env.cluster.restart(victim, after=1.0)

    found, answered = await run_scenario(env, fault)
    assert_same(found, env.clean, f"kill -9 {victim}")
    await assert_traces_stored(env, answered)
    await assert_derived_complete(env.last_api)


async def test_each_processor_stopped_with_sigterm_in_turn_loses_nothing(env: Env):
    async def fault() -> None:
        for victim in VICTIMS:  # a rolling restart, as a deployment does
            assert await env.cluster.terminate(victim) == 0, env.cluster.tail(victim)
            env.cluster.start(victim)
            await env.cluster.wait_joined([victim])

    found, answered = await run_scenario(env, fault)
    assert_same(found, env.clean, "SIGTERM of each processor in turn")
    await assert_traces_stored(env, answered)
    await assert_derived_complete(env.last_api)


@pytest.mark.skipif(not shutil.which("rabbitmqctl"), reason="needs rabbitmqctl to drop connections")
async def test_broker_connections_dropped_mid_ingest_lose_nothing(env: Env):
    async def fault() -> None:
        dropped = await asyncio.to_thread(subprocess.run, [
            "rabbitmqctl", "close_all_connections", "-p", vhost_of(env.cluster.url), "fault suite"],
            capture_output=True, text=True, timeout=60)
        assert dropped.returncode == 0, dropped.stderr

    found, answered = await run_scenario(env, fault)
    assert_same(found, env.clean, "broker connections dropped")
    await assert_traces_stored(env, answered)
    await assert_derived_complete(env.last_api)


async def test_a_graph_rag_killed_mid_answer_fails_its_caller_within_the_deadline(env: Env):
    asking = asyncio.create_task(ask_until_error(env.api, QUESTIONS[0]))
    await asyncio.sleep(0.3)
    await env.cluster.kill("graph-rag")
    error = await asyncio.wait_for(asking, 60)
    await env.cluster.restart("graph-rag", after=0)
    # "unavailable", not "timeout": the caller was failed by the liveness deadline, not the 60 s request
    # timeout (the kind of error says which, where a stopwatch would fail on a loaded machine).
    assert error is not None and "unavailable" in error, error


async def ask_until_error(api: Api, question: str) -> str | None:
    """Keep asking until a question fails; its error text (None if every answer came back)."""
    for _ in range(200):
        try:
            async for _ in api.stream("default", "graph-rag", {"query": question, "collection": COLLECTION}):
                pass
        except TraceGraphError as exc:
            return str(exc)
    return None


def test_no_process_logged_a_traceback(env: Env):
    assert not env.cluster.tracebacks(), env.cluster.tracebacks()
