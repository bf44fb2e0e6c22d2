"""Per-node reductions over the edges of many lattices at once, exact and fast.

At each position, the dynamic programmes of `tokviz.core.unigram.lattice` reduce the values of the
edges into (or out of) every node: a maximum, a log-sum-exp, or the first edge reaching the
maximum. ``np.maximum.reduceat`` and ``np.add.reduceat`` do that with one inner-loop call per
node, and most nodes have only 2 to 5 edges. Here the nodes of a position are sorted by their
number of edges (most first) and the j-th edge of every node that has more than j forms column j,
one contiguous run: every reduction is a few whole-slice operations per column.

Sums are added in exactly the order ``np.add.reduceat`` adds them (a group's first element plus
numpy's pairwise sum of the others, which adds fewer than 8 numbers one after the other), so the
results are bit for bit those of ``reduceat``; the rare node with more than 8 edges still goes
through ``reduceat``. Worked example, one position with nodes n1 (edges a, b, c) and n2 (edge d):
columns ``[a, d] [b] [c]``; the sum of n1 is ``a + (b + c)``, as ``reduceat`` computes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_PAIRWISE = 8  # numpy adds up to this many numbers after a group's first one by one


@dataclass(frozen=True, slots=True)
class ColumnStep:
    """The edges of one position: ``lo:hi`` of the column layout, column j at ``cols[j]``
    (relative to ``lo``), the nodes in row order, and the rows with more than 8 edges (the first
    ``n_big``) as ``reduceat`` indices (`big_take`, `big_at`; None when there are none)."""

    position: int
    lo: int
    hi: int
    cols: tuple[tuple[int, int], ...]
    nodes: np.ndarray
    n_big: int
    big_take: np.ndarray | None
    big_at: np.ndarray | None


class Columns:
    """Edges sorted by (position, node, edge order) laid out column by column (a node is at
    one position: in a lattice, an edge's end node or start node fixes its position).

    `order[i]` is the index (in the given order) of the edge at place i of the column layout;
    `steps` has one `ColumnStep` per position that has edges, in increasing position.
    """

    def __init__(self, nodes: np.ndarray, positions: np.ndarray) -> None:
        n = len(nodes)
        self.order = np.zeros(0, dtype=np.int64)
        self.steps: list[ColumnStep] = []
        if not n:
            return
        is_start = np.ones(n, dtype=bool)
        is_start[1:] = nodes[1:] != nodes[:-1]  # (a node is at one position only)
        gstart = np.flatnonzero(is_start)
        gsize = np.diff(np.append(gstart, n))
        gpos = positions[gstart]
        kmax = int(gsize.max())
        n_pos = int(gpos[-1]) + 1
        # rows of a position: most edges first, ties in the given order (a stable radix sort)
        key = gpos * (kmax + 1) + (kmax - gsize)
        gorder = np.argsort(key.astype(np.int16) if n_pos * (kmax + 1) < 32768 else key, kind="stable")
        starts, sizes = gstart[gorder], gsize[gorder]
        pos_first = np.searchsorted(gpos, np.arange(n_pos + 1)).tolist()
        # ncol[t][j]: rows of position t with more than j edges
        cnt = np.bincount(gpos * (kmax + 1) + gsize, minlength=n_pos * (kmax + 1)).reshape(n_pos, kmax + 1)
        ncol = np.cumsum(cnt[:, ::-1], axis=1)[:, ::-1][:, 1:].tolist()
        parts = []
        lo = 0
        for t in range(n_pos):
            g0, g1 = pos_first[t], pos_first[t + 1]
            if g0 == g1:
                continue
            row_starts = starts[g0:g1]
            cols, off = [], 0
            for j, c in enumerate(ncol[t]):
                if not c:
                    break
                parts.append(row_starts[:c] + j)
                cols.append((off, off + c))
                off += c
            n_big = ncol[t][_PAIRWISE] if kmax > _PAIRWISE else 0
            take = at = None
            if n_big:
                big = sizes[g0:g0 + n_big]
                at = np.concatenate(([0], np.cumsum(big)[:-1]))
                r = np.repeat(np.arange(n_big), big)
                j = np.arange(int(big.sum())) - np.repeat(at, big)
                take = np.array([c0 for c0, _ in cols])[j] + r
            self.steps.append(ColumnStep(t, lo, lo + off, tuple(cols), nodes[row_starts], n_big, take, at))
            lo += off
        self.order = np.concatenate(parts)


def row_max(v: np.ndarray, step: ColumnStep) -> np.ndarray:
    """The maximum of each row's values (`v`: the step's values in column layout)."""
    (s0, e0), rest = step.cols[0], step.cols[1:]
    m = v[s0:e0].copy()
    for s, e in rest:
        k = e - s
        np.maximum(m[:k], v[s:e], out=m[:k])
    return m


def row_logsumexp(v: np.ndarray, step: ColumnStep) -> np.ndarray:
    """log(sum(exp(v))) of each row, bit for bit as max + ``np.add.reduceat`` would give it
    (`v` is overwritten)."""
    m = row_max(v, step)
    cols = step.cols
    for s, e in cols:
        v[s:e] -= m[: e - s]
    np.exp(v, out=v)
    s0, e0 = cols[0]
    total = v[s0:e0].copy()
    if len(cols) > 1:
        s1, e1 = cols[1]
        rest = v[s1:e1].copy()  # the elements after the first, added one by one
        for s, e in cols[2:]:
            rest[: e - s] += v[s:e]
        total[: e1 - s1] += rest
    if step.n_big:
        total[: step.n_big] = np.add.reduceat(v.take(step.big_take), step.big_at)
    np.log(total, out=total)
    total += m
    return total


def row_argmax_first(v: np.ndarray, step: ColumnStep, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(maximum of each row, the id of its first edge reaching it); `ids`: the step's edge ids
    in column layout."""
    m = row_max(v, step)
    best = np.empty(len(m), dtype=ids.dtype)
    for s, e in reversed(step.cols):  # the first column reaching the maximum is written last
        k = e - s
        np.copyto(best[:k], ids[s:e], where=v[s:e] == m[:k])
    return m, best
