"""The RAPTOR summary tree (RSN-05) without I/O: build it from passages, keep it current as passages
come and go (re-summarising only the touched branches), and walk it top-down for a question."""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from tracegraph.base.errors import ConfigError, LlmUnavailable
from tracegraph.base.raptor.cluster import bounded_clusters

SUMMARY_CONCURRENCY = 4  # summaries of one level written at once (LLM calls in flight)
LLM_INPUT_CHARS = 12_000  # the children's texts an LLM summary is asked over, all together
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class Passage:
    """A chunk to place in the tree; `vector` is its unit-length float32 embedding."""

    uri: str
    text: str
    vector: np.ndarray = field(repr=False)
    document: str | None = None


@dataclass(frozen=True, slots=True)
class TreeParams:
    """How the tree is shaped and summarised; a given passage set and seed give the same tree."""

    branching: int = 8  # children a node aims at
    max_cluster: int = 16  # children a node may have before it is split
    seed: int = 42
    summary_chars: int = 1200
    top_k: int = 10  # passages a RAPTOR query keeps from the walk's candidates
    # Summaries one incremental update writes, per passage it adds or removes (at least `min_summaries`):
    # the bound that keeps the cost per passage flat however tall the tree; the rest wait (Tree.stale).
    summaries_per_passage: float = 1.5
    min_summaries: int = 16
    placement_beam: int = 4  # nodes per level a new passage's descent to its cluster keeps

    def __post_init__(self) -> None:
        if not 2 <= self.branching <= self.max_cluster:
            raise ConfigError(f"RAPTOR needs 2 <= branching <= max_cluster, not {self.branching}, {self.max_cluster}")
        if self.summary_chars < 1 or self.top_k < 1:
            raise ConfigError(f"summary_chars and top_k must be positive, not {self.summary_chars}, {self.top_k}")
        if self.summaries_per_passage <= 0 or self.min_summaries < 1 or self.placement_beam < 1:
            raise ConfigError(f"summaries_per_passage, min_summaries and placement_beam must be positive, not "
                              f"{self.summaries_per_passage}, {self.min_summaries}, {self.placement_beam}")

    def summary_budget(self, passages: int) -> int:
        """Summaries one incremental update of `passages` passages may write."""
        return max(self.min_summaries, math.ceil(self.summaries_per_passage * passages))


@dataclass(slots=True)
class TreeNode:
    """A cluster of passages (level 1) or of lower nodes, with a summary of them.

    `vector` is the normalised centroid of the passages under the node, not the embedding of its
    summary: routing by centroid costs no embedding call per node, and an offline summary is an
    extract of those very passages anyway.
    """

    id: str
    level: int
    children: list[str]  # chunk IRIs at level 1, node ids above
    summary: str
    vector: np.ndarray = field(repr=False)
    method: str
    passage_count: int


@dataclass(repr=False)
class Tree:
    """Nodes by id, the root, and (in the building process only) the passages placed in it.

    `passages` is empty for a tree read back from RDF: `add` and `remove` then work from the node
    centroids (see `add`) and the nodes' previous summaries stand in for passages whose text is unknown.
    """

    nodes: dict[str, TreeNode] = field(default_factory=dict)
    root: str | None = None
    passages: dict[str, Passage] = field(default_factory=dict)
    parents: dict[str, str] = field(init=False, default_factory=dict)  # chunk IRI or node id -> node id
    # Nodes whose summary lags their children (an update's summary budget ran out), oldest first;
    # their centroids are current, so the walk is not affected. Kept in memory only.
    stale: dict[str, None] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        for node in self.nodes.values():
            self.parents.update(dict.fromkeys(node.children, node.id))

    def __repr__(self) -> str:  # the dataclass one would print every vector of a 100k-passage tree
        return f"Tree(root={self.root!r}, {len(self.nodes)} nodes, {len(self.passages)} passages in memory)"

    def parent(self, item: str) -> str | None:
        """The node holding a chunk IRI or node id; None for the root and unknown items."""
        return self.parents.get(item)

    def passages_under(self, node_id: str) -> list[str]:
        """Chunk IRIs below a node, in child order."""
        node = self.nodes[node_id]
        if node.level == 1:
            return list(node.children)
        return [uri for child in node.children for uri in self.passages_under(child)]

    @property
    def levels(self) -> dict[int, list[str]]:
        """Node ids by level, 1 (clusters of passages) first."""
        out: dict[int, list[str]] = {}
        for node in sorted(self.nodes.values(), key=lambda n: n.level):
            out.setdefault(node.level, []).append(node.id)
        return out

    @property
    def height(self) -> int:
        """The root's level; 0 for an empty tree."""
        return self.nodes[self.root].level if self.root else 0


@dataclass(frozen=True, slots=True)
class TreeChange:
    """What an incremental update did: nodes to (re)write, nodes to delete."""

    changed: set[str]
    removed: set[str]


# ---------------------------------------------------------------- summaries

class Summariser(Protocol):
    """Writes a node's summary from its children's texts (nearest the node's centre first)."""

    async def summarise(self, texts: Sequence[str], max_chars: int) -> tuple[str, str]:
        """(summary, method): the method says how it was written, 'LLM (model)' or 'offline: …'."""
        ...


class OfflineSummariser:
    """Extractive, no LLM: the lead sentence of each child in the order given, then second and third
    sentences while room is left, up to `max_chars`. Honest about being an extract, not a summary."""

    async def summarise(self, texts: Sequence[str], max_chars: int) -> tuple[str, str]:
        sentences = [_SENTENCE_END.split(" ".join(text.split())) for text in texts]
        taken = [0] * len(texts)
        used = 0
        for depth in range(3):
            for i, found in enumerate(sentences):
                if taken[i] == depth and depth < len(found) and found[depth]:
                    cost = len(found[depth]) + 1
                    if used + cost <= max_chars + 1:
                        taken[i], used = depth + 1, used + cost
        summary = " ".join(s for found, n in zip(sentences, taken) for s in found[:n])
        if not summary and texts:  # even the first lead sentence is longer than the budget
            summary = " ".join(texts[0].split())[:max_chars - 1].rstrip() + "…"
        quoted = sum(1 for n in taken if n)
        return summary, (f"offline: extractive — lead sentences of {quoted} of {len(texts)} children, nearest "
                         f"the cluster centre first, at most {max_chars} characters; no LLM")


class LlmSummariser:
    """Summaries by an LLM through `complete(system, prompt)` (returning an object with `.text` and
    `.model`, like `Completion`). Once the LLM reports `LlmUnavailable`, every further summary of
    this summariser is the offline one, and its method says why."""

    SYSTEM = ("You summarise passages for a hierarchical search index. Write one paragraph of at most {chars} "
              "characters naming the main entities, topics and facts the passages share. Use only the passages.")

    def __init__(self, complete: Callable[[str, str], Awaitable[Any]],
                 fallback: Summariser | None = None) -> None:
        self._complete = complete
        self._fallback = fallback or OfflineSummariser()
        self._unavailable: str | None = None

    async def summarise(self, texts: Sequence[str], max_chars: int) -> tuple[str, str]:
        if self._unavailable is None:
            share = max(200, LLM_INPUT_CHARS // max(1, len(texts)))
            prompt = "\n\n".join(f"[{i}] {' '.join(t.split())[:share]}" for i, t in enumerate(texts, 1))
            try:
                done = await self._complete(self.SYSTEM.format(chars=max_chars), f"Passages:\n\n{prompt}")
            except LlmUnavailable as exc:
                self._unavailable = str(exc) or "no LLM configured"
            else:
                return done.text.strip(), f"LLM ({done.model or 'unknown model'})"
        summary, method = await self._fallback.summarise(texts, max_chars)
        return summary, f"{method} (LLM unavailable: {self._unavailable})"


# ---------------------------------------------------------------- building

async def build(passages: Sequence[Passage], summariser: Summariser, params: TreeParams = TreeParams()) -> Tree:
    """Level 1 clusters the passages; each higher level clusters the level below until at most
    `branching` nodes remain, which one overview node then holds (none if only one node is left)."""
    tree = Tree()
    for passage in passages:
        tree.passages.setdefault(passage.uri, passage)
    if not tree.passages:
        return tree
    items = list(tree.passages)
    vectors = np.stack([tree.passages[uri].vector for uri in items])
    level = 1
    while True:
        groups = bounded_clusters(vectors, branching=params.branching, max_size=params.max_cluster, seed=params.seed)
        if level > 1 and len(groups) >= len(items):  # each level must shrink, or this would never end
            groups = [np.arange(i, min(i + params.branching, len(items))) for i in range(0, len(items), params.branching)]
        items = [_new_node(tree, params.seed, level, [items[i] for i in group]).id for group in groups]
        vectors = np.stack([tree.nodes[i].vector for i in items])
        if len(items) <= params.branching:
            break
        level += 1
    tree.root = items[0] if len(items) == 1 else _new_node(tree, params.seed, level + 1, items).id
    await _resummarise(tree, set(tree.nodes), summariser, params)
    return tree


def nearest_cluster(tree: Tree, vector: np.ndarray, beam: int) -> str:
    """The level-1 node a passage joins: down from the root, keeping the `beam` children nearest
    `vector` at each level, the best at the bottom. Costs levels × beam × max_cluster products, not one
    per cluster; it may miss the nearest cluster when that sits under a parent `beam` others beat."""
    frontier = [tree.nodes[tree.root]]
    while frontier[0].level > 1:
        children = [tree.nodes[c] for node in frontier for c in node.children]
        scores = np.stack([c.vector for c in children]) @ vector
        frontier = [children[i] for i in np.argsort(-scores, kind="stable")[:beam]]
    return frontier[0].id


def _new_node(tree: Tree, seed: int, level: int, children: list[str], like: TreeNode | None = None) -> TreeNode:
    """A node over `children`, its id stable: from seed, level and first child (salted on a clash).
    `like` is the node it was split from: its centroid and summary stand in until refreshed."""
    salt = 0
    while (node_id := _node_id(seed, level, children[0], salt)) in tree.nodes:
        salt += 1
    vector = like.vector.copy() if like else np.zeros_like(_child_vector(tree, None, children[0]))
    node = TreeNode(node_id, level, list(children), like.summary if like else "", vector,
                    like.method if like else "", 0)
    tree.nodes[node_id] = node
    tree.parents.update(dict.fromkeys(children, node_id))
    if like is None:  # a split-off node is refreshed with its branch, once: a running mean must not count twice
        _refresh(tree, node, exact=True)
    return node


def _node_id(seed: int, level: int, first_child: str, salt: int) -> str:
    digest = hashlib.sha256(f"{seed}\x1f{level}\x1f{first_child}\x1f{salt}".encode()).hexdigest()
    return f"urn:trustgraph:raptor:{level}:{digest[:16]}"


def _child_vector(tree: Tree, node: TreeNode | None, child: str) -> np.ndarray:
    """A child's vector; a passage not held in memory counts as its node's current centroid."""
    if child in tree.nodes:
        return tree.nodes[child].vector
    if child in tree.passages:
        return tree.passages[child].vector
    if node is None:
        raise KeyError(f"no vector for {child}")
    return node.vector


def _refresh(tree: Tree, node: TreeNode, *, exact: bool) -> None:
    """Passage count and centroid, from the children (which must be current). Above level 1,
    `exact` sums every passage vector below (a build: all in memory anyway); otherwise the children's
    centroids weighted by their passages stand in, a cost independent of the tree's size."""
    if node.level == 1:
        node.passage_count = len(node.children)
        # Passages read back from RDF have no vector: each weighs as the old centroid, a running mean.
        node.vector = _unit(np.sum([_child_vector(tree, node, c) for c in node.children], axis=0))
        return
    children = [tree.nodes[c] for c in node.children]
    node.passage_count = sum(c.passage_count for c in children)
    under = tree.passages_under(node.id) if exact else []
    if under and all(uri in tree.passages for uri in under):
        node.vector = _unit(np.sum([tree.passages[uri].vector for uri in under], axis=0))
    else:  # the children's centroids, weighted by their passages: the same up to their spread
        node.vector = _unit(np.sum([c.vector * c.passage_count for c in children], axis=0))


def _summary_inputs(tree: Tree, node: TreeNode) -> list[str]:
    """The children's texts (passages at level 1, summaries above), nearest the centre first; the
    node's previous summary stands in for passages whose text is not in memory."""
    if node.level == 1:
        known = [c for c in node.children if c in tree.passages]
        texts = [tree.passages[c].text for c in known]
        vectors = [tree.passages[c].vector for c in known]
        if len(known) < len(node.children) and node.summary:
            texts, vectors = [node.summary, *texts], [node.vector, *vectors]
    else:
        texts = [tree.nodes[c].summary for c in node.children]
        vectors = [tree.nodes[c].vector for c in node.children]
    if not texts:
        return []
    order = np.argsort(-(np.stack(vectors) @ node.vector), kind="stable")
    return [texts[i] for i in order]


async def _resummarise(tree: Tree, node_ids: Iterable[str], summariser: Summariser, params: TreeParams) -> None:
    """Summaries of these nodes, level by level upwards (a node summarises its children's summaries)."""
    gate = asyncio.Semaphore(SUMMARY_CONCURRENCY)

    async def one(node: TreeNode) -> None:
        inputs = _summary_inputs(tree, node)
        async with gate:
            node.summary, node.method = await summariser.summarise(inputs, params.summary_chars)

    by_level: dict[int, list[TreeNode]] = {}
    for node_id in sorted(node_ids):
        by_level.setdefault(tree.nodes[node_id].level, []).append(tree.nodes[node_id])
    for level in sorted(by_level):
        await asyncio.gather(*(one(node) for node in by_level[level]))


# ---------------------------------------------------------------- incremental updates

async def add(tree: Tree, passages: Sequence[Passage], summariser: Summariser,
              params: TreeParams = TreeParams()) -> TreeChange:
    """Put each new passage under the level-1 node its descent from the root finds nearest
    (`nearest_cluster`); a node grown past `max_cluster` splits (its parent gains the new node, and
    may split in turn; a split root gets a new root above). The touched nodes and their ancestors get
    new centroids; their summaries are rewritten within the update's budget (`TreeParams.summary_budget`),
    the rest left in `tree.stale`. Passages already in the tree stay where they are. An empty tree is
    built instead.

    A tree read back from RDF holds no passage vectors: placement then uses the node centroids,
    a level-1 centroid becomes the running mean (old centroid × passage count + new vectors), and a
    split treats the unknown passages as sitting on the old centroid (they stay together).
    """
    fresh = {p.uri: p for p in passages if p.uri not in tree.parents}
    if not fresh:
        return TreeChange(set(), set())
    if tree.root is None:
        built = await build(list(fresh.values()), summariser, params)
        tree.nodes, tree.root, tree.passages, tree.parents = built.nodes, built.root, built.passages, built.parents
        return TreeChange(set(tree.nodes), set())
    touched: set[str] = set()
    for passage in fresh.values():
        node = tree.nodes[nearest_cluster(tree, passage.vector, params.placement_beam)]
        node.children.append(passage.uri)
        tree.parents[passage.uri] = node.id
        tree.passages[passage.uri] = passage
        touched.add(node.id)
    oversized = sorted(touched)
    while oversized:
        node = tree.nodes[oversized.pop()]
        if len(node.children) <= params.max_cluster:
            continue
        siblings = _split(tree, node, params)
        touched |= {node.id, *siblings}
        parent_id = tree.parent(node.id)
        if parent_id is None:
            tree.root = _new_node(tree, params.seed, node.level + 1, [node.id, *siblings]).id
            touched.add(tree.root)
        else:
            tree.nodes[parent_id].children.extend(siblings)
            tree.parents.update(dict.fromkeys(siblings, parent_id))
            oversized.append(parent_id)
    changed = await _update_branches(tree, touched, summariser, params, params.summary_budget(len(fresh)))
    return TreeChange(changed, set())


def _split(tree: Tree, node: TreeNode, params: TreeParams) -> list[str]:
    """Cut an oversized node in two (more if still too big); it keeps the group of its first child."""
    vectors = np.stack([_child_vector(tree, node, c) for c in node.children])
    branching = max(2, min(math.ceil(len(vectors) / 2), params.max_cluster))
    groups = bounded_clusters(vectors, branching=branching, max_size=params.max_cluster, seed=params.seed)
    children = node.children
    node.children = [children[i] for i in groups[0]]
    return [_new_node(tree, params.seed, node.level, [children[i] for i in group], like=node).id
            for group in groups[1:]]


async def remove(tree: Tree, chunk_uris: Iterable[str], summariser: Summariser,
                 params: TreeParams = TreeParams()) -> TreeChange:
    """Take passages out; nodes left empty go (and leave their parents), a root left with a single
    child node hands over to it, and the touched nodes and their ancestors are re-summarised.

    With passages read back from RDF (no vectors in memory), a level-1 centroid keeps its direction.
    """
    gone = {uri for uri in chunk_uris if uri in tree.parents and uri not in tree.nodes}
    if not gone:
        return TreeChange(set(), set())
    touched = {tree.parents.pop(uri) for uri in gone}
    for uri in gone:
        tree.passages.pop(uri, None)
    removed: set[str] = set()
    emptied = []
    for node_id in touched:
        node = tree.nodes[node_id]
        node.children = [c for c in node.children if c not in gone]
        if not node.children:
            emptied.append(node_id)
    while emptied:
        node_id = emptied.pop()
        del tree.nodes[node_id]
        removed.add(node_id)
        parent_id = tree.parents.pop(node_id, None)
        if parent_id is None:
            tree.root = None
            continue
        parent = tree.nodes[parent_id]
        parent.children.remove(node_id)
        touched.add(parent_id)
        if not parent.children:
            emptied.append(parent_id)
    while tree.root and tree.nodes[tree.root].level > 1 and len(tree.nodes[tree.root].children) == 1:
        removed.add(tree.root)
        tree.root = tree.nodes.pop(tree.root).children[0]
        del tree.parents[tree.root]
        touched.add(tree.root)  # now the overview: its label changes
    for node_id in removed:
        tree.stale.pop(node_id, None)
    changed = await _update_branches(tree, touched - removed, summariser, params, params.summary_budget(len(gone)))
    return TreeChange(changed, removed - changed)


async def _update_branches(tree: Tree, touched: set[str], summariser: Summariser, params: TreeParams,
                           budget: int) -> set[str]:
    """Refresh the centroids of the touched nodes and all their ancestors, and write at most `budget`
    summaries: of these nodes and of those left stale before, lowest level first (the clusters holding
    the new passages), older stale ones first within a level. Returns every node whose centroid or
    summary changed (to be stored again)."""
    dirty = set()
    for node_id in touched:
        while node_id is not None and node_id not in dirty:
            dirty.add(node_id)
            node_id = tree.parent(node_id)
    for node in sorted((tree.nodes[i] for i in dirty), key=lambda n: n.level):
        _refresh(tree, node, exact=False)
    for node_id in sorted(dirty):
        tree.stale.setdefault(node_id, None)
    written = await summarise_stale(tree, summariser, params, budget)
    return dirty | written


async def summarise_stale(tree: Tree, summariser: Summariser, params: TreeParams, budget: int) -> set[str]:
    """Write up to `budget` of the lagging summaries (lowest level first, oldest first within a
    level); returns the nodes written. Called by updates, and when idle to catch up."""
    for gone in [n for n in tree.stale if n not in tree.nodes]:  # removed since, or a rebuilt tree
        del tree.stale[gone]
    age = {node_id: i for i, node_id in enumerate(tree.stale)}
    chosen = sorted(tree.stale, key=lambda n: (tree.nodes[n].level, age[n]))[:budget]
    for node_id in chosen:
        del tree.stale[node_id]
    await _resummarise(tree, chosen, summariser, params)
    return set(chosen)


# ---------------------------------------------------------------- query

@dataclass(frozen=True, slots=True)
class Visit:
    """One node the walk scored, and whether it went below it (and why)."""

    node_id: str
    level: int
    score: float
    expanded: bool
    reason: str


@dataclass(frozen=True, slots=True)
class Walk:
    visits: tuple[Visit, ...]  # in the order scored: top-down, best first within a level
    expanded: tuple[str, ...]  # nodes the walk went below, top-down
    candidate_chunks: tuple[str, ...]  # the passages under the expanded level-1 nodes


def walk(tree: Tree, question_vector: Sequence[float] | np.ndarray, *, threshold: float = 0.3, beam: int = 3,
         relative: float = 0.9) -> Walk:
    """Top-down from the root: the children of the nodes expanded at one level are scored together
    (cosine of question and centroid), and the best `beam` of them whose score reaches `threshold`
    and `relative` × the level's best score are expanded. The best child is always expanded, so the
    walk reaches passages however weak the match: the threshold prunes breadth, never the answer.
    Every scored node is recorded, expanded or not, with the reason."""
    if tree.root is None:
        return Walk((), (), ())
    question = _unit(np.asarray(question_vector, dtype=np.float32))
    root = tree.nodes[tree.root]
    visits = [Visit(root.id, root.level, float(root.vector @ question), True, "the root: every walk starts here")]
    frontier = [root]
    expanded = [root.id]
    while frontier[0].level > 1:
        ids = [c for node in frontier for c in node.children]
        scores = np.stack([tree.nodes[c].vector for c in ids]) @ question
        order = np.argsort(-scores, kind="stable")
        best = float(scores[order[0]])
        frontier = []
        for rank, index in enumerate(order):
            score, node = float(scores[index]), tree.nodes[ids[index]]
            if rank == 0:
                go, reason = True, "the best of its level" + (
                    f" (below threshold {threshold:.2f}, expanded so the walk reaches passages)"
                    if score < threshold else "")
            elif score < threshold:
                go, reason = False, f"below threshold {threshold:.2f}"
            elif score < relative * best:
                go, reason = False, f"below {relative:.2f} × the level's best score ({relative * best:.3f})"
            elif len(frontier) >= beam:
                go, reason = False, f"outside the beam of {beam}"
            else:
                go, reason = True, f"within the beam, score >= threshold and >= {relative:.2f} × best"
            visits.append(Visit(node.id, node.level, score, go, reason))
            if go:
                frontier.append(node)
                expanded.append(node.id)
    candidates = tuple(c for node in frontier for c in node.children)
    return Walk(tuple(visits), tuple(expanded), candidates)


def _unit(vector: np.ndarray) -> np.ndarray:
    vector = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector
