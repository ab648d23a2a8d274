"""Embedding throughput during ingest, on public passages (MuSiQue / HotpotQA samples in shared/data).

Prints, in one run: (a) the bundled model's own rate on the chunks (LocalEmbedder called directly; the
best of the batch sizes tried and its defaults), (b) chunks/s end to end through the real processors
on the in-process bus (TextChunk messages on the document-embeddings input → embeddings service →
vector store + passage index), timed until every chunk's vector is in the store and its message
handled, and (c) b/a. Other work on a shared machine moves both by 2x within a minute, so (a) and (b)
alternate in rounds, each on chunks of its own. With --entities, entity labels go through
graph-embeddings the same way. Never asserts on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tracegraph.base.bus import codec
from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.bus.topic import Topic
from tracegraph.base.llm.local_embed import LocalEmbedder
from tracegraph.base.settings import RuntimeSettings
from tracegraph.base.stores.protocol import CollectionRef, VectorKind
from tracegraph.flow.chunker import split
from tracegraph.flow.vectors import chunk_embedding_text
from tracegraph.launch.stack import Stack, ensure_flow
from tracegraph.schemas.base import Message
from tracegraph.schemas.ingest import EntityContext, EntityContexts, Metadata, TextChunk

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "multihop"
SETS = {"musique": "musique-train-100.json", "hotpotqa": "hotpotqa-train-100.json"}
FLOW = "default"
CHUNK_SIZE, CHUNK_OVERLAP = 1000, 100  # the default blueprint's chunk-size and chunk-overlap
PASSAGES_PER_DOCUMENT = 8  # consecutive passages joined into one document, so chunks reach the chunk size
REF = CollectionRef("bench", "embeddings")
NAME = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*")  # capitalised runs: crude entity labels


def load_chunks(path: Path, count: int) -> list[TextChunk]:
    """TextChunk messages as the chunker would send them: documents of consecutive passages, split
    at the default chunk size, titled by their first passage."""
    corpus = json.loads(path.read_text(encoding="utf-8"))["corpus"]
    chunks: list[TextChunk] = []
    for start in range(0, len(corpus), PASSAGES_PER_DOCUMENT):
        group = corpus[start:start + PASSAGES_PER_DOCUMENT]
        document = f"https://bench.tracegraph/doc/{path.stem}/{start}"
        text = "\n\n".join(p["text"] for p in group)
        for index, (_, piece) in enumerate(split(text, CHUNK_SIZE, CHUNK_OVERLAP), 1):
            meta = Metadata(id=f"{document}/c{index}", root=document, user=REF.user, collection=REF.collection)
            chunks.append(TextChunk(metadata=meta, text=piece, document=document, index=index,
                                    title=group[0]["title"]))
            if len(chunks) == count:
                return chunks
    return chunks


def entity_messages(chunks: list[TextChunk]) -> list[EntityContexts]:
    """One EntityContexts per chunk: its capitalised names as entities, labelled by themselves."""
    messages = []
    for chunk in chunks:
        labels = list(dict.fromkeys(NAME.findall(chunk.text)))
        entities = [EntityContext(entity=f"https://bench.tracegraph/e/{label.replace(' ', '_')}", label=label,
                                  chunk=chunk.metadata.id) for label in labels]
        messages.append(EntityContexts(metadata=chunk.metadata, entities=entities))
    return messages


async def model_rates(texts: list[str], configs: dict[str, dict[str, int]]) -> dict[str, float]:
    """Texts/s of LocalEmbedder alone per configuration (keyword arguments), after a warm-up call."""
    rates = {}
    for label, kwargs in configs.items():
        embedder = LocalEmbedder(**kwargs)
        try:
            await embedder.embed(texts[:8])
            started = time.perf_counter()
            await embedder.embed(texts)
            rates[label] = len(texts) / (time.perf_counter() - started)
        finally:
            await embedder.aclose()
        print(f"  model alone, {label:<24} {rates[label]:7.1f} texts/s", flush=True)
    return rates


class Pipeline:
    """config + embeddings + one vector processor on the in-process bus, fed on its input topic."""

    def __init__(self, processor: str, kind: VectorKind, work: Path) -> None:
        self.processor, self.kind = processor, kind
        self.backend = InprocBackend()
        self.stack = Stack(self.backend, RuntimeSettings(data_dir=work, request_timeout=300),
                           ["config", "embeddings", processor])

    async def __aenter__(self) -> Pipeline:
        await self.stack.__aenter__()
        await ensure_flow(self.backend, FLOW, "default")
        await self.stack.joined(FLOW)
        self.target = self.stack[self.processor]
        self.topic = Topic.parse(self.target.flows[FLOW].topics["input"])
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.stack.__aexit__(*exc)
        finally:
            await self.backend.aclose()

    async def rate(self, messages: list[Message], ids: list[str]) -> float:
        """Items/s from the first publish until every id is in the store and every message handled."""
        handled = self.target.stats.handled + self.target.stats.failed + len(messages)
        started = time.perf_counter()
        for message in messages:
            body, props = codec.encode(message)
            await self.backend.publish(self.topic, body, props)
        missing, last_report = list(dict.fromkeys(ids)), started
        while missing or self.target.stats.handled + self.target.stats.failed < handled:
            await asyncio.sleep(0.1)
            if missing:
                found = {hit.id for hit in await self.target.store.get(REF, self.kind, missing)}
                missing = [i for i in missing if i not in found]
            if (now := time.perf_counter()) - last_report >= 2:
                stored = len(set(ids)) - len(missing)
                print(f"    {stored}/{len(set(ids))} stored, {stored / (now - started):.1f}/s", flush=True)
                last_report = now
        if self.target.stats.failed:
            raise SystemExit(f"{self.processor} failed {self.target.stats.failed} message(s): see the log above")
        return len(ids) / (time.perf_counter() - started)


@dataclass(frozen=True, slots=True)
class Round:
    """One round: the same chunks through the model alone and end to end (seconds, CPU seconds)."""

    chunks: int
    model_seconds: float
    model_cpu: float
    e2e_seconds: float
    e2e_cpu: float

    @property
    def ratio(self) -> float:
        return self.model_seconds / self.e2e_seconds


async def chunk_rounds(chunks: list[TextChunk], rounds: int, best: dict[str, int], work: Path) -> list[Round]:
    """Model alone and end to end, per round on chunks of its own; every other round runs end to end
    first, so a slow spell on the machine weighs on both alike."""
    warm, rest = chunks[:16], chunks[16:]
    size = len(rest) // rounds
    results = []
    embedder = LocalEmbedder(**best)
    async with Pipeline("document-embeddings", "chunk", work) as pipeline:
        await pipeline.rate(warm, [c.metadata.id for c in warm])  # creates the collection and the index
        await embedder.embed([chunk_embedding_text(c) for c in warm])
        for r in range(rounds):
            share = rest[r * size:(r + 1) * size]
            timed: dict[str, tuple[float, float]] = {}
            for part in (("model", "e2e") if r % 2 == 0 else ("e2e", "model")):
                wall, cpu = time.perf_counter(), time.process_time()
                if part == "model":
                    await embedder.embed([chunk_embedding_text(c) for c in share])
                else:
                    await pipeline.rate(share, [c.metadata.id for c in share])
                timed[part] = (time.perf_counter() - wall, time.process_time() - cpu)
            done = Round(len(share), *timed["model"], *timed["e2e"])
            results.append(done)
            print(f"round {r + 1}/{rounds}, {len(share)} chunks: model alone {done.chunks / done.model_seconds:.1f}/s, "
                  f"end to end {done.chunks / done.e2e_seconds:.1f}/s ({done.ratio:.0%})", flush=True)
    await embedder.aclose()
    return results


async def entity_round(chunks: list[TextChunk], work: Path) -> list[tuple[str, str]]:
    """The chunks' names through graph-embeddings, beside the model alone on the distinct labels."""
    messages = entity_messages(chunks)
    labels = list(dict.fromkeys(e.label for m in messages for e in m.entities))
    ids = [e.entity for m in messages for e in m.entities]
    print(f"graph-embeddings: {len(messages)} messages, {len(ids)} entities, {len(labels)} distinct labels", flush=True)
    model = (await model_rates(labels, {"default": {}}))["default"]
    async with Pipeline("graph-embeddings", "entity", work) as pipeline:
        rate = await pipeline.rate(messages, ids)
    distinct = len(labels) / len(ids) * rate
    return [("model alone on the distinct labels", f"{model:.1f} labels/s"),
            ("end to end through graph-embeddings", (f"{rate:.1f} entities/s ({distinct:.1f} distinct labels/s, "
                                                     f"{distinct / model:.0%} of the model)"))]


async def main_async(args: argparse.Namespace) -> None:
    chunks = load_chunks(args.data / SETS[args.set], args.chunks)
    texts = [chunk_embedding_text(c) for c in chunks]
    print(f"{len(chunks)} chunks from {SETS[args.set]}: mean {sum(map(len, texts)) / len(texts):.0f} characters "
          f"embedded (title + chunk, chunk size {CHUNK_SIZE})", flush=True)
    print("(a) the model alone: batch sizes (no token budget), then LocalEmbedder's defaults", flush=True)
    configs = {f"batch {n}": {"batch_size": n, "batch_tokens": 1 << 30} for n in args.batch_sizes}
    configs["defaults (token budget)"] = {}
    sweep = await model_rates(texts[:args.sweep], configs)
    best = max(sweep, key=sweep.get)
    print(f"(a) and (b) in {args.rounds} rounds, the model alone at its best ({best})", flush=True)
    with tempfile.TemporaryDirectory(prefix="tg-bench-embed-") as tmp:
        timed = await chunk_rounds(chunks, args.rounds, configs[best], Path(tmp) / "chunks")
        total = sum(r.chunks for r in timed)
        model = total / sum(r.model_seconds for r in timed)
        e2e = total / sum(r.e2e_seconds for r in timed)
        ratios = sorted(r.ratio for r in timed)
        model_cpu = sum(r.model_cpu for r in timed) / total * 1e3
        e2e_cpu = sum(r.e2e_cpu for r in timed) / total * 1e3
        per_round = ", ".join(f"{r:.0%}" for r in ratios)
        rows = [(f"(a) model alone, best ({best})", f"{model:.1f} chunks/s, {model_cpu:.0f} ms CPU/chunk"),
                ("(b) end to end through document-embeddings",
                 f"{e2e:.1f} chunks/s, {e2e_cpu:.0f} ms CPU/chunk (whole process)"),
                ("(c) b / a", f"{e2e / model:.0%} over all rounds; per round {per_round}, "
                              f"median {statistics.median(ratios):.0%}")]
        if args.entities:
            rows += await entity_round(chunks[:args.entity_chunks], Path(tmp) / "entities")
    for label, figure in rows:
        print(f"{label:<46} {figure}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"folder of the samples [{DEFAULT_DATA}]")
    p.add_argument("--set", choices=sorted(SETS), default="musique", help="which sample [musique]")
    p.add_argument("--chunks", type=int, default=496, help="chunks to embed end to end, over all rounds [496]")
    p.add_argument("--rounds", type=int, default=6, help="rounds of model alone and end to end [6]")
    p.add_argument("--sweep", type=int, default=96, help="chunks to time each batch size on [96]")
    p.add_argument("--batch-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4, 16, 64],
                   help="LocalEmbedder batch sizes to try for (a) [1,4,16,64]")
    p.add_argument("--entities", action="store_true", help="also time graph-embeddings on entity labels")
    p.add_argument("--entity-chunks", type=int, default=200, help="chunks whose names --entities indexes [200]")
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
