"""The trainer's word lattices on the compiled path: what `lattice.Lattices` does, word by word in numba.

`CompiledLattices` answers the trainer's requests (E-steps, log Z with the Viterbi piece counts,
alternatives, pruning) with the kernels of `tokviz.core.unigram.kernels`. The edges stay in one
(lattice, start, end) order as 32-bit arrays; pruning filters them; a big batch is cut in two and
its halves run on two threads at once. The results are the numpy path's up to rounding (sums are
added in another order, `exp` and `log` come from another library): the Viterbi counts are exact,
the probabilities agree to about 1e-12, and tinyshakespeare's model is the same but for the last
bits of its log-likelihoods (tested).

`make_lattices` picks this path when numba is there (`tokviz.core.jit`), `Lattices` otherwise.

What this leaves out: the numpy programmes (`lattice`), the two-process split (`split`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import ModuleType

import numpy as np

from tokviz.core import jit

from .lattice import Lattices, log_likelihoods

KERNELS = "tokviz.core.unigram.kernels"
THREAD_MIN_EDGES = 100_000  # smaller batches run on one core: a thread costs more than it saves


def load_kernels() -> ModuleType | None:
    """The compiled kernels, or None where they are off or do not load (`tokviz.core.jit`)."""
    return jit.kernels(KERNELS)


def make_lattices(kernels: ModuleType | None, lengths: np.ndarray, lat: np.ndarray, start: np.ndarray,
                  end: np.ndarray, piece: np.ndarray):
    """The batch of lattices on the compiled path with `kernels` (`load_kernels`), else `Lattices`
    (the other arguments as for `Lattices`)."""
    if kernels is None:
        return Lattices(lengths, lat, start, end, piece)
    return CompiledLattices(kernels, lengths, lat, start, end, piece)


def _together(jobs: list[Callable[[], object]]) -> list:
    """Run the jobs (each a call of a kernel, which lets go of the GIL) on both cores: the first
    here, the others on threads of their own. The jobs' results, in order."""
    if len(jobs) == 1:
        return [jobs[0]()]
    got: list = [None] * len(jobs)

    def run(i: int) -> None:
        try:
            got[i] = (True, jobs[i]())
        except BaseException as exc:  # handed to the caller below
            got[i] = (False, exc)

    workers = [threading.Thread(target=run, args=(i,), name="tokviz-unigram-kernel", daemon=True)
               for i in range(1, len(jobs))]
    for worker in workers:
        worker.start()
    try:
        run(0)
    finally:
        for worker in workers:
            worker.join()
    missing = (False, RuntimeError("a Unigram kernel thread did not finish"))
    results = []
    for ok, value in (g if g is not None else missing for g in got):
        if not ok:
            raise value
        results.append(value)
    return results


class CompiledLattices:
    """A batch of lattices for the compiled kernels; edges sorted by (lattice, start, end). A batch
    of at least `THREAD_MIN_EDGES` edges is cut in two at a lattice boundary, and the kernels run
    on both halves at once (`_together`); the halves' sums are added at the end."""

    def __init__(self, kernels: ModuleType, lengths, lat, start, end, piece) -> None:
        lat = np.asarray(lat, dtype=np.int64)
        lengths = np.asarray(lengths, dtype=np.int64)
        self._set(kernels, lengths, np.searchsorted(lat, np.arange(len(lengths) + 1)),
                  *(np.asarray(x, dtype=np.int32) for x in (start, end, piece)))

    def _set(self, kernels: ModuleType, lengths, eoff, start, end, piece) -> None:
        self.k, self.lengths, self.eoff, self.start, self.end, self.piece = kernels, lengths, eoff, start, end, piece
        n = len(lengths)
        cut = int(np.searchsorted(eoff, eoff[-1] // 2)) if n > 1 and len(piece) >= THREAD_MIN_EDGES else n
        self.cuts = [(0, cut), (cut, n)] if 0 < cut < n else [(0, n)]

    def _part(self, lo: int, hi: int) -> tuple:
        """(eoff, lengths, start, end, piece) of lattices ``lo..hi-1`` (views, offsets from 0)."""
        e0, e1 = self.eoff[lo], self.eoff[hi]
        return (self.eoff[lo:hi + 1] - e0, self.lengths[lo:hi], self.start[e0:e1], self.end[e0:e1], self.piece[e0:e1])

    def _per_part(self, kernel, *rest, weights: np.ndarray) -> list:
        """`kernel` on every part: ``kernel(*part, *rest, part's weights, n)``."""
        *rest, n = rest
        return _together([lambda lo=lo, hi=hi: kernel(*self._part(lo, hi), *rest, weights[lo:hi], n)
                          for lo, hi in self.cuts])

    def subset(self, keep_piece: np.ndarray) -> "CompiledLattices":
        """The same lattices with only the edges of the pieces where `keep_piece` is true (each
        part's on a core of its own)."""
        keep = np.asarray(keep_piece, dtype=np.bool_)

        def kept_in(lo: int, hi: int) -> tuple:
            eoff, _, start, end, piece = self._part(lo, hi)
            return self.k.keep_edges(eoff, start, end, piece, keep)

        parts = _together([lambda lo=lo, hi=hi: kept_in(lo, hi) for lo, hi in self.cuts])
        if len(parts) == 1:
            kept = parts[0]
        else:
            (off0, *rest0), (off1, *rest1) = parts
            kept = (np.concatenate((off0, off1[1:] + off0[-1])), *(np.concatenate(xy) for xy in zip(rest0, rest1)))
        out = CompiledLattices.__new__(CompiledLattices)
        out._set(self.k, self.lengths, *kept)
        return out

    def e_step(self, logp: np.ndarray, weights: np.ndarray, n_pieces: int) -> tuple[np.ndarray, np.ndarray]:
        """(expected count of each piece over all segmentations, weighted; log Z per lattice)."""
        parts = self._per_part(self.k.e_step, logp, n_pieces, weights=weights)
        counts = parts[0][0] + parts[1][0] if len(parts) > 1 else parts[0][0]
        return counts, np.concatenate([z for _, z in parts])

    def expected_counts(self, logp: np.ndarray, weights: np.ndarray, n_pieces: int) -> tuple[np.ndarray, float]:
        """(expected counts, log-likelihood): `e_step`'s."""
        counts, z = self.e_step(logp, weights, n_pieces)
        return counts, self.log_likelihoods(weights, (z,))[0]

    def log_z(self, logp: np.ndarray) -> np.ndarray:
        return self.log_z_and_freq(logp, logp, np.zeros(len(self.lengths)), 0)[0]

    def log_z_and_freq(self, logp: np.ndarray, scores: np.ndarray, weights: np.ndarray,
                       n_pieces: int) -> tuple[np.ndarray, np.ndarray]:
        """(log Z per lattice under `logp`; weighted uses of each piece in the Viterbi
        segmentations under `scores`)."""
        n = max(n_pieces, int(self.piece.max()) + 1 if len(self.piece) else 0)
        parts = self._per_part(self.k.log_z_and_freq, logp, scores, n, weights=weights)
        freq = parts[0][1] + parts[1][1] if len(parts) > 1 else parts[0][1]
        return np.concatenate([z for z, _ in parts]), freq

    def log_likelihoods(self, weights: np.ndarray, zs) -> list[float]:
        """``weights . z`` for each log Z array of `zs` (`tokviz.core.unigram.lattice.log_likelihoods`)."""
        return log_likelihoods(weights, zs)

    def alternatives(self, lats: np.ndarray, starts: np.ndarray, lengths: np.ndarray, scores: np.ndarray,
                     *, pieces: np.ndarray | None = None):
        """As `Lattices.alternatives` (rows stretch by stretch, each right to left); the stretches
        are shared out between the two cores when the batch is cut in two."""
        lats, starts, lengths = (np.asarray(x, dtype=np.int64) for x in (lats, starts, lengths))
        cost = np.cumsum(lengths * lengths)
        cut = int(np.searchsorted(cost, cost[-1] // 2)) if len(self.cuts) > 1 and len(cost) > 1 else len(lengths)
        spans = [(0, cut), (cut, len(lengths))] if 0 < cut < len(lengths) else [(0, len(lengths))]
        parts = _together([lambda a=a, b=b: self.k.alternatives(self.eoff, self.start, self.end, self.piece, scores,
                                                                lats[a:b], starts[a:b], lengths[a:b])
                           for a, b in spans])
        if len(parts) == 1:
            return parts[0]
        (k0, *rest0), (k1, *rest1) = parts
        return (np.concatenate((k0, k1 + spans[1][0])), *(np.concatenate(xy) for xy in zip(rest0, rest1)))
