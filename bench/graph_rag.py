"""GraphRAG benchmark: query latency (p50/p95) through the real runtime with a model server that answers
instantly, on synthetic graphs of 10k and 1M edges, and the cost of explainability (`"explain": false`
beside true). Prints figures beside the aims; never asserts on timing.

How it runs
  * The model server is tests/support/openai_stub.py (OpenAIStub), for both the LLM (/v1/chat/completions)
    and the embeddings (/v1/embeddings), in a child process of its own, so that its work does not run on
    the runtime's event loop. It times its own request handling; that "model time" is subtracted per query,
    and the aim (p50 < 100 ms at 1M edges) is judged on the latency without it.
  * The chat script: before every run the parent scripts one callable reply per expected LLM call (three
    per query). The callable answers the concept-extraction call with the entity label the question
    names, the focus call with the first 10 edge ids of its prompt (JSONL), and synthesis with "ok".
  * One Stack per graph size on the inproc bus (config, librarian, triples, embeddings, graph-embeddings,
    text-completion, graph-rag, explainability), flow "default" from the packaged blueprint. The graph is
    bulk-loaded straight into the triples processor's store; entity vectors are upserted straight into the
    graph-embeddings processor's store (Qdrant local mode), from the same embedding function the stub uses.
  * Queries go through a RequestClient on non-persistent://tg/request/graph-rag:default (the bus, not the
    gateway's HTTP API), non-streaming, default Limits, one at a time. Explain on and off alternate per
    question (on-off, off-on, ...) over the same questions. Between queries the bench waits until the
    explainability writer has stored the previous query's events, so each latency is one query's own.
  * If p50 (without model time) misses 100 ms on the largest graph, a profiling pass follows: time per
    pipeline stage and per tool call (triple lookups counted), bus encode/decode time, then cProfile.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import cProfile
import functools
import io
import json
import math
import pstats
import random
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.openai_stub import OpenAIStub, hashed_embedding  # noqa: E402  (test support, reused here)

E = "https://trustgraph.ai/e/"
R = "https://trustgraph.ai/r/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
EDGE_COUNT = "https://trustgraph.ai/ns/edgeCount"
BATCH = 50_000
EDGES_PER_ENTITY = 3.5  # outgoing relation edges per entity on average (as many incoming)
PREDICATES = 50
LLM_MODEL = "stub-llm"
EMBEDDINGS_MODEL = "stub-embed"
FLOW_PROCESSORS = ["config", "librarian", "triples", "embeddings", "graph-embeddings", "document-embeddings",
                   "keyword-index", "text-completion",
                   "graph-rag", "explainability"]
EXPLAIN_EVENTS = 5  # question, grounding, exploration, focus, synthesis
AIM_P50_MS = 100.0
AIM_OVERHEAD = 0.10


# -- the model server (child process) --------------------------------------------------------------

def chat_reply(body: dict) -> str:
    """The scripted LLM: decides from the system message which pipeline call this is."""
    messages = body.get("messages", [])
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    prompt = messages[-1]["content"] if messages else ""
    if "key concepts" in system:
        named = re.search(r"Entity \d+", prompt)
        return named.group(0) if named else prompt
    if "step by step, using the tools" in system:  # the agent (bench/gateway.py): one graph query, then answer
        if "Observation:" in prompt:
            return "Thought: The graph answered.\nFinal Answer: ok"
        question = prompt.splitlines()[0].removeprefix("Question: ")
        return f"Thought: Ask the graph.\nAction: knowledge-query\nAction Input: {json.dumps({'question': question})}"
    if "select the knowledge-graph edges" in system:
        ids = [json.loads(line)["id"] for line in prompt.splitlines() if line.startswith("{")][:10]
        return "\n".join(json.dumps({"id": i, "reasoning": "It links the entity the question names."}) for i in ids)
    return "ok"


async def serve_stub(dimension: int) -> None:
    """Child process: the stub on a free port; stdin takes `script N` and `stats`, answered in JSON lines."""
    vector = functools.lru_cache(maxsize=None)(lambda text, model: tuple(hashed_embedding(text, model, dimension)))
    stub = OpenAIStub(embed=vector)
    spent = {"embeddings": [0.0, 0], "chat": [0.0, 0]}
    for attribute, name in (("_embeddings", "embeddings"), ("_chat", "chat")):
        handler = getattr(stub, attribute)

        async def timed(request, handler=handler, name=name):  # the server's own time per request
            started = time.perf_counter()
            try:
                return await handler(request)
            finally:
                spent[name][0] += time.perf_counter() - started
                spent[name][1] += 1
        setattr(stub, attribute, timed)  # read by OpenAIStub.__aenter__ when it builds its routes
    async with stub:
        print(json.dumps({"base_url": stub.base_url}), flush=True)
        loop = asyncio.get_running_loop()
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            command, *args = line.split()
            if command == "script":
                stub.script(*[chat_reply] * int(args[0]))
                print(json.dumps({"scripted": len(stub.replies)}), flush=True)
            elif command == "stats":
                stub.requests.clear()  # recorded bodies are not needed here; keep memory flat
                print(json.dumps({"seconds": sum(s for s, _ in spent.values()), "left": len(stub.replies),
                                  **{f"{k}_calls": n for k, (_, n) in spent.items()}}), flush=True)


class StubProcess:
    """The parent's handle on the child stub."""

    async def start(self, dimension: int) -> "StubProcess":
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, str(Path(__file__).resolve()), "--serve-stub", "--dimension", str(dimension),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        self.base_url = json.loads(await self.proc.stdout.readline())["base_url"]
        return self

    async def command(self, text: str) -> dict:
        self.proc.stdin.write(text.encode() + b"\n")
        await self.proc.stdin.drain()
        return json.loads(await self.proc.stdout.readline())

    async def script(self, replies: int) -> None:
        await self.command(f"script {replies}")

    async def model_seconds(self) -> float:
        return (await self.command("stats"))["seconds"]

    async def close(self) -> None:
        self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()


# -- graph, index, stack ---------------------------------------------------------------------------

def synthetic_graph(edges: int, seed: int) -> tuple[Iterator[str], int, int]:
    """N-Quads batches (entity labels, predicate labels, then `edges` random relation edges), entity count,
    and triple count."""
    entities = max(2, round(edges / EDGES_PER_ENTITY))

    def batches() -> Iterator[str]:
        rng = random.Random(seed)
        pick = rng.randrange
        lines = [f'<{E}entity-{i}> <{LABEL}> "Entity {i}" .' for i in range(entities)]
        lines += [f'<{R}relation-{k}> <{LABEL}> "relation {k}" .' for k in range(PREDICATES)]
        lines += [f"<{E}entity-{pick(entities)}> <{R}relation-{pick(PREDICATES)}> <{E}entity-{pick(entities)}> ."
                  for _ in range(edges)]
        for start in range(0, len(lines), BATCH):
            yield "\n".join(lines[start:start + BATCH]) + "\n"

    return batches(), entities, entities + PREDICATES + edges


async def wait_for(condition, what: str, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        await asyncio.sleep(0.005)


# -- one query -------------------------------------------------------------------------------------

class Runner:
    def __init__(self, stack, client, stub: StubProcess, limits: dict[str, int]) -> None:
        self.stack, self.client, self.stub, self.limits = stack, client, stub, limits
        self.explain_expected = stack["explainability"].stats.handled

    async def ask(self, question: str, explain: bool) -> dict:
        from tracegraph.schemas.retrieval import GraphRagRequest

        triples = self.stack["triples"].stats
        queries_before = triples.handled
        model_before = await self.stub.model_seconds()
        explain_triples, edges, answer = 0, None, None
        request = GraphRagRequest.model_validate({"query": question, "explain": explain, **self.limits})
        started = time.perf_counter()
        async for message in self.client.stream(request):
            if message.message_type == "explain":
                explain_triples += len(message.explain_triples)
                if message.explain_id.startswith("urn:trustgraph:prov:exploration:"):
                    edges = next(int(t.o.value) for t in message.explain_triples if t.p.iri == EDGE_COUNT)
            elif message.end_of_session:
                answer = message.response
        elapsed = time.perf_counter() - started
        triple_queries = triples.handled - queries_before
        model = await self.stub.model_seconds() - model_before
        if explain:  # let the writer store this query's events before the next query starts
            self.explain_expected += EXPLAIN_EVENTS
            writer = self.stack["explainability"].stats
            await wait_for(lambda: writer.handled + writer.failed >= self.explain_expected, "explain writes")
        if answer != "ok":
            raise RuntimeError(f"unexpected answer {answer!r} to {question!r}")
        return {"total": elapsed, "model": model, "own": elapsed - model, "explain_triples": explain_triples,
                "edges": edges, "triple_queries": triple_queries}


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


# -- profiling -------------------------------------------------------------------------------------

STAGE: contextvars.ContextVar[str] = contextvars.ContextVar("stage", default="other")


class StageTimer:
    """Timing wrappers on GraphRagPipeline stages, BusTools calls, provenance builders and the bus codec.
    Installed on the classes at run time for the profiling pass only, and removed after it."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[str, str], float] = defaultdict(float)
        self.calls: dict[tuple[str, str], int] = defaultdict(int)
        self.items: dict[tuple[str, str], int] = defaultdict(int)
        self._undo: list[tuple[object, str, object]] = []

    def add(self, key: tuple[str, str], seconds: float, items: int = 0) -> None:
        self.seconds[key] += seconds
        self.calls[key] += 1
        self.items[key] += items

    def _patch(self, owner: object, name: str, replacement: object) -> None:
        self._undo.append((owner, name, owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)))
        setattr(owner, name, replacement)

    def install(self) -> None:
        from tracegraph.base.bus import codec
        from tracegraph.base.provenance import query as prov
        from tracegraph.flow.graph_rag import pipeline
        from tracegraph.flow.retrieval_tools import BusRetrievalTools as BusTools

        timer = self

        def stage(name: str, label: str) -> None:
            original = getattr(pipeline.GraphRagPipeline, name)

            async def wrapper(*args, **kwargs):
                token = STAGE.set(label)
                started = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    timer.add(("stage", label), time.perf_counter() - started)
                    STAGE.reset(token)
            self._patch(pipeline.GraphRagPipeline, name, wrapper)

        for name, label in (("_ground", "1 grounding (LLM concepts)"), ("_rank", "2 passage ranking (PPR)"),
                            ("_seeds", "2 seed lookup (vectors, no passages)"), ("_passage_edges", "3 exploration"),
                            ("_explore", "3 exploration (walk, no passages)"), ("_focus", "4 focus"),
                            ("_sources", "6 sources tracing")):
            stage(name, label)

        synthesise = pipeline.GraphRagPipeline._synthesise

        async def synthesis_wrapper(*args, **kwargs):
            token = STAGE.set("5 synthesis")
            started = time.perf_counter()
            try:
                async for piece in synthesise(*args, **kwargs):
                    yield piece
            finally:
                timer.add(("stage", "5 synthesis"), time.perf_counter() - started)
                STAGE.reset(token)
        self._patch(pipeline.GraphRagPipeline, "_synthesise", synthesis_wrapper)

        def tool(name: str, key) -> None:
            original = getattr(BusTools, name)

            async def wrapper(self_, *args, **kwargs):
                started = time.perf_counter()
                try:
                    return await original(self_, *args, **kwargs)
                finally:
                    what, items = key(*args, **kwargs)
                    timer.add((STAGE.get(), what), time.perf_counter() - started, items)
            self._patch(BusTools, name, wrapper)

        def match_kind(s=None, p=None, o=None, g=None, limit=100):
            if p is not None and p.iri == LABEL:
                return "triples: label lookup", 1
            if g is not None:
                return "triples: source-graph lookup", 1
            return "triples: neighbourhood match", 1

        tool("match", match_kind)
        tool("around", lambda nodes, limit: ("triples: neighbourhood (one request per hop)", len(nodes)))
        tool("labels", lambda iris: ("triples: labels (SPARQL)", len(iris)))
        tool("nearest_chunks", lambda vector, limit: ("passage vector query", 1))
        tool("keyword_chunks", lambda text, limit: ("passage BM25 query", 1))
        tool("embed", lambda texts: ("embeddings request", len(texts)))
        tool("nearest_entities", lambda vector, limit: ("vector query", 1))
        tool("complete", lambda system, prompt: ("LLM completion", 1))
        tool("save_answer", lambda *a: ("librarian: save answer", 1))

        score = pipeline.score_edges

        def score_wrapper(edges, *args):
            started = time.perf_counter()
            try:
                return score(edges, *args)
            finally:
                timer.add((STAGE.get(), "score_edges (cosine in Python)"), time.perf_counter() - started, len(edges))
        self._patch(pipeline, "score_edges", score_wrapper)

        for name in ("question_triples", "grounding_triples", "exploration_triples", "focus_triples",
                     "synthesis_triples"):
            builder = getattr(prov, name)

            def built(*args, builder=builder, **kwargs):
                started = time.perf_counter()
                try:
                    return builder(*args, **kwargs)
                finally:
                    timer.add(("explain", "build explain triples"), time.perf_counter() - started)
            self._patch(prov, name, built)

        from tracegraph.base.stores.oxigraph import OxigraphTripleStore

        add = OxigraphTripleStore.add

        async def timed_add(self_, ref, triples):  # during queries only the explainability writer adds
            started = time.perf_counter()
            try:
                return await add(self_, ref, triples)
            finally:
                timer.add(("explain", "writer: store.add (after each event is sent)"), time.perf_counter() - started)
        self._patch(OxigraphTripleStore, "add", timed_add)

        encode, decode = codec.encode, codec.decode

        def timed_encode(message, properties=None):
            started = time.perf_counter()
            try:
                return encode(message, properties)
            finally:
                timer.add(("bus codec", f"encode {getattr(type(message), 'schema_name', type(message).__name__)}"),
                          time.perf_counter() - started)

        def timed_decode(body, properties, expected):
            started = time.perf_counter()
            try:
                return decode(body, properties, expected)
            finally:
                timer.add(("bus codec", f"decode {expected.schema_name}"), time.perf_counter() - started, len(body))
        self._patch(codec, "encode", timed_encode)
        self._patch(codec, "decode", timed_decode)

    def uninstall(self) -> None:
        while self._undo:
            owner, name, original = self._undo.pop()
            setattr(owner, name, original)


async def profile(runner: Runner, questions: list[str], stub: StubProcess, cprofile_queries: int) -> None:
    timer = StageTimer()
    timer.install()
    try:
        await stub.script(3 * len(questions))
        results = [await runner.ask(q, explain=True) for q in questions]
    finally:
        timer.uninstall()
    n = len(results)
    total = statistics.mean(r["total"] for r in results) * 1e3
    model = statistics.mean(r["model"] for r in results) * 1e3
    print(f"\n  profile: {n} queries, explain on, wrappers installed; mean latency {total:.1f} ms, of which "
          f"model server {model:.1f} ms")
    print(f"  {'stage / call (nested under its stage)':<58} {'calls/q':>8} {'items/q':>9} {'ms/q':>8} {'share':>6}")
    stages = sorted(k for k in timer.seconds if k[0] == "stage")
    staged = 0.0
    for key in stages:
        ms = timer.seconds[key] / n * 1e3
        staged += ms
        print(f"  {key[1]:<58} {timer.calls[key] / n:>8.1f} {'':>9} {ms:>8.1f} {ms / total:>6.0%}")
        label = key[1]
        for sub in sorted((k for k in timer.seconds if k[0] == label), key=lambda k: -timer.seconds[k]):
            sub_ms = timer.seconds[sub] / n * 1e3
            items = timer.items[sub] / n
            print(f"    {sub[1]:<56} {timer.calls[sub] / n:>8.1f} {items:>9.0f} {sub_ms:>8.1f} {sub_ms / total:>6.0%}")
    for key in sorted(k for k in timer.seconds if k[0] == "other"):
        ms = timer.seconds[key] / n * 1e3
        staged += ms
        label = {"embeddings request": "2a concept embedding (embeddings request)",
                 "librarian: save answer": "5b librarian: save answer (also when explain is off)"}.get(key[1], key[1])
        print(f"  {label:<58} {timer.calls[key] / n:>8.1f} {timer.items[key] / n:>9.0f} {ms:>8.1f} {ms / total:>6.0%}")
    print(f"  {'rest: explain emission, response encoding, bus hops':<58} {'':>8} {'':>9} "
          f"{total - staged:>8.1f} {(total - staged) / total:>6.0%}")
    for key in sorted(k for k in timer.seconds if k[0] == "explain"):
        print(f"    {'explain: ' + key[1]:<56} {timer.calls[key] / n:>8.1f} {'':>9} {timer.seconds[key] / n * 1e3:>8.1f}")
    print(f"  bus codec (every processor, same event loop; overlaps the stages above):")
    for key in sorted((k for k in timer.seconds if k[0] == "bus codec"), key=lambda k: -timer.seconds[k])[:10]:
        ms = timer.seconds[key] / n * 1e3
        kb = f"{timer.items[key] / n / 1024:>8.0f} KB" if key[1].startswith("decode") else ""
        print(f"    {key[1]:<56} {timer.calls[key] / n:>8.1f} {kb:>9} {ms:>8.1f} {ms / total:>6.0%}")

    questions = questions[:cprofile_queries]
    await stub.script(3 * len(questions))
    profiler = cProfile.Profile()
    profiler.enable()
    for q in questions:
        await runner.ask(q, explain=True)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(22)
    print(f"\n  cProfile, {len(questions)} queries (whole process: all processors share the loop), "
          "top functions by own time:")
    rows = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(rows) if line.lstrip().startswith("ncalls"))
    for line in rows[start:]:
        if line.strip():
            line = re.sub(r"/\S*/site-packages/", "", re.sub(r"/work/main/", "tracegraph/", line))
            print("   ", re.sub(r"/\S*/lib/python3\.\d+/", "", line)[:150])


# -- one graph size --------------------------------------------------------------------------------

async def bench_size(edges: int, args: argparse.Namespace, stub: StubProcess, work: Path) -> dict:
    from tracegraph.base.bus.inproc import InprocBackend
    from tracegraph.base.bus.topic import Topic
    from tracegraph.base.client import RequestClient
    from tracegraph.base.settings import RuntimeSettings
    from tracegraph.base.stores.protocol import CollectionRef, VectorItem
    from tracegraph.launch.stack import Stack, ensure_flow
    from tracegraph.schemas.retrieval import GraphRagRequest, GraphRagResponse

    ref = CollectionRef("default", "default")
    batches, entities, triple_total = synthetic_graph(edges, args.seed)
    rng = random.Random(args.seed + edges)
    wanted = args.warmup + args.queries
    named = rng.sample(range(entities), min(entities, wanted))
    others = [i for i in rng.sample(range(entities), min(entities, args.indexed + wanted)) if i not in set(named)]
    indexed = named + others[:args.indexed]

    backend = InprocBackend()
    settings = RuntimeSettings(data_dir=work / f"size-{edges}", llm_url=stub.base_url, llm_model=LLM_MODEL,
                               embeddings_url=stub.base_url, embeddings_model=EMBEDDINGS_MODEL,
                               request_timeout=120, gateway_port=0)
    async with Stack(backend, settings, FLOW_PROCESSORS) as stack:
        await ensure_flow(backend, "default", "default")
        for name in FLOW_PROCESSORS[2:]:
            await wait_for(lambda: "default" in stack[name].flows, f"{name} to join the flow")

        started = time.perf_counter()
        for text in batches:
            await stack["triples"].store.add_nquads(ref, text)
        load_s = time.perf_counter() - started

        started = time.perf_counter()
        await stack["graph-embeddings"].store.upsert(ref, "entity", [
            VectorItem(f"{E}entity-{i}", hashed_embedding(f"Entity {i}", EMBEDDINGS_MODEL, args.dimension),
                       {"label": f"Entity {i}"}) for i in indexed])
        index_s = time.perf_counter() - started
        print(f"\n{edges:,} edges: {entities:,} entities, {triple_total:,} triples loaded in {load_s:.1f} s "
              f"({triple_total / load_s:,.0f} triples/s); {len(indexed):,} entities indexed "
              f"({len(named)} named by questions + {len(indexed) - len(named):,} others, {args.dimension} dims) "
              f"in {index_s:.1f} s")

        async with RequestClient(backend, Topic.parse("non-persistent://tg/request/graph-rag:default"),
                                 Topic.parse("non-persistent://tg/response/graph-rag:default"),
                                 GraphRagRequest, GraphRagResponse, owner="bench", timeout=120) as client:
            runner = Runner(stack, client, stub, args.limits)
            questions = [f"What is connected to Entity {i}?" for i in named]
            warmups, measured = questions[:args.warmup], questions[args.warmup:]

            await stub.script(3 * 2 * len(warmups))
            for q in warmups:
                await runner.ask(q, explain=True)
                await runner.ask(q, explain=False)

            await stub.script(3 * 2 * len(measured))
            on, off = [], []
            started = time.perf_counter()
            for n, q in enumerate(measured):
                for explain in ((True, False) if n % 2 == 0 else (False, True)):
                    (on if explain else off).append(await runner.ask(q, explain))
            run_s = time.perf_counter() - started

            result = {"edges": edges, "on": on, "off": off, "run_s": run_s}
            report(result)
            miss = pct([r["own"] for r in on], .5) * 1e3 > AIM_P50_MS
            if args.profile == "always" or (args.profile == "auto" and miss and edges == max(args.sizes)):
                prof_questions = [q for q in measured][:args.profile_queries]
                await profile(runner, prof_questions, stub, args.cprofile_queries)
    return result


def report(result: dict) -> None:
    on, off = result["on"], result["off"]

    def row(label: str, samples: list[dict], key: str) -> str:
        values = [s[key] * 1e3 for s in samples]
        return f"  {label:<44} p50 {pct(values, .5):>7.1f} ms   p95 {pct(values, .95):>7.1f} ms"

    print(f"  {len(on)} questions x (explain on, explain off), alternating; {result['run_s']:.1f} s")
    print(row("latency, explain on (end to end)", on, "total"))
    print(row("latency, explain off (end to end)", off, "total"))
    print(row("model server time per query (explain on)", on, "model"))
    own_on, own_off = pct([s["own"] for s in on], .5) * 1e3, pct([s["own"] for s in off], .5) * 1e3
    print(row("without model time, explain on", on, "own") +
          f"   aim p50 < {AIM_P50_MS:.0f} ms: {'met' if own_on < AIM_P50_MS else 'MISSED'}")
    print(row("without model time, explain off", off, "own") +
          f"   aim p50 < {AIM_P50_MS:.0f} ms: {'met' if own_off < AIM_P50_MS else 'MISSED'}")
    overhead = own_on / own_off - 1
    mean_overhead = statistics.mean(s["own"] for s in on) / statistics.mean(s["own"] for s in off) - 1
    paired = statistics.median(a["own"] / b["own"] - 1 for a, b in zip(on, off))
    paired_ms = statistics.median(a["own"] - b["own"] for a, b in zip(on, off)) * 1e3
    print(f"  {'explainability overhead (without model time)':<44} p50 {overhead:>+7.1%}      mean {mean_overhead:>+7.1%}"
          f"   per-question pairs: median {paired:+.1%} ({paired_ms:+.1f} ms)   aim < {AIM_OVERHEAD:.0%}: "
          f"{'met' if overhead < AIM_OVERHEAD else 'MISSED'}")
    edges = [s["edges"] for s in on]
    tq_on, tq_off = [s["triple_queries"] for s in on], [s["triple_queries"] for s in off]
    print(f"  {'work per query':<44} {statistics.mean(edges):.0f} edges explored (tg:edgeCount, min {min(edges)}, "
          f"max {max(edges)}); {statistics.mean(tq_on):.0f} triple-store queries (explain off: "
          f"{statistics.mean(tq_off):.0f})")
    print(f"  {'explain triples per query (explain on)':<44} {statistics.mean(s['explain_triples'] for s in on):.0f} "
          f"(explain off: {statistics.mean(s['explain_triples'] for s in off):.0f})")


async def main_async(args: argparse.Namespace) -> None:
    from tracegraph.flow.graph_rag.pipeline import Limits

    print("GraphRAG benchmark: requests on the inproc bus through a RequestClient "
          "(non-persistent://tg/request/graph-rag:default), non-streaming, one at a time")
    print(f"  limits: {Limits()}" + (f"; overridden per request: {args.limits}" if args.limits else " (defaults)"))
    print(f"  model server: OpenAIStub in a child process (LLM and embeddings, {args.dimension}-dim hashed vectors); "
          "its own handling time is the 'model time'")
    stub = await StubProcess().start(args.dimension)
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="tg-bench-graph-rag-") as tmp:
            for edges in args.sizes:
                results.append(await bench_size(edges, args, stub, Path(tmp)))
    finally:
        await stub.close()
    print("\nsummary (latency without model time; aims: p50 < 100 ms at 1M edges, explain overhead < 10%)")
    print(f"  {'edges':>10} {'p50 on':>9} {'p95 on':>9} {'p50 off':>9} {'p95 off':>9} {'overhead':>9} "
          f"{'edges/q':>8} {'lookups/q':>9} {'explain triples/q':>17}")
    for r in results:
        own = lambda s, q: pct([x["own"] for x in s], q) * 1e3  # noqa: E731
        print(f"  {r['edges']:>10,} {own(r['on'], .5):>7.1f}ms {own(r['on'], .95):>7.1f}ms {own(r['off'], .5):>7.1f}ms "
              f"{own(r['off'], .95):>7.1f}ms {own(r['on'], .5) / own(r['off'], .5) - 1:>+9.1%} "
              f"{statistics.mean(x['edges'] for x in r['on']):>8.0f} "
              f"{statistics.mean(x['triple_queries'] for x in r['on']):>9.0f} "
              f"{statistics.mean(x['explain_triples'] for x in r['on']):>17.0f}")


def request_limits(text: str) -> dict[str, int]:
    limits = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = part.partition("=")
        if key not in ("entity-limit", "triple-limit", "max-subgraph-size", "max-path-length", "edge-limit"):
            raise argparse.ArgumentTypeError(f"unknown limit {key!r}")
        limits[key] = int(value)
    return limits


def sizes(text: str) -> list[int]:
    return [int(float(part)) for part in text.split(",") if part.strip()]


def main() -> None:
    p = argparse.ArgumentParser(
        description="GraphRAG query latency p50/p95 on synthetic graphs through the real runtime, with an "
                    "instant stub model server, and the overhead of explainability (explain off vs on). "
                    "Prints figures beside the aims (p50 < 100 ms at 1M edges without model time; explain "
                    "overhead < 10%%); never asserts on timing. About 10 minutes with the defaults at today's ~4 s per query.",
        epilog="Aims are judged on latency minus the stub's own request-handling time. The 1M-edge graph "
               "loads in ~10-15 s; entity indexing (Qdrant local mode) runs at a few hundred vectors/s, so "
               "only the question entities plus --indexed others get vectors.")
    p.add_argument("--sizes", type=sizes, default=[10_000, 1_000_000],
                   help="comma-separated graph sizes in relation edges [10000,1000000]")
    p.add_argument("--queries", type=int, default=30, help="measured questions per size, each asked with "
                   "explain on and off; 40 takes ~12 min at today's ~4 s per query [30]")
    p.add_argument("--warmup", type=int, default=2, help="warm-up questions per size (both modes) [2]")
    p.add_argument("--limits", type=request_limits, default={},
                   help="request overrides of the default Limits, e.g. entity-limit=5,max-subgraph-size=100 "
                        "(keys: entity-limit, triple-limit, max-subgraph-size, max-path-length, edge-limit) [none]")
    p.add_argument("--indexed", type=int, default=1000,
                   help="entities indexed in the vector store besides those the questions name [1000]")
    p.add_argument("--dimension", type=int, default=384, help="embedding width (the bundled model's is 384) [384]")
    p.add_argument("--profile", choices=["auto", "always", "never"], default="auto",
                   help="profiling pass: auto = when p50 misses 100 ms on the largest size [auto]")
    p.add_argument("--profile-queries", type=int, default=6, help="queries in the stage-timing pass [6]")
    p.add_argument("--cprofile-queries", type=int, default=2, help="queries under cProfile [2]")
    p.add_argument("--seed", type=int, default=7, help="random seed for graph and questions [7]")
    p.add_argument("--serve-stub", action="store_true", help=argparse.SUPPRESS)  # the child process
    args = p.parse_args()
    if args.serve_stub:
        asyncio.run(serve_stub(args.dimension))
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
