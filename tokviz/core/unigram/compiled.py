"""The trainer's word lattices on the compiled path: what `lattice.Lattices` does, word by word in numba.

`CompiledLattices` answers the trainer's requests (E-steps, log Z with the Viterbi piece counts,
alternatives, pruning) with the kernels of `tokviz.core.unigram.kernels`. The edges stay in one
(lattice, start, end) order as 32-bit arrays; pruning filters them. The results are the numpy
path's up to rounding (sums are added in another order, `exp` and `log` come from another
library): the Viterbi counts are exact, the probabilities agree to about 1e-12.

`make_lattices` picks this path when numba is there (`tokviz.core.jit`), `Lattices` otherwise.

What this leaves out: the numpy programmes (`lattice`), the two-process split (`split`).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import numpy as np

from tokviz.core import jit

from .lattice import Lattices

KERNELS = "tokviz.core.unigram.kernels"


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


def _then(meanwhile: Callable[[], None] | None) -> None:
    if meanwhile is not None:
        meanwhile()


class CompiledLattices:
    """A batch of lattices for the compiled kernels; edges sorted by (lattice, start, end)."""

    def __init__(self, kernels: ModuleType, lengths, lat, start, end, piece) -> None:
        self.k = kernels
        self.lengths = np.asarray(lengths, dtype=np.int64)
        lat = np.asarray(lat, dtype=np.int64)
        self.eoff = np.searchsorted(lat, np.arange(len(self.lengths) + 1))
        self.start, self.end, self.piece = (np.asarray(x, dtype=np.int32) for x in (start, end, piece))

    def subset(self, keep_piece: np.ndarray, *, meanwhile: Callable[[], None] | None = None) -> "CompiledLattices":
        """The same lattices with only the edges of the pieces where `keep_piece` is true."""
        _then(meanwhile)
        out = CompiledLattices.__new__(CompiledLattices)
        out.k, out.lengths = self.k, self.lengths
        out.eoff, out.start, out.end, out.piece = self.k.keep_edges(self.eoff, self.start, self.end, self.piece,
                                                                    np.asarray(keep_piece, dtype=np.bool_))
        return out

    def e_step(self, logp: np.ndarray, weights: np.ndarray, n_pieces: int, *,
               meanwhile: Callable[[], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(expected count of each piece over all segmentations, weighted; log Z per lattice)."""
        _then(meanwhile)
        return self.k.e_step(self.eoff, self.lengths, self.start, self.end, self.piece, logp, weights, n_pieces)

    def expected_counts(self, logp: np.ndarray, weights: np.ndarray, n_pieces: int) -> tuple[np.ndarray, float]:
        """(expected counts, log-likelihood): `e_step`'s."""
        counts, z = self.e_step(logp, weights, n_pieces)
        return counts, self.log_likelihoods(weights, (z,))[0]

    def log_z(self, logp: np.ndarray) -> np.ndarray:
        return self.log_z_and_freq(logp, logp, np.zeros(len(self.lengths)), 0)[0]

    def log_z_and_freq(self, logp: np.ndarray, scores: np.ndarray, weights: np.ndarray, n_pieces: int, *,
                       meanwhile: Callable[[], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(log Z per lattice under `logp`; weighted uses of each piece in the Viterbi
        segmentations under `scores`)."""
        n = max(n_pieces, int(self.piece.max()) + 1 if len(self.piece) else 0)
        _then(meanwhile)
        return self.k.log_z_and_freq(self.eoff, self.lengths, self.start, self.end, self.piece, logp, scores, weights, n)

    def log_likelihoods(self, weights: np.ndarray, zs) -> list[float]:
        """``weights . z`` for each log Z array of `zs` (numpy's pairwise sum, not BLAS: a
        multi-threaded BLAS would leave a helper thread spinning on the other core)."""
        return [float(np.multiply(weights, z).sum()) for z in zs]

    def alternatives(self, lats: np.ndarray, starts: np.ndarray, lengths: np.ndarray, scores: np.ndarray,
                     *, pieces: np.ndarray | None = None):
        """As `Lattices.alternatives` (rows stretch by stretch, each right to left)."""
        args = (np.asarray(x, dtype=np.int64) for x in (lats, starts, lengths))
        return self.k.alternatives(self.eoff, self.start, self.end, self.piece, scores, *args)
