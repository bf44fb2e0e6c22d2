"""Batched segmentation lattices in numpy: forward, backward, expected counts and Viterbi.

A lattice over a string of length n has nodes 0..n (positions between characters) and one edge
``start -> end`` for every vocabulary piece equal to ``string[start:end]``. A batch holds many
lattices (every distinct word of a corpus, or every piece of a vocabulary) as flat arrays; the
dynamic programmes run position by position, each position handling the edges ending (or
starting) there in every lattice at once, column by column (`tokviz.core.unigram.columns`). This
is what makes EM over a corpus fast in Python; `tokviz.core.unigram.tokenizer` has the plain
per-word versions the tokenizer uses. The edges sorted by end and by start (with their column
layouts) are made once per batch and filtered, not re-sorted, when pruning removes pieces.

Viterbi ties, exactly: at each node, among incoming edges with the same best score, the one with
the smallest start (the longest piece) wins, so among equal-scoring segmentations the one whose
last piece is longest wins, then recursively to the left. Scores passed to `viterbi` should be
multiples of 2**-20 (as `tokviz.core.unigram.trainer` quantizes them) so that sums are exact and
ties are real ties.
"""

from __future__ import annotations


import numpy as np

from .columns import Columns, row_argmax_first, row_logsumexp


def log_likelihoods(weights: np.ndarray, zs) -> list[float]:
    """``weights . z`` for each log Z array of `zs`, summed in an order fixed by the arrays alone.

    Not `np.dot`: BLAS splits a dot product across its threads, so the last bits of the sum (and
    so a trained model's log-likelihoods) would change with the machine's BLAS and thread count,
    and a multi-threaded BLAS leaves a helper thread spinning on the other core afterwards.
    numpy's own sum is pairwise in a fixed order, on any machine.
    """
    return [float(np.multiply(weights, z).sum()) for z in zs]


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """Stable argsort of small non-negative integers (radix sort for 16-bit keys)."""
    if keys.size and keys.max() < 32768:
        keys = keys.astype(np.int16)
    return np.argsort(keys, kind="stable")


def viterbi_freq(z_and_tokens, weights: np.ndarray, n_pieces: int) -> tuple[np.ndarray, np.ndarray]:
    """(log Z, weighted uses of each piece) from ``(log Z, Viterbi tokens)``."""
    z, (lat, _, _, piece) = z_and_tokens
    return z, np.bincount(piece, weights=weights.take(lat), minlength=n_pieces)


class _Sorted:
    """The edges of a batch in one sort order (by end node or by start node), as the arrays a
    dynamic programme reads, and their column layout (`tokviz.core.unigram.columns`)."""

    def __init__(self, arrays: dict[str, np.ndarray], key: str, node: str, other: str) -> None:
        self.arrays = arrays  # name -> array, in this order
        self.cols = Columns(arrays[node], arrays[key])
        at = self.cols.order
        self.column = {name: arrays[name].take(at) for name in (other, "piece")}  # column layout
        self._names = (key, node, other)
        self.weights: np.ndarray | None = None  # the lattice weights `edge_weights` was made from
        self.edge_weights: np.ndarray | None = None

    def subset(self, keep_piece: np.ndarray) -> "_Sorted":
        keep = np.flatnonzero(keep_piece[self.arrays["piece"]])
        return _Sorted({name: x.take(keep) for name, x in self.arrays.items()}, *self._names)


class Lattices:
    """A batch of lattices. Edges must come sorted by (lattice, start, end).

    `lengths[i]`: string length of lattice i; edge e goes from ``start[e]`` to ``end[e]`` in
    lattice ``lat[e]`` and is piece ``piece[e]``.
    """

    def __init__(self, lengths: np.ndarray, lat: np.ndarray, start: np.ndarray, end: np.ndarray, piece: np.ndarray) -> None:
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.node_off = np.cumsum(self.lengths + 1) - (self.lengths + 1)
        self.n_nodes = int(self.lengths.sum() + len(self.lengths))
        self.lat, self.start, self.end, self.piece = (np.asarray(x, dtype=np.int64) for x in (lat, start, end, piece))
        self.src = self.node_off[self.lat] + self.start
        self.dst = self.node_off[self.lat] + self.end
        self.max_len = int(self.lengths.max()) if len(self.lengths) else 0
        self.end_nodes = self.node_off + self.lengths
        self._fwd: _Sorted | None = None  # by (end, lattice, start)
        self._bwd: _Sorted | None = None  # by (start, lattice, end)
        self._node_lat: np.ndarray | None = None

    def subset(self, keep_piece: np.ndarray) -> "Lattices":
        """The same lattices with only the edges of the pieces where `keep_piece` is true (the
        sorted arrays carry over: filtering keeps their order)."""
        keep = np.flatnonzero(keep_piece[self.piece])
        out = Lattices.__new__(Lattices)
        out.__dict__.update(self.__dict__)
        for name in ("lat", "start", "end", "piece", "src", "dst"):
            setattr(out, name, getattr(self, name).take(keep))
        out._fwd = out._bwd = None
        if self._fwd is not None:
            out._fwd = self._fwd.subset(keep_piece)
        if self._bwd is not None:
            out._bwd = self._bwd.subset(keep_piece)
        return out

    def part(self, lo: int, hi: int) -> "Lattices":
        """Lattices ``lo..hi-1`` as a batch of their own (numbered from 0)."""
        a, b = np.searchsorted(self.lat, [lo, hi])
        return Lattices(self.lengths[lo:hi], self.lat[a:b] - lo, self.start[a:b], self.end[a:b], self.piece[a:b])

    def _forward_plan(self) -> _Sorted:
        if self._fwd is None:
            order = _stable_order(self.end)  # (lattice, start, end) -> (end, lattice, start)
            self._fwd = _Sorted({name: getattr(self, name).take(order) for name in ("src", "dst", "end", "piece")},
                                "end", "dst", "src")
        return self._fwd

    def _backward_plan(self) -> _Sorted:
        if self._bwd is None:
            order = _stable_order(self.start)  # -> (start, lattice, end)
            names = ("src", "dst", "start", "piece", "lat")
            self._bwd = _Sorted({name: getattr(self, name).take(order) for name in names}, "start", "src", "dst")
        return self._bwd

    # -- sums over all segmentations ---------------------------------------------------------

    def forward(self, logp: np.ndarray) -> np.ndarray:
        """alpha[node]: log of the summed probability of all segmentations of the prefix."""
        plan = self._forward_plan()
        src, piece = plan.column["src"], plan.column["piece"]
        alpha = np.full(self.n_nodes, -np.inf)
        alpha[self.node_off] = 0.0
        lp = logp.take(piece)
        for step in plan.cols.steps:
            if step.position == 0:
                continue
            a, b = step.lo, step.hi
            v = alpha.take(src[a:b])
            v += lp[a:b]
            alpha[step.nodes] = row_logsumexp(v, step)
        return alpha

    def backward(self, logp: np.ndarray) -> np.ndarray:
        """beta[node]: log of the summed probability of all segmentations of the suffix."""
        plan = self._backward_plan()
        dst, piece = plan.column["dst"], plan.column["piece"]
        beta = np.full(self.n_nodes, -np.inf)
        beta[self.end_nodes] = 0.0
        lp = logp.take(piece)
        for step in reversed(plan.cols.steps):
            a, b = step.lo, step.hi
            v = beta.take(dst[a:b])
            v += lp[a:b]
            beta[step.nodes] = row_logsumexp(v, step)
        return beta

    def log_z(self, logp: np.ndarray) -> np.ndarray:
        """Per lattice: log of the summed probability of all its segmentations."""
        return self.forward(logp)[self.end_nodes]

    def posts(self, logp: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(weighted posterior of every edge in (start, lattice, end) order, log Z per lattice):
        an edge's posterior is ``exp(alpha[src] + logp + beta[dst] - log Z)``."""
        alpha = self.forward(logp)
        z = alpha[self.end_nodes]
        beta = self.backward(logp)
        plan = self._backward_plan()
        e = plan.arrays
        alpha -= z.take(self._node_lattice())  # alpha[src] - log Z of its lattice, node by node
        post = alpha.take(e["src"])
        v = beta.take(e["dst"])
        v += logp.take(e["piece"])
        post += v
        np.exp(post, out=post)
        if plan.weights is not weights:  # the weight of each edge's lattice, once per plan
            plan.weights, plan.edge_weights = weights, weights.take(e["lat"])
        post *= plan.edge_weights
        return post, z

    def _node_lattice(self) -> np.ndarray:
        """The lattice of each node."""
        if self._node_lat is None:
            self._node_lat = np.repeat(np.arange(len(self.lengths)), self.lengths + 1)
        return self._node_lat

    def post_pieces(self) -> np.ndarray:
        """The piece of each edge in the order `posts` gives them."""
        return self._backward_plan().arrays["piece"]

    def post_starts(self) -> np.ndarray:
        """The start of each edge in the order `posts` gives them (increasing)."""
        return self._backward_plan().arrays["start"]

    def log_z_and_viterbi(self, logp: np.ndarray, scores: np.ndarray):
        """``(log_z(logp), viterbi(scores))``."""
        return self.log_z(logp), self.viterbi(scores)

    def log_z_and_freq(self, logp: np.ndarray, scores: np.ndarray, weights: np.ndarray,
                       n_pieces: int) -> tuple[np.ndarray, np.ndarray]:
        """(log Z per lattice under `logp`; weighted uses of each piece in the Viterbi
        segmentations under `scores`)."""
        return viterbi_freq(self.log_z_and_viterbi(logp, scores), weights, n_pieces)

    def e_step(self, logp: np.ndarray, weights: np.ndarray, n_pieces: int) -> tuple[np.ndarray, np.ndarray]:
        """(expected count of each piece over all segmentations, weighted; log Z per lattice).

        The posteriors of `posts` are summed in their (start, lattice, end) order.
        """
        post, z = self.posts(logp, weights)
        return np.bincount(self.post_pieces(), weights=post, minlength=n_pieces), z

    def expected_counts(self, logp: np.ndarray, weights: np.ndarray, n_pieces: int) -> tuple[np.ndarray, float]:
        """(expected counts, log-likelihood ``weights . log Z``): `e_step`'s."""
        counts, z = self.e_step(logp, weights, n_pieces)
        return counts, log_likelihoods(weights, (z,))[0]

    def log_likelihoods(self, weights: np.ndarray, zs) -> list[float]:
        """``weights . z`` for each log Z array of `zs` (`log_likelihoods`)."""
        return log_likelihoods(weights, zs)

    def alternatives(self, lats: np.ndarray, starts: np.ndarray, lengths: np.ndarray, scores: np.ndarray,
                     *, pieces: np.ndarray | None = None):
        """Best segmentation of each stretch ``k`` (``lengths[k]`` characters from ``starts[k]``
        in lattice ``lats[k]``) without the one edge covering it whole: arrays (k, start, end,
        piece), one row per token, positions relative to the stretch, in `viterbi`'s order.
        (`pieces`, the piece each stretch spells, is for `SplitLattices`.)"""
        n = np.asarray(lengths, dtype=np.int64)
        os = np.asarray(starts, dtype=np.int64)
        node_lo = self.node_off[lats] + os
        lo = np.searchsorted(self.src, node_lo)
        hi = np.searchsorted(self.src, node_lo + n)
        cnt = hi - lo
        k = np.repeat(np.arange(len(n)), cnt)
        e = np.arange(int(cnt.sum())) + np.repeat(lo - (np.cumsum(cnt) - cnt), cnt)
        rs, re = self.start[e] - os[k], self.end[e] - os[k]
        ok = (re <= n[k]) & ~((rs == 0) & (re == n[k]))
        sub = Lattices(n, k[ok], rs[ok], re[ok], self.piece[e[ok]])
        return sub.viterbi(scores)

    # -- best segmentation -------------------------------------------------------------------

    def viterbi(self, scores: np.ndarray):
        """Best segmentation of every lattice: (lattice, start, end, piece) of each token,
        in no particular order (sort by (lattice, start) to read them)."""
        plan = self._forward_plan()
        src_c, piece_c, ids = plan.column["src"], plan.column["piece"], plan.cols.order
        best = np.full(self.n_nodes, -np.inf)
        best[self.node_off] = 0.0
        back = np.full(self.n_nodes, -1, dtype=np.int64)
        sc = scores[piece_c]
        for step in plan.cols.steps:
            if step.position == 0:
                continue
            a, b = step.lo, step.hi
            v = best.take(src_c[a:b])
            v += sc[a:b]
            m, first = row_argmax_first(v, step, ids[a:b])  # first = smallest start
            back[step.nodes] = first
            best[step.nodes] = m
        src, piece = plan.arrays["src"], plan.arrays["piece"]  # `back` holds indexes in this order
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
