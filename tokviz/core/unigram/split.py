"""The word lattices cut in two, the second half computed in a forked child: both cores for EM.

`SplitLattices` does what the trainer asks of one `Lattices` (expected counts, log Z, Viterbi,
alternatives, subset) for a batch cut at a lattice boundary into two halves of about as many
edges. The first half is computed here while a child forked once (`tokviz.core.processes.fork.fork_server`)
computes the second, keeps it and prunes it when told; if the child fails, the second half is
computed here from then on. The results are bit for bit those of one batch: every value is
computed lattice by lattice in the same way, the posteriors are put back in the one batch's
(start, lattice, end) order before they are summed, and the log-likelihood is the same dot product
of the same arrays. Only used where forking is safe (`use_split`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tokviz.core.processes.fork import ChildFailed, can_fork, fork_server

from .lattice import Lattices

PARALLEL_MIN_EDGES = 150_000  # below this the fork and the traffic cost more than they save


def _then(result, meanwhile: Callable[[], None] | None):
    if meanwhile is not None:
        meanwhile()
    return result


def use_split(lattices: Lattices) -> bool:
    """Is the batch big enough, and forking safe here?"""
    return len(lattices.piece) >= PARALLEL_MIN_EDGES and len(lattices.lengths) > 1 and can_fork()


def _half_op(lat: Lattices, weights: np.ndarray, kind: str, payload, array):
    """Do request `kind` on one half: (its lattices afterwards, answer ``(payload, array)``)."""
    if kind == "posts":
        post, z = lat.posts(array, weights)
        return lat, (len(post), np.concatenate((post, z)))
    if kind == "log_z":
        return lat, (None, lat.log_z(array))
    if kind == "viterbi":
        return lat, (None, np.stack(lat.viterbi(array)))
    if kind == "alternatives":
        return lat, (None, np.stack(lat.alternatives(*payload, array)))
    if kind == "subset":  # array None: as it is; answers the layout of its posteriors
        if array is not None:
            lat = lat.subset(array)
        counts = np.bincount(lat.post_starts())
        return lat, (len(counts), np.concatenate((counts, lat.post_pieces())))
    raise ValueError(f"unknown request {kind!r}")


class SplitLattices:
    """A batch of lattices in two halves (see the module doc); `close` ends the child."""

    def __init__(self, lattices: Lattices, weights: np.ndarray, *, fork: bool = True) -> None:
        n = len(lattices.lengths)
        per_lattice = np.cumsum(np.bincount(lattices.lat, minlength=n))
        self.cut = cut = int(min(max(np.searchsorted(per_lattice, per_lattice[-1] / 2) + 1, 1), n - 1))
        self.a, self.b = lattices.part(0, cut), lattices.part(cut, n)
        self.wa, self.wb = weights[:cut], weights[cut:]
        self._keep: np.ndarray | None = None  # the pieces kept so far (None: all)
        self._b_stale = False  # self.b lags behind the child's copy
        self._server = None
        if fork:
            try:
                self._server = fork_server(self._serve)
            except OSError:
                self._server = None
        self._relayout(*self._both("subset", None, None, lambda: self.a.post_pieces()))

    # -- the second half, in the child or here ------------------------------------------------

    def _serve(self, kind: str, payload, array):
        """The child's handler: its own copy of `b` follows the requests."""
        self.b, answer = _half_op(self.b, self.wb, kind, payload, array)
        return answer

    def _drop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    def _run_b(self, kind: str, payload, array):
        if self._b_stale:
            self.b = self.b.subset(self._keep)
            self._b_stale = False
        self.b, answer = _half_op(self.b, self.wb, kind, payload, array)
        return answer

    def _both(self, kind: str, payload, array, local):
        """(``local()`` for the first half, the second half's answer to the request)."""
        sent = False
        if self._server is not None:
            try:
                self._server.send(kind, payload, array)
                sent = True
            except ChildFailed:
                self._drop()
        if sent and kind == "subset" and array is not None:
            self._b_stale = True
        try:
            mine = local()
        except BaseException:
            self._drop()  # the child's answer would be out of step
            raise
        if sent:
            try:
                return mine, self._server.receive()
            except ChildFailed:
                self._drop()
        return mine, self._run_b(kind, payload, array)

    # -- merging the halves' posteriors -------------------------------------------------------

    def _relayout(self, _mine, answer) -> None:
        n_counts, arr = answer
        cb = arr[:n_counts]
        pieces_b = arr[n_counts:]
        ca = np.bincount(self.a.post_starts())
        width = max(len(ca), len(cb))
        ca, cb = (np.pad(c, (0, width - len(c))) for c in (ca, cb))
        fa, fb = np.cumsum(ca) - ca, np.cumsum(cb) - cb
        off = fa + fb
        self._runs_a = [(o, f, c) for o, f, c in zip(off.tolist(), fa.tolist(), ca.tolist()) if c]
        self._runs_b = [(o, f, c) for o, f, c in zip((off + ca).tolist(), fb.tolist(), cb.tolist()) if c]
        self._pieces = self._merge(self.a.post_pieces(), pieces_b)

    def _merge(self, xa: np.ndarray, xb: np.ndarray) -> np.ndarray:
        """The two halves' per-edge values in the one batch's (start, lattice, end) order."""
        out = np.empty(len(xa) + len(xb), dtype=xa.dtype)
        for runs, x in ((self._runs_a, xa), (self._runs_b, xb)):
            for o, f, c in runs:
                out[o:o + c] = x[f:f + c]
        return out

    # -- what the trainer asks ----------------------------------------------------------------

    def expected_counts(self, logp: np.ndarray, weights: np.ndarray, n_pieces: int) -> tuple[np.ndarray, float]:
        """As `Lattices.expected_counts` of the whole batch (`weights`: the whole batch's)."""
        (post_a, z_a), (n, both) = self._both("posts", None, logp, lambda: self.a.posts(logp, self.wa))
        post = self._merge(post_a, both[:n])
        counts = np.bincount(self._pieces, weights=post, minlength=n_pieces)
        return counts, float(np.dot(weights, np.concatenate((z_a, both[n:]))))

    def log_z(self, logp: np.ndarray) -> np.ndarray:
        z_a, (_, z_b) = self._both("log_z", None, logp, lambda: self.a.log_z(logp))
        return np.concatenate((z_a, z_b))

    def viterbi(self, scores: np.ndarray, *, meanwhile: Callable[[], None] | None = None):
        """As `Lattices.viterbi`; `meanwhile` is called while the child works."""
        mine, (_, rows) = self._both("viterbi", None, scores, lambda: _then(self.a.viterbi(scores), meanwhile))
        return (np.concatenate((mine[0], rows[0] + self.cut)), *(np.concatenate((x, y)) for x, y in zip(mine[1:], rows[1:])))

    def alternatives(self, lats: np.ndarray, starts: np.ndarray, lengths: np.ndarray, scores: np.ndarray):
        lats, starts, lengths = (np.asarray(x, dtype=np.int64) for x in (lats, starts, lengths))
        in_b = lats >= self.cut
        ka, kb = np.flatnonzero(~in_b), np.flatnonzero(in_b)
        mine, (_, rows) = self._both(
            "alternatives", (lats[kb] - self.cut, starts[kb], lengths[kb]), scores,
            lambda: self.a.alternatives(lats[ka], starts[ka], lengths[ka], scores))
        k = np.concatenate((ka[mine[0]], kb[rows[0]]))
        return (k, *(np.concatenate((x, y)) for x, y in zip(mine[1:], rows[1:])))

    def subset(self, keep_piece: np.ndarray, *, meanwhile: Callable[[], None] | None = None) -> "SplitLattices":
        """Keep only the edges of the pieces where `keep_piece` is true (in place; returns self);
        `meanwhile` is called while the child works."""
        self._keep = np.array(keep_piece, dtype=bool)

        def first_half():
            self.a = self.a.subset(self._keep, meanwhile=meanwhile)
            return self.a.post_pieces()  # its plan, made while the child makes its own

        self._relayout(*self._both("subset", None, self._keep, first_half))
        return self

    def close(self) -> None:
        """End the child; the second half is computed here from then on."""
        self._drop()
