"""A seeded entity/predicate graph of any size (1M edges for the latency figures), with the extractor's own
IRIs (`entity_uri`, `relation_uri`) and rdfs:label, so retrieval runs on it as on ingested documents.
Edges are held as numpy integers and written as N-Quads batch by batch, never as one list of lines."""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import RDFS

ENTITIES_PER_EDGE = 0.15  # 1M edges -> 150k entities
VOCABULARY = 2000
SKEW = 2.0  # endpoint index = n * u**SKEW: a few hubs with thousands of edges, a long tail with a handful
BATCH = 50_000
PREDICATES = ["depends on", "is part of", "supplies", "is owned by", "located in", "works with", "manages",
              "replaced", "funds", "competes with", "acquired", "uses", "reports to", "produces", "hosts",
              "mentioned with", "is a member of", "partners with", "regulates", "was founded by"]
LABEL = f"<{RDFS.label.iri}>"
_ONSETS = "b d f g k l m n p r s t v z br dr kr tr st sk gl pl th sh".split()
_VOWELS = "a e i o u ai ei ou".split()
_CODAS = ["", "", "", "n", "r", "s", "l", "x", "th"]


@dataclass(frozen=True)
class Graph:
    """Labels, and the edges as parallel index arrays (subject, predicate, object)."""

    entities: list[str]
    predicates: list[str]
    s: np.ndarray
    p: np.ndarray
    o: np.ndarray


def pseudo_words(n: int, seed: int) -> list[str]:
    """`n` distinct pronounceable capitalised words ("Kovar", "Thelis"), none an English connector."""
    rng = random.Random(seed)
    words: dict[str, None] = {}
    while len(words) < n:
        syllables = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.choice([2, 2, 3])))
        words.setdefault((syllables + rng.choice(_CODAS)).capitalize())
    return list(words)


def _skewed(rng: np.random.Generator, size: int, n: int, skew: float) -> np.ndarray:
    return np.minimum((n * rng.random(size) ** skew).astype(np.int64), n - 1)


@lru_cache(maxsize=2)
def build(edges: int = 1_000_000, seed: int = 11) -> Graph:
    """The graph for (edges, seed): distinct two-word entity labels, and `edges` distinct non-loop edges."""
    rng = np.random.default_rng(seed)
    n = max(2, round(edges * ENTITIES_PER_EDGE))
    words = pseudo_words(VOCABULARY, seed)
    pairs = rng.choice(VOCABULARY * VOCABULARY, size=min(n * 2, VOCABULARY * VOCABULARY), replace=False)
    pairs = pairs[pairs // VOCABULARY != pairs % VOCABULARY][:n]  # "Kovar Kovar" reads badly
    if len(pairs) < n:
        raise ValueError(f"{n} entities need more than {VOCABULARY} words")
    entities = [f"{words[w // VOCABULARY]} {words[w % VOCABULARY]}" for w in pairs.tolist()]
    kept = np.empty(0, dtype=np.int64)
    while len(kept) < edges:
        size = int((edges - len(kept)) * 1.2) + 16
        s, o = _skewed(rng, size, n, SKEW), _skewed(rng, size, n, SKEW)
        p = _skewed(rng, size, len(PREDICATES), 1.5)
        keys = np.concatenate([kept, ((s * len(PREDICATES) + p) * n + o)[s != o]])
        _, first = np.unique(keys, return_index=True)  # distinct edges, in the order they were drawn
        kept = keys[np.sort(first)][:edges]
    s, rest = np.divmod(kept, len(PREDICATES) * n)
    p, o = np.divmod(rest, n)
    return Graph(entities, list(PREDICATES), s, p, o)


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_nquads(path: str | Path, edges: int = 1_000_000, seed: int = 11) -> dict[str, int]:
    """Write the graph into the default graph as N-Quads (predicate and entity labels, then the edges),
    BATCH lines at a time. Returns the counts written."""
    graph = build(edges, seed)
    entity_iris = [f"<{entity_uri(label)}>" for label in graph.entities]
    predicate_iris = [f"<{relation_uri(label)}>" for label in graph.predicates]
    with open(path, "w", encoding="utf-8") as out:
        for iri_, label in zip(predicate_iris, graph.predicates):
            out.write(f"{iri_} {LABEL} {_literal(label)} .\n")
        for start in range(0, len(entity_iris), BATCH):
            out.write("".join(f"{iri_} {LABEL} {_literal(label)} .\n" for iri_, label in
                              zip(entity_iris[start:start + BATCH], graph.entities[start:start + BATCH])))
        for start in range(0, len(graph.s), BATCH):
            end = start + BATCH
            rows = zip(graph.s[start:end].tolist(), graph.p[start:end].tolist(), graph.o[start:end].tolist())
            out.write("".join(f"{entity_iris[s]} {predicate_iris[p]} {entity_iris[o]} .\n" for s, p, o in rows))
    return {"entities": len(entity_iris), "predicates": len(predicate_iris), "edges": len(graph.s),
            "triples": len(entity_iris) + len(predicate_iris) + len(graph.s)}


def iter_facts(edges: int = 1_000_000, seed: int = 11) -> Iterator[tuple[str, str, str]]:
    """(subject label, predicate label, object label) of every edge, in the order write_nquads writes them."""
    graph = build(edges, seed)
    for start in range(0, len(graph.s), BATCH):
        end = start + BATCH
        for s, p, o in zip(graph.s[start:end].tolist(), graph.p[start:end].tolist(), graph.o[start:end].tolist()):
            yield graph.entities[s], graph.predicates[p], graph.entities[o]


def sample_questions(n: int, seed: int = 0, *, edges: int = 1_000_000, graph_seed: int = 11) -> list[str]:
    """Questions naming entities of the graph: half reached through a random edge (so hubs come up often,
    as popular things do), half a uniformly drawn entity that has at least one edge."""
    graph = build(edges, graph_seed)
    rng = random.Random(seed)
    linked = np.unique(np.concatenate([graph.s, graph.o]))
    questions = []
    for i in range(n):
        k = rng.randrange(len(graph.s))
        s, p, o = graph.entities[graph.s[k]], graph.predicates[graph.p[k]], graph.entities[graph.o[k]]
        if i % 2:
            s = graph.entities[int(linked[rng.randrange(len(linked))])]
            questions.append(rng.choice([f"What do we know about {s}?", f"What is {s} connected to?",
                                         f"Which entities are related to {s}, and how?"]))
        else:
            questions.append(rng.choice([f"How is {s} related to {o}?", f"Which entities does {s} have a "
                                         f"'{p}' relation with?", f"Tell me about {s} and {o}."]))
    return questions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, help="default: /tmp/tracegraph-synthetic-<edges>.nq")
    parser.add_argument("--questions", type=int, default=3, help="how many sample questions to print")
    args = parser.parse_args()
    out = args.out or Path(f"/tmp/tracegraph-synthetic-{args.edges}.nq")

    started = time.perf_counter()
    graph = build(args.edges, args.seed)
    built = time.perf_counter()
    counts = write_nquads(out, args.edges, args.seed)
    written = time.perf_counter()
    facts = sum(1 for _ in iter_facts(args.edges, args.seed))
    iterated = time.perf_counter()

    degree = np.bincount(np.concatenate([graph.s, graph.o]), minlength=len(graph.entities))
    print(f"{out}: {counts['triples']:,} triples ({counts['edges']:,} edges, {counts['entities']:,} entities, "
          f"{counts['predicates']} predicates), {out.stat().st_size / 1e6:.1f} MB")
    top = np.sort(degree)[::-1][:max(1, len(degree) // 1000)].sum() / degree.sum()
    print(f"degree: max {degree.max():,}, top 0.1% of entities hold {top:.1%} of endpoints, "
          f"median {int(np.median(degree))}, isolated {int((degree == 0).sum()):,}")
    print(f"build {built - started:.2f} s, write {written - built:.2f} s "
          f"({counts['triples'] / (written - built):,.0f} triples/s), "
          f"iter_facts {facts:,} in {iterated - written:.2f} s")
    for question in sample_questions(args.questions, edges=args.edges, graph_seed=args.seed):
        print("  ", question)


if __name__ == "__main__":
    main()
