"""Hierarchical Leiden communities of a fact graph: found in full, or updated after a change (RSN-15).

Level 0 is Leiden (modularity with a resolution, RB configuration) on the fact graph; each level up is
Leiden on the level below's aggregate graph (its communities as vertices, weights summed, internal
weight kept as a self-loop so the quality is the same as on the fact graph). Leiden already stops at a
local optimum of its objective, so a level up at the same resolution would rarely merge anything:
each level's resolution is the one below's times `resolution_decay`, which favours larger communities.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

import igraph
import leidenalg
import numpy as np
from tracegraph.base.communities.graph import FactGraph

ID_PREFIX = "urn:trustgraph:community:"


@dataclass(frozen=True, slots=True)
class DetectionParams:
    """What a detection runs with; the same graph and params always give the same communities."""

    resolution: float = 1.0
    seed: int = 42
    max_levels: int = 4
    iterations: int = -1  # Leiden passes; negative: until a pass improves nothing
    resolution_decay: float = 0.5  # each level up multiplies the resolution by this

    def resolution_at(self, level: int) -> float:
        return self.resolution * self.resolution_decay ** level

    @property
    def algorithm(self) -> str:
        """How the communities were found, in words, for the detection record."""
        return (f"Leiden (leidenalg {leidenalg.version}, modularity, resolution {self.resolution}, "
                f"x{self.resolution_decay} per level up, at most {self.max_levels} levels)")


def community_id(level: int, members: Iterable[str]) -> str:
    """A content id: the same entities at the same level always get the same id, whatever run found them."""
    digest = hashlib.sha1("\n".join(sorted(members)).encode()).hexdigest()[:16]
    return f"{ID_PREFIX}{level}:{digest}"


@dataclass(frozen=True, slots=True)
class Community:
    """A set of entities; at every level `members` holds every entity under it (sorted IRIs)."""

    id: str
    level: int  # 0 is the finest
    members: tuple[str, ...]
    parent: str | None = None
    children: tuple[str, ...] = ()  # ids one level down; () at level 0


@dataclass
class Hierarchy:
    """Communities by level, fine to coarse; within a level, largest first."""

    levels: list[list[Community]]
    params: DetectionParams = field(default_factory=DetectionParams)

    def communities(self) -> Iterator[Community]:
        for level in self.levels:
            yield from level

    def community(self, community: str) -> Community:
        """The community with that id (KeyError if there is none)."""
        return self._by_id[community]

    def community_of(self, entity: str, level: int) -> Community | None:
        """The community holding `entity` at `level` (None if no community does)."""
        found = self._by_entity[level].get(entity)
        return None if found is None else self._by_id[found]

    @cached_property
    def _by_id(self) -> dict[str, Community]:
        return {c.id: c for c in self.communities()}

    @cached_property
    def _by_entity(self) -> list[dict[str, str]]:
        return [{m: c.id for c in level for m in c.members} for level in self.levels]


@dataclass(frozen=True, slots=True)
class CommunityUpdate:
    """What an incremental update changed: communities are compared by their content ids."""

    hierarchy: Hierarchy
    added: tuple[Community, ...]  # communities whose id is new
    removed: tuple[Community, ...]  # previous communities whose id is gone
    affected_level0_ids: tuple[str, ...]  # previous level-0 communities that were re-detected


@dataclass(frozen=True, slots=True)
class LeidenJob:
    """One Leiden run as plain data. leidenalg holds the GIL while it works, so a caller that must keep an
    event loop responsive hands `run_leiden` and the job to another process (flow/derived/community.py)."""

    vertices: int
    edges: list[tuple[int, int]]
    weights: list[float]
    resolution: float
    seed: int
    iterations: int
    node_sizes: list[int] | None = None  # CPM with these vertex sizes; None: modularity (RB configuration)
    initial: list[int] | None = None
    fixed: list[bool] | None = None


Leiden = Callable[[LeidenJob], np.ndarray]


def run_leiden(job: LeidenJob) -> np.ndarray:
    """Community labels 0..k-1 of the job's vertices (seeded: the same job, the same labels)."""
    graph = igraph.Graph(n=job.vertices, edges=job.edges)
    graph.es["weight"] = job.weights
    if job.node_sizes is None:
        partition = leidenalg.RBConfigurationVertexPartition(
            graph, initial_membership=job.initial, weights="weight", resolution_parameter=job.resolution)
    else:
        partition = leidenalg.CPMVertexPartition(
            graph, weights="weight", node_sizes=job.node_sizes, resolution_parameter=job.resolution)
    optimiser = leidenalg.Optimiser()
    optimiser.set_rng_seed(job.seed)
    optimiser.optimise_partition(partition, n_iterations=job.iterations, is_membership_fixed=job.fixed)
    return np.unique(np.asarray(partition.membership), return_inverse=True)[1].astype(np.int64)


def detect(graph: FactGraph, params: DetectionParams = DetectionParams(), leiden: Leiden = run_leiden) -> Hierarchy:
    """Every level of communities of the fact graph, from scratch (`leiden` runs each Leiden job)."""
    if not graph.entities:
        return Hierarchy([], params)
    level0 = leiden(_modularity_job(len(graph.entities), graph.sources, graph.targets, graph.weights, params, level=0))
    return _climb(graph, level0, params, None, leiden)


def update(previous: Hierarchy, graph: FactGraph, changed: Iterable[str],
           params: DetectionParams = DetectionParams(), leiden: Leiden = run_leiden) -> CommunityUpdate:
    """The hierarchy after facts were added or removed, re-detecting only what the change touched.

    `changed` are the entities of the added and removed facts. A level-0 community is affected if it
    holds a changed entity or an entity no longer in the graph. Level 0 is re-detected (same params)
    only on the subgraph induced by the affected communities' remaining members and the new entities
    (those in no previous community), judged by the whole graph's modularity (`_within_whole_graph`),
    so a re-detected region comes out as a full detection would cut it; every other level-0 community
    is kept as it was, so its id stays.
    Each level up, Leiden runs on the new aggregate graph starting from the previous grouping: a
    community that existed before (same id) is fixed in its previous parent's group, and only new
    communities move (they may join an existing group or form their own). Members are always taken from
    the current graph, so a removed entity is a member of nothing at any level.
    """
    changed = set(changed)  # a set: the membership test below runs once per previous member
    index = graph.index
    kept: list[Community] = []
    affected: list[Community] = []
    for community in previous.levels[0] if previous.levels else ():
        touched = any(m in changed or m not in index for m in community.members)
        (affected if touched else kept).append(community)
    labels = _vertex_labels(graph, kept)
    free = np.flatnonzero(labels < 0)  # the affected communities' members still here, and new entities
    if len(free):
        labels[free] = len(kept) + leiden(_within_whole_graph(graph, free, params))
    hierarchy = _climb(graph, labels, params, previous, leiden) if len(labels) else Hierarchy([], params)
    before = {c.id: c for c in previous.communities()}
    after = {c.id: c for c in hierarchy.communities()}
    return CommunityUpdate(
        hierarchy=hierarchy,
        added=tuple(c for i, c in after.items() if i not in before),
        removed=tuple(c for i, c in before.items() if i not in after),
        affected_level0_ids=tuple(c.id for c in affected))


def rewritten(previous: Hierarchy, hierarchy: Hierarchy) -> list[Community]:
    """The communities whose stored record must be (re)written: new ones, and kept ones whose parent or
    children changed (their members did not, so their report stands)."""
    before = {c.id: c for c in previous.communities()}
    return [c for c in hierarchy.communities()
            if c.id not in before or (before[c.id].parent, before[c.id].children) != (c.parent, c.children)]


def modularity(graph: FactGraph, hierarchy: Hierarchy, level: int) -> float:
    """Weighted modularity (resolution 1) of one level's communities on the fact graph."""
    labels = _vertex_labels(graph, hierarchy.levels[level])
    loose = labels < 0  # an entity in no community counts as a community of its own
    labels[loose] = labels.max(initial=-1) + 1 + np.arange(int(loose.sum()))
    return graph.graph.modularity(labels.tolist(), weights="weight")


def _vertex_labels(graph: FactGraph, communities: list[Community]) -> np.ndarray:
    """Vertex -> index of its community in `communities`, -1 for a vertex in none."""
    labels = np.full(len(graph.entities), -1, dtype=np.int64)
    for i, community in enumerate(communities):
        labels[graph.vertices(community.members)] = i
    return labels


def _modularity_job(vertices: int, sources: np.ndarray, targets: np.ndarray, weights: np.ndarray,
                    params: DetectionParams, *, level: int, initial: list[int] | None = None,
                    fixed: list[bool] | None = None) -> LeidenJob:
    """Modularity at the level's resolution (the RB configuration model), to be optimised by Leiden."""
    return LeidenJob(vertices, np.column_stack([sources, targets]).tolist(), weights.tolist(),
                     params.resolution_at(level), params.seed, params.iterations, initial=initial, fixed=fixed)


def _within_whole_graph(graph: FactGraph, vertices: np.ndarray, params: DetectionParams) -> LeidenJob:
    """Level-0 modularity of the fact graph, restricted to partitions of `vertices` (sorted ids).

    Modularity on the induced subgraph alone would compare it with a null model of the subgraph, and so
    split a re-detected region much finer than a full detection would. CPM with each vertex's whole-graph
    degree as its size and resolution / (2 x total weight) is the whole graph's modularity up to a constant
    (sum of e_c - resolution x K_c^2 / 4m), so the region is judged as a full detection would judge it.
    """
    degrees = np.asarray(graph.graph.strength(vertices.tolist(), weights="weight"))
    subgraph = graph.graph.induced_subgraph(vertices.tolist())  # keeps the vertices' order
    resolution = params.resolution_at(0) / (2 * graph.weights.sum())
    return LeidenJob(len(vertices), subgraph.get_edgelist(), subgraph.es["weight"], resolution, params.seed,
                     params.iterations, node_sizes=np.rint(degrees).astype(int).tolist())  # whole: weights count facts


@dataclass
class _Aggregate:
    """The graph whose vertices are one level's communities, with the fact graph's weights summed."""

    sources: np.ndarray
    targets: np.ndarray
    weights: np.ndarray
    size: int

    @classmethod
    def of(cls, sources: np.ndarray, targets: np.ndarray, weights: np.ndarray, labels: np.ndarray) -> _Aggregate:
        size = int(labels.max()) + 1
        a, b = labels[sources], labels[targets]
        pair = np.minimum(a, b) * size + np.maximum(a, b)
        pairs, inverse = np.unique(pair, return_inverse=True)
        summed = np.bincount(inverse.ravel(), weights=weights, minlength=len(pairs))
        return cls(pairs // size, pairs % size, summed, size)


def _climb(graph: FactGraph, level0: np.ndarray, params: DetectionParams, previous: Hierarchy | None,
           leiden: Leiden) -> Hierarchy:
    """The hierarchy over level-0 labels (vertex -> 0..k-1): Leiden on each level's aggregate graph in turn,
    starting from `previous`'s grouping (see `update`) when there is one."""
    vertex_labels = [level0]
    members = [_members(graph, level0)]
    ids = [[community_id(0, m) for m in members[0]]]
    uplinks: list[np.ndarray] = []  # level L's community index -> level L+1's
    below = _Aggregate.of(graph.sources, graph.targets, graph.weights, level0)
    while len(ids) < params.max_levels and below.size > 1:
        level = len(ids)
        initial, fixed = _previous_grouping(previous, level, ids[-1])
        labels = leiden(_modularity_job(below.size, below.sources, below.targets, below.weights, params,
                                        level=level, initial=initial, fixed=fixed))
        if labels.max() + 1 == below.size:  # merged nothing
            break
        uplinks.append(labels)
        vertex_labels.append(labels[vertex_labels[-1]])
        members.append(_members(graph, vertex_labels[-1]))
        ids.append([community_id(level, m) for m in members[-1]])
        below = _Aggregate.of(below.sources, below.targets, below.weights, labels)
    return Hierarchy(_assemble(members, ids, uplinks), params)


def _members(graph: FactGraph, labels: np.ndarray) -> list[tuple[str, ...]]:
    """Each label's entities, sorted (vertices are numbered in IRI order, and a stable sort keeps that)."""
    entities = graph.entity_array[np.argsort(labels, kind="stable")]
    return [tuple(part) for part in np.split(entities, np.cumsum(np.bincount(labels))[:-1])]


def _previous_grouping(previous: Hierarchy | None, level: int,
                       below: list[str]) -> tuple[list[int] | None, list[bool] | None]:
    """Initial labels and fixed flags for the communities `below` (ids) at `level`: one that existed before
    starts, fixed, in its previous parent's group; any other starts alone and is free to move."""
    if previous is None or level >= len(previous.levels):
        return None, None
    parent_of = {c.id: c.parent for c in previous.levels[level - 1] if c.parent is not None}
    group = {parent: i for i, parent in enumerate(dict.fromkeys(parent_of.values()))}
    initial, fixed = [], []
    fresh = len(group)
    for community in below:
        parent = parent_of.get(community)
        fixed.append(parent is not None)
        if parent is None:
            initial.append(fresh)
            fresh += 1
        else:
            initial.append(group[parent])
    used = np.unique(initial, return_inverse=True)[1]  # leidenalg wants labels below the vertex count
    return used.tolist(), fixed


def _assemble(members: list[list[tuple[str, ...]]], ids: list[list[str]],
              uplinks: list[np.ndarray]) -> list[list[Community]]:
    levels = []
    for level, level_ids in enumerate(ids):
        parents: list[str | None] = [None] * len(level_ids)
        if level < len(uplinks):
            parents = [ids[level + 1][p] for p in uplinks[level].tolist()]
        children: list[list[str]] = [[] for _ in level_ids]
        if level > 0:
            for child, parent in zip(ids[level - 1], uplinks[level - 1].tolist()):
                children[parent].append(child)
        communities = [Community(id=i, level=level, members=m, parent=p, children=tuple(sorted(c)))
                       for i, m, p, c in zip(level_ids, members[level], parents, children)]
        levels.append(sorted(communities, key=lambda c: (-len(c.members), c.id)))
    return levels
