"""Similarity between token vectors: cosine matrices, nearest neighbours, and a tidy row order.

What the embedding-similarity heatmap shows: `cosine_similarity` of a set of token ids (by
default the tokens of the current text, or `most_frequent_ids`), `reorder_for_similarity` to put
similar tokens next to each other (both at once: `compute_similarity`, a ready-to-draw
`SimilarityView`), and `nearest_neighbours` of a selected token. Every function
takes an `EmbeddingTable` or a plain ``(V, D)`` array. What this leaves out: making the tables
(`tokviz.core.embeddings.table`, `tokviz.core.embeddings.training`) and drawing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from tokviz.core.errors import SettingsError

from .positional import similarity
from .table import EmbeddingTable


def _matrix(table: EmbeddingTable | np.ndarray) -> np.ndarray:
    m = table.vectors if isinstance(table, EmbeddingTable) else np.asarray(table)
    if m.ndim != 2 or m.dtype.kind not in "fiu":
        raise SettingsError(f"expected an embedding table (vocabulary x D), got shape {m.shape} of {m.dtype}")
    return m


def _ids(ids: Iterable[int], n_vocab: int) -> np.ndarray:
    arr = np.asarray(list(ids) if not isinstance(ids, np.ndarray) else ids)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise SettingsError("token ids must be a flat list of whole numbers")
    bad = arr[(arr < 0) | (arr >= n_vocab)]
    if bad.size:
        raise SettingsError(f"id {int(bad[0])} is not in the vocabulary (valid ids: 0..{n_vocab - 1})")
    return arr.astype(np.int64, copy=False)


def cosine_similarity(table: EmbeddingTable | np.ndarray, ids: Sequence[int]) -> np.ndarray:
    """Cosine similarity between the rows of `ids`, float32 ``(n, n)``: symmetric, unit diagonal.

    Repeated ids give repeated rows (the tokens of a text, as they occur); pass
    ``list(dict.fromkeys(ids))`` for each token once.

    >>> E = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    >>> cosine_similarity(E, [0, 2, 1]).astype(float).round(3).tolist()
    [[1.0, 0.707, 0.0], [0.707, 1.0, 0.707], [0.0, 0.707, 1.0]]
    """
    m = _matrix(table)
    idx = _ids(ids, m.shape[0])
    return similarity(m[idx], "cosine")


@dataclass(frozen=True)
class SimilarityView:
    """What the similarity heatmap draws: ids in display order and their cosine matrix."""

    ids: list[int]  # ids in display order
    matrix: np.ndarray  # (n, n) cosine similarity in display order
    reordered: bool


def compute_similarity(table: EmbeddingTable | np.ndarray, ids: Sequence[int], reorder: bool) -> SimilarityView:
    """Cosine similarity of `ids`, optionally reordered so similar tokens sit together.

    >>> E = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.1]])
    >>> compute_similarity(E, [0, 1, 2], reorder=True).ids
    [0, 2, 1]
    """
    s = cosine_similarity(table, ids)
    ids = [int(i) for i in ids]
    if reorder and len(ids) > 2:
        order = reorder_for_similarity(s)
        s = s[order][:, order]
        ids = [ids[i] for i in order.tolist()]
    return SimilarityView(ids, s, bool(reorder))


def nearest_neighbours(
    table: EmbeddingTable | np.ndarray,
    token_id: int,
    k: int = 10,
    *,
    among: Sequence[int] | None = None,
) -> list[tuple[int, float]]:
    """The `k` ids most cosine-similar to `token_id` (itself excluded): ``[(id, score), ...]``.

    Sorted by score, highest first, ties by id. `among` restricts the candidates (e.g. ids that
    occur in the corpus: rows never trained keep their random start). A zero vector is
    similar to nothing: every score is 0.

    >>> E = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0]])
    >>> [(i, round(s, 3)) for i, s in nearest_neighbours(E, 0, 2)]
    [(1, 0.994), (2, 0.0)]
    """
    m = _matrix(table)
    (tid,) = _ids([token_id], m.shape[0])
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise SettingsError(f"number of neighbours k must be at least 1, got {k!r}")
    cand = np.arange(m.shape[0]) if among is None else np.unique(_ids(among, m.shape[0]))
    cand = cand[cand != tid]
    x = m[cand].astype(np.float32)
    q = m[tid].astype(np.float32)
    norms = np.linalg.norm(x, axis=1) * np.linalg.norm(q)
    scores = np.divide(x @ q, norms, out=np.zeros(len(cand), dtype=np.float32), where=norms > 0)
    order = np.lexsort((cand, -scores))[:k]  # score descending, then id ascending
    return [(int(cand[i]), float(scores[i])) for i in order]


def most_frequent_ids(sequences: Iterable[Sequence[int]], n: int, *, exclude: Iterable[int] = ()) -> list[int]:
    """The `n` ids that occur most often in `sequences` (ties: smaller id first), minus `exclude`.

    >>> most_frequent_ids([[5, 1, 5], [2, 1, 5]], 2)
    [5, 1]
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise SettingsError(f"number of tokens must be a whole number >= 0, got {n!r}")
    parts = [np.asarray(s, dtype=np.int64) for s in sequences]
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    if flat.size and flat.min() < 0:
        raise SettingsError(f"token ids cannot be negative, got {int(flat.min())}")
    counts = np.bincount(flat) if flat.size else np.zeros(0, dtype=np.int64)
    skip = [i for i in exclude if 0 <= i < len(counts)]
    counts[skip] = 0
    present = np.flatnonzero(counts)
    order = np.lexsort((present, -counts[present]))[:n]
    return [int(i) for i in present[order]]


def reorder_for_similarity(sim: np.ndarray) -> np.ndarray:
    """A permutation of the rows that puts similar items next to each other, int64 ``(n,)``.

    Average-linkage hierarchical clustering on the distance ``max(S) - S``, built with the
    nearest-neighbour-chain algorithm (O(n^2) time: 1000 items in well under a second), read out
    leaf by leaf. When two clusters join, each may be flipped so that the two items meeting at
    the seam are the most similar choice. Show ``S[p][:, p]`` with ``p = reorder_for_similarity(S)``.

    >>> S = np.array([[1, .1, .9, .1], [.1, 1, .1, .8], [.9, .1, 1, .1], [.1, .8, .1, 1]])
    >>> reorder_for_similarity(S).tolist()
    [0, 2, 1, 3]
    """
    s = np.asarray(sim, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1]:
        raise SettingsError(f"reordering needs a square similarity matrix, got shape {s.shape}")
    n = s.shape[0]
    if n <= 2:
        return np.arange(n, dtype=np.int64)
    s = (s + s.T) / 2
    finite = np.isfinite(s)
    low = s[finite].min() if finite.any() else 0.0
    s = np.where(finite, s, low)  # unknown similarity: as dissimilar as anything
    dist = s.max() - s  # (n, n) >= 0
    np.fill_diagonal(dist, np.inf)
    size = np.ones(n)
    active = np.ones(n, dtype=bool)
    members: list[list[int]] = [[i] for i in range(n)]
    chain: list[int] = []
    remaining = n
    while remaining > 1:
        if not chain:
            chain.append(int(np.argmax(active)))
        a = chain[-1]
        row = dist[a]
        b = int(np.argmin(row))
        if len(chain) > 1 and row[chain[-2]] <= row[b]:
            b = chain[-2]  # reciprocal nearest neighbours: merge them
        if len(chain) > 1 and b == chain[-2]:
            chain.pop()
            chain.pop()
            lo, hi = min(a, b), max(a, b)
            merged = (size[a] * dist[a] + size[b] * dist[b]) / (size[a] + size[b])  # Lance-Williams
            dist[lo], dist[:, lo] = merged, merged
            dist[hi], dist[:, hi] = np.inf, np.inf
            dist[lo, lo] = np.inf
            size[lo] += size[hi]
            active[hi] = False
            members[lo] = _join(members[lo], members[hi], s)
            members[hi] = []
            remaining -= 1
        else:
            chain.append(b)
    return np.array(members[int(np.argmax(size))], dtype=np.int64)


def _join(left: list[int], right: list[int], s: np.ndarray) -> list[int]:
    """Concatenate two leaf orders, flipping either so the items at the seam are most similar."""
    options = [
        (s[left[-1], right[0]], False, False),
        (s[left[-1], right[-1]], False, True),
        (s[left[0], right[0]], True, False),
        (s[left[0], right[-1]], True, True),
    ]
    best = max(range(4), key=lambda i: (options[i][0], -i))  # ties: fewest flips (first option)
    _, flip_left, flip_right = options[best]
    return (left[::-1] if flip_left else left) + (right[::-1] if flip_right else right)
