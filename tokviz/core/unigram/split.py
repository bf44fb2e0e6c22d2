"""The word lattices cut in two, the second half computed in a forked child: both cores for EM.

`SplitLattices` does what the trainer asks of one `Lattices` (E-steps, log Z, Viterbi,
alternatives, subset) for a batch cut at a lattice boundary into two halves. The first half is
computed here while a child forked once (`tokviz.core.processes.fork.fork_server`) computes the
second, keeps it and prunes it when told; if the child fails, the second half is computed here
from then on. The parent takes the smaller share (`PARENT_SHARE`): it also merges the halves and prunes.

The results are bit for bit those of one batch: every value is computed lattice by lattice in
the same way, the posteriors are put back in the one batch's (start, lattice, end) order before
they are summed, and the log-likelihoods are the same fixed-order sums of the same arrays
(`tokviz.core.unigram.lattice.log_likelihoods`). Only used for a big batch when the caller allows two
processes and forking is safe (`use_split`); dropped when the machine gets busy (`_check_pace`).
"""

from __future__ import annotations

import time

import numpy as np

from tokviz.core.processes.fork import ChildFailed, fork_server
from tokviz.core.processes.parallel import usable

from .lattice import Lattices, log_likelihoods, viterbi_freq

MIN_BUSY_SHARE = 0.6  # of the wall time since the split, or the child is dropped (`_check_pace`)
PARALLEL_MIN_EDGES = 150_000  # below this the fork and the traffic cost more than they save
PARENT_SHARE = 0.35  # of the edges: the parent also merges the halves and prunes
PARENT_SHARE_ALTERNATIVES = 0.4  # of their cost (the child also sends its answer back)


def use_split(lattices: Lattices, processes: int = 1) -> bool:
    """Is the batch big enough, and may a second process (of the `processes` the caller allows)
    be forked here?"""
    return (len(lattices.piece) >= PARALLEL_MIN_EDGES and len(lattices.lengths) > 1
            and usable(processes) > 1)


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
        self.cut = cut = int(min(max(np.searchsorted(per_lattice, per_lattice[-1] * PARENT_SHARE) + 1, 1), n - 1))
        self.a, self.b = lattices.part(0, cut), lattices.part(cut, n)
        self.wa, self.wb = weights[:cut], weights[cut:]
        # an occurrence of each piece in the second half (lattice, start; -1: none), so that either
        # half can find the alternatives of half the pieces (any occurrence of a piece will do)
        b_lat, b_start, b_piece = self.b.lat, self.b.start, self.b.piece
        n_pieces = int(b_piece.max()) + 1 if len(b_piece) else 0
        first = np.full(n_pieces, len(b_piece), dtype=np.int64)
        np.minimum.at(first, b_piece, np.arange(len(b_piece)))
        has = first < len(b_piece)
        self._occ_b = np.where(has, b_lat.take(np.minimum(first, len(b_piece) - 1)) if len(b_piece) else -1, -1)
        self._occ_b_start = np.where(has, b_start.take(np.minimum(first, len(b_piece) - 1)) if len(b_piece) else 0, 0)
        self._keep: np.ndarray | None = None  # the pieces kept so far (None: all)
        self._b_stale = False  # self.b lags behind the child's copy
        self._server = None
        self._pending: list[tuple] = []  # requests whose answers are taken with the next one's
        self._closed = False
        self._clock = (time.perf_counter(), time.process_time())
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

    @property
    def child(self):
        """The forked child computing the second half (`fork_server`'s handle), or None when the
        second half is computed here (never forked, dropped, failed or closed)."""
        return self._server

    @property
    def closed(self) -> bool:
        """Whether `close` was called: the batch cannot be used any more."""
        return self._closed

    def drop_child(self) -> None:
        """End the child, if any: the second half is computed here from then on."""
        if self._server is not None:
            self._server.close()
            self._server = None

    def _run_b(self, kind: str, payload, array):
        if self._b_stale:
            self.b = self.b.subset(self._keep)
            self._b_stale = False
        self.b, answer = _half_op(self.b, self.wb, kind, payload, array)
        return answer

    def _send(self, kind: str, payload, array) -> bool:
        """Ask the child (if any) for `kind`; False when the second half is to be done here."""
        if self._closed:
            raise RuntimeError("these lattices were closed")
        if self._server is None:
            return False
        try:
            self._server.send(kind, payload, array)
        except ChildFailed:
            self.drop_child()
            return False
        if kind == "subset" and array is not None:
            self._b_stale = True
        return True

    def _answer(self, sent: bool, kind: str, payload, array):
        """The child's answer to a request sent, or the same computed here."""
        if sent and self._server is not None:
            try:
                return self._server.receive()
            except ChildFailed:
                self.drop_child()
        return self._run_b(kind, payload, array)

    def _settle(self) -> None:
        """Take the answers of the requests left waiting (in order)."""
        while self._pending:
            sent, kind, payload, array, then = self._pending.pop(0)
            then(self._answer(sent, kind, payload, array))

    def _both(self, kind: str, payload, array, local):
        """(``local()`` for the first half, the second half's answer to the request)."""
        sent = self._send(kind, payload, array)
        try:
            mine = local()
            self._settle()
        except BaseException:
            self.drop_child()  # the child's answers would be out of step
            raise
        return mine, self._answer(sent, kind, payload, array)

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

    def e_step(self, logp: np.ndarray, weights: np.ndarray, n_pieces: int) -> tuple[np.ndarray, np.ndarray]:
        """As `Lattices.e_step` of the whole batch (`weights`: the whole batch's, each half
        uses its own)."""
        (post_a, z_a), (n, both) = self._both("posts", None, logp, lambda: self.a.posts(logp, self.wa))
        post = self._merge(post_a, both[:n])
        return np.bincount(self._pieces, weights=post, minlength=n_pieces), np.concatenate((z_a, both[n:]))

    def expected_counts(self, logp: np.ndarray, weights: np.ndarray, n_pieces: int) -> tuple[np.ndarray, float]:
        counts, z = self.e_step(logp, weights, n_pieces)
        return counts, log_likelihoods(weights, (z,))[0]

    def log_likelihoods(self, weights: np.ndarray, zs) -> list[float]:
        """As `Lattices.log_likelihoods`."""
        return log_likelihoods(weights, zs)

    def log_z(self, logp: np.ndarray) -> np.ndarray:
        """As `Lattices.log_z`."""
        z_a, (_, z_b) = self._both("log_z", None, logp, lambda: self.a.log_z(logp))
        return np.concatenate((z_a, z_b))

    def log_z_and_viterbi(self, logp: np.ndarray, scores: np.ndarray):
        """``(log_z(logp), viterbi(scores))``, both asked of the child at once."""
        sent = self._send("log_z", None, logp)
        self._pending.append((sent, "log_z", None, logp, lambda answer: got.append(answer[1])))
        got: list[np.ndarray] = []
        z_a = self.a.log_z(logp)
        tokens = self.viterbi(scores)  # settles the log_z answer first
        return np.concatenate((z_a, got[0])), tokens

    def log_z_and_freq(self, logp: np.ndarray, scores: np.ndarray, weights: np.ndarray,
                       n_pieces: int) -> tuple[np.ndarray, np.ndarray]:
        """As `Lattices.log_z_and_freq`."""
        return viterbi_freq(self.log_z_and_viterbi(logp, scores), weights, n_pieces)

    def viterbi(self, scores: np.ndarray):
        """As `Lattices.viterbi`."""
        mine, (_, rows) = self._both("viterbi", None, scores, lambda: self.a.viterbi(scores))
        rest = (np.concatenate((x, y)) for x, y in zip(mine[1:], rows[1:]))
        return (np.concatenate((mine[0], rows[0] + self.cut)), *rest)

    def alternatives(self, lats: np.ndarray, starts: np.ndarray, lengths: np.ndarray, scores: np.ndarray,
                     *, pieces: np.ndarray | None = None):
        """As `Lattices.alternatives`; with the stretches' `pieces`, stretches of pieces that also
        occur in the second half are shared out to balance the halves."""
        lats, starts, lengths = (np.asarray(x, dtype=np.int64) for x in (lats, starts, lengths))
        in_b = lats >= self.cut
        b_lats, b_starts = lats - self.cut, starts.copy()
        if pieces is not None and len(pieces):
            pieces = np.asarray(pieces, dtype=np.int64)
            known = pieces < len(self._occ_b)
            occ = np.full(len(pieces), -1, dtype=np.int64)
            occ[known] = self._occ_b[pieces[known]]
            flex = np.flatnonzero(~in_b & (occ >= 0))  # first seen in the first half, also in the second
            cost = lengths * lengths  # about the edges of a stretch
            want = cost.sum() * (1 - PARENT_SHARE_ALTERNATIVES) - cost[in_b].sum()
            if want > 0 and len(flex):
                pick = flex[:int(np.searchsorted(np.cumsum(cost[flex]), want)) + 1]
                in_b[pick] = True
                b_lats[pick] = occ[pick]
                b_starts[pick] = self._occ_b_start[pieces[pick]]
        ka, kb = np.flatnonzero(~in_b), np.flatnonzero(in_b)
        mine, (_, rows) = self._both(
            "alternatives", (b_lats[kb], b_starts[kb], lengths[kb]), scores,
            lambda: self.a.alternatives(lats[ka], starts[ka], lengths[ka], scores))
        k = np.concatenate((ka[mine[0]], kb[rows[0]]))
        return (k, *(np.concatenate((x, y)) for x, y in zip(mine[1:], rows[1:])))

    def subset(self, keep_piece: np.ndarray) -> "SplitLattices":
        """Keep only the edges of the pieces where `keep_piece` is true (in place; returns self).
        The child's answer (the layout of its posteriors) is taken with the next request's."""
        self._keep = np.array(keep_piece, dtype=bool)
        self._settle()
        self._check_pace()
        sent = self._send("subset", None, self._keep)  # answered with the next request's answer
        self._pending.append((sent, "subset", None, self._keep, lambda answer: self._relayout(None, answer)))
        self.a = self.a.subset(self._keep)
        self.a.post_pieces()  # its plan, made while the child makes its own
        return self

    def _check_pace(self) -> None:
        """Drop the child if this process was busy less than `MIN_BUSY_SHARE` of the time since
        the split: the machine got busy and the halves wait for each other (on a busy machine
        that made training twice as slow as one process)."""
        wall = time.perf_counter() - self._clock[0]
        if self._server is not None and wall > 0 and (time.process_time() - self._clock[1]) / wall < MIN_BUSY_SHARE:
            self.drop_child()

    def close(self) -> None:
        """End the child (at once: an answer still awaited is dropped); the batch cannot be used
        after that."""
        self.drop_child()
        self._pending.clear()
        self._closed = True
