"""Batched segmentation lattices in numpy: forward, backward, expected counts and Viterbi.

A lattice over a string of length n has nodes 0..n (positions between characters) and one edge
``start -> end`` for every vocabulary piece equal to ``string[start:end]``. A batch holds many
lattices (every distinct word of a corpus, or every piece of a vocabulary) as flat arrays; the
dynamic programmes run position by position, each position handling the edges ending (or
starting) there in every lattice at once with ``reduceat``. This is what makes EM over a corpus
fast in Python; `tokviz.core.unigram.tokenizer` has the plain per-word versions the tokenizer uses.

Viterbi ties, exactly: at each node, among incoming edges with the same best score, the one with
the smallest start (the longest piece) wins, so among equal-scoring segmentations the one whose
last piece is longest wins, then recursively to the left. Scores passed to `viterbi` should be
multiples of 2**-20 (as `tokviz.core.unigram.trainer` quantizes them) so that sums are exact and
ties are real ties.
"""

from __future__ import annotations

import numpy as np


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """Stable argsort of small non-negative integers (radix sort for 16-bit keys)."""
    if keys.size and keys.max() < 32768:
        keys = keys.astype(np.int16)
    return np.argsort(keys, kind="stable")


def _groups(sorted_nodes: np.ndarray, positions: np.ndarray, max_pos: int) -> list:
    """Per position t: (a, b, group starts relative to a, group sizes, group node ids) for the
    edges ``a:b`` at position t, grouped by node (consecutive equal `sorted_nodes`)."""
    n = len(sorted_nodes)
    bounds = np.searchsorted(positions, np.arange(max_pos + 2)).tolist()
    is_start = np.ones(n, dtype=bool)
    is_start[1:] = sorted_nodes[1:] != sorted_nodes[:-1]
    is_start[[b for b in bounds if b < n]] = True  # a position always starts a group
    starts = np.flatnonzero(is_start)
    out = []
    for t in range(max_pos + 1):
        a, b = bounds[t], bounds[t + 1]
        if a == b:
            out.append(None)
            continue
        lo, hi = np.searchsorted(starts, [a, b])
        g = starts[lo:hi]
        sizes = np.diff(np.append(g, b))
        out.append((a, b, g - a, sizes, sorted_nodes[g]))
    return out


def _logsumexp_groups(v: np.ndarray, rel: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """log(sum(exp(v))) over each group of consecutive entries (`v` is overwritten)."""
    m = np.maximum.reduceat(v, rel)
    v -= np.repeat(m, sizes)
    np.exp(v, out=v)
    s = np.add.reduceat(v, rel)
    np.log(s, out=s)
    s += m
    return s


class Lattices:
    """A batch of lattices. Edges must come sorted by (lattice, start, end).

    `lengths[i]`: string length of lattice i; edge e goes from ``start[e]`` to ``end[e]`` in
    lattice ``lat[e]`` and is piece ``piece[e]``.
    """

    def __init__(self, lengths: np.ndarray, lat: np.ndarray, start: np.ndarray, end: np.ndarray, piece: np.ndarray) -> None:
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.node_off = np.concatenate(([0], np.cumsum(self.lengths + 1)[:-1])).astype(np.int64)
        self.n_nodes = int(self.lengths.sum() + len(self.lengths))
        self.lat, self.start, self.end, self.piece = (np.asarray(x, dtype=np.int64) for x in (lat, start, end, piece))
        self.src = self.node_off[self.lat] + self.start
        self.dst = self.node_off[self.lat] + self.end
        self.max_len = int(self.lengths.max()) if len(self.lengths) else 0
        self.end_nodes = self.node_off + self.lengths
        self._fwd = None
        self._bwd = None
        self._orders: list[np.ndarray | None] = [None, None]  # edge orders of the two plans

    def subset(self, keep: np.ndarray) -> "Lattices":
        """The same lattices with only the edges where `keep` is true (sort orders carry over)."""
        out = Lattices(self.lengths, self.lat[keep], self.start[keep], self.end[keep], self.piece[keep])
        remap = np.cumsum(keep) - 1
        out._orders = [None if o is None else remap[o[keep[o]]] for o in self._orders]
        return out

    def _order(self, which: int, keys: np.ndarray) -> np.ndarray:
        if self._orders[which] is None:
            self._orders[which] = _stable_order(keys)
        return self._orders[which]

    def _forward_plan(self):
        if self._fwd is None:
            order = self._order(0, self.end)  # -> (end, lattice, start)
            src, dst, piece = self.src[order], self.dst[order], self.piece[order]
            self._fwd = (src, dst, piece, _groups(dst, self.end[order], self.max_len))
        return self._fwd

    def _backward_plan(self):
        if self._bwd is None:  # edges are already in (lattice, start, end) order
            order = self._order(1, self.start)  # -> (start, lattice, end)
            src, dst, piece, lat = self.src[order], self.dst[order], self.piece[order], self.lat[order]
            self._bwd = (src, dst, piece, lat, _groups(src, self.start[order], self.max_len))
        return self._bwd

    # -- sums over all segmentations ---------------------------------------------------------

    def forward(self, logp: np.ndarray) -> np.ndarray:
        """alpha[node]: log of the summed probability of all segmentations of the prefix."""
        src, _, piece, plan = self._forward_plan()
        alpha = np.full(self.n_nodes, -np.inf)
        alpha[self.node_off] = 0.0
        lp = logp.take(piece)
        for g in plan[1:]:
            if g is None:
                continue
            a, b, rel, sizes, nodes = g
            v = alpha.take(src[a:b])
            v += lp[a:b]
            alpha[nodes] = _logsumexp_groups(v, rel, sizes)
        return alpha

    def backward(self, logp: np.ndarray, *, post: np.ndarray | None = None) -> np.ndarray:
        """beta[node]: log of the summed probability of all segmentations of the suffix.

        With `post` (one entry per edge, in backward-plan order), ``logp + beta[dst]`` of each
        edge is added to it on the way (the E-step's posteriors need exactly that).
        """
        _, dst, piece, _, plan = self._backward_plan()
        beta = np.full(self.n_nodes, -np.inf)
        beta[self.end_nodes] = 0.0
        lp = logp.take(piece)
        for g in reversed(plan):
            if g is None:
                continue
            a, b, rel, sizes, nodes = g
            v = beta.take(dst[a:b])
            v += lp[a:b]
            if post is not None:
                post[a:b] += v
            beta[nodes] = _logsumexp_groups(v, rel, sizes)
        return beta

    def log_z(self, logp: np.ndarray) -> np.ndarray:
        """Per lattice: log of the summed probability of all its segmentations."""
        return self.forward(logp)[self.end_nodes]

    def expected_counts(self, logp: np.ndarray, weights: np.ndarray, n_pieces: int) -> tuple[np.ndarray, float]:
        """(expected count of each piece over all segmentations, weighted; log-likelihood).

        The E-step: an edge's posterior is ``exp(alpha[src] + logp + beta[dst] - log Z)``.
        """
        alpha = self.forward(logp)
        z = alpha[self.end_nodes]
        src, _, piece, lat, _ = self._backward_plan()
        post = alpha.take(src)
        post -= z.take(lat)
        self.backward(logp, post=post)  # adds logp + beta[dst]
        np.exp(post, out=post)
        post *= weights.take(lat)
        counts = np.bincount(piece, weights=post, minlength=n_pieces)
        return counts, float(np.dot(weights, z))

    # -- best segmentation -------------------------------------------------------------------

    def viterbi(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Best segmentation of every lattice: (lattice, start, end, piece) of each token,
        in no particular order (sort by (lattice, start) to read them)."""
        src, _, piece, plan = self._forward_plan()
        best = np.full(self.n_nodes, -np.inf)
        best[self.node_off] = 0.0
        back = np.full(self.n_nodes, -1, dtype=np.int64)
        sc = scores[piece]
        big = np.iinfo(np.int64).max
        edge_ids = np.arange(len(piece), dtype=np.int64)
        for g in plan[1:]:
            if g is None:
                continue
            a, b, rel, sizes, nodes = g
            v = best.take(src[a:b])
            v += sc[a:b]
            m = np.maximum.reduceat(v, rel)
            idx = np.where(v == np.repeat(m, sizes), edge_ids[a:b], big)
            back[nodes] = np.minimum.reduceat(idx, rel)  # first = smallest start
            best[nodes] = m
        lats = np.flatnonzero(self.lengths > 0)
        cur = self.end_nodes[lats]
        out_lat, out_src, out_dst, out_piece = [], [], [], []
        while cur.size:
            e = back[cur]
            out_lat.append(lats)
            out_dst.append(cur)
            out_piece.append(piece[e])
            cur = src[e]
            out_src.append(cur)
            more = cur != self.node_off[lats]
            cur, lats = cur[more], lats[more]
        if not out_lat:
            z = np.zeros(0, np.int64)
            return z, z, z, z
        lat = np.concatenate(out_lat)
        off = self.node_off[lat]
        return lat, np.concatenate(out_src) - off, np.concatenate(out_dst) - off, np.concatenate(out_piece)
