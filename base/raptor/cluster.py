"""Deterministic clustering of unit vectors into groups of bounded size, the building step of a
RAPTOR tree: spherical k-means (k-means++ seeding from a fixed seed), applied top-down so 100k
vectors cost a few k-means runs of small k instead of one with k in the tens of thousands."""

from __future__ import annotations

import math

import numpy as np

# Above this many clusters one k-means run costs n·k·d per iteration; split coarsely first instead.
FANOUT = 32
ITERATIONS = 20


def bounded_clusters(vectors: np.ndarray, *, branching: int, max_size: int, seed: int) -> list[np.ndarray]:
    """Row indices of `vectors` (unit rows) in groups of about `branching` and at most `max_size`
    rows, ordered by their smallest index. The same input and seed always give the same groups;
    identical vectors that k-means cannot tell apart are cut into runs of `branching` in row order.

    >>> v = np.eye(3, dtype=np.float32)[[0, 0, 1, 1, 2]]
    >>> [g.tolist() for g in bounded_clusters(v, branching=2, max_size=2, seed=1)]
    [[0, 1], [2, 3], [4]]
    """
    if branching < 2 or max_size < branching:
        raise ValueError(f"need 2 <= branching <= max_size, not branching {branching}, max_size {max_size}")
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError(f"vectors must be a 2-d array, not shape {matrix.shape}")
    rng = np.random.default_rng(seed)
    groups = _partition(matrix, np.arange(len(matrix)), branching, max_size, rng)
    return sorted(groups, key=lambda g: int(g[0]))


def _partition(matrix: np.ndarray, rows: np.ndarray, branching: int, max_size: int,
               rng: np.random.Generator) -> list[np.ndarray]:
    k = min(math.ceil(len(rows) / branching), FANOUT)
    if k <= 1 and len(rows) <= max_size:
        return [rows] if len(rows) else []
    labels = spherical_kmeans(matrix[rows], max(k, 2), rng)
    groups = [np.sort(rows[labels == label]) for label in np.unique(labels)]
    if len(groups) == 1:  # all rows alike: no direction to split along
        return [rows[i:i + branching] for i in range(0, len(rows), branching)]
    out: list[np.ndarray] = []
    for group in groups:
        out.extend(_partition(matrix, group, branching, max_size, rng) if len(group) > max_size else [group])
    return out


def spherical_kmeans(matrix: np.ndarray, k: int, rng: np.random.Generator,
                     iterations: int = ITERATIONS) -> np.ndarray:
    """A cluster label per row (cosine assignment, centres re-normalised means). Labels are
    0..k'-1 with k' <= k: fewer when the rows hold fewer distinct directions. An emptied centre is
    moved to the row worst served by its own centre, so no cluster stays empty while rows differ."""
    centres = _kmeans_plus_plus(matrix, k, rng)
    labels = np.full(len(matrix), -1)
    for _ in range(iterations):
        similarity = matrix @ centres.T
        new_labels = similarity.argmax(axis=1)
        if np.array_equal(new_labels, labels):
            break
        labels = new_labels
        membership = np.zeros((len(centres), len(matrix)), dtype=np.float32)
        membership[labels, np.arange(len(matrix))] = 1.0  # k <= FANOUT rows: a small matrix product
        sums = membership @ matrix
        sizes = np.bincount(labels, minlength=len(centres))
        served = similarity[np.arange(len(matrix)), labels]
        for empty in np.flatnonzero(sizes == 0):
            worst = int(served.argmin())
            sums[empty] = matrix[worst]
            served[worst] = np.inf
        centres = _unit_rows(sums)
    _, labels = np.unique(labels, return_inverse=True)
    return labels


def _kmeans_plus_plus(matrix: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding on cosine distance; stops early when every row sits on a chosen centre."""
    chosen = [int(rng.integers(len(matrix)))]
    distance = np.clip(1.0 - matrix @ matrix[chosen[0]], 0.0, None)
    while len(chosen) < k:
        weights = distance.astype(np.float64)  # rng.choice wants probabilities summing to 1 in float64
        total = weights.sum()
        if total <= 1e-9:
            break
        pick = int(rng.choice(len(matrix), p=weights / total))
        chosen.append(pick)
        distance = np.minimum(distance, np.clip(1.0 - matrix @ matrix[pick], 0.0, None))
    return matrix[chosen].copy()


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)
