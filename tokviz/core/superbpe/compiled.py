"""SuperBPE's stage-2 trainer: `BpeTrainer` with its many-site merges compiled when numba is there.

The stage-2 corpus is the text itself more than a table of words (its chunks run across words, so
few repeat), so its merges have hundreds of sites where stage 1's have a handful, and the numpy
merge's fixed costs add up. With numba (`tokviz.core.jit`), `StageTwoTrainer` hands those merges to
`tokviz.core.superbpe.kernels.merge_sites` and only updates its dicts and heap here; without it,
it is `BpeTrainer` unchanged. Both make the same merges (tested against each other).

What this leaves out: the stage-2 start (`stage_two`), the trainer itself (`tokviz.core.bpe.trainer`).
"""

from __future__ import annotations

import heapq
from array import array
from types import ModuleType

import numpy as np

from tokviz.core import jit
from tokviz.core.bpe.pair_queue import CMAX, S1, S2, SHIFT
from tokviz.core.bpe.trainer import BpeTrainer

KERNELS = "tokviz.core.superbpe.kernels"


def load_kernels() -> ModuleType | None:
    """The compiled merge, or None where kernels are off or do not load (`tokviz.core.jit`)."""
    return jit.kernels(KERNELS)


class StageTwoTrainer(BpeTrainer):
    """`BpeTrainer` whose vectorized merges run compiled (`kernels.merge_sites`) when `kernels` is
    set after construction (`with_kernels`); the same merges either way."""

    _kernels: ModuleType | None = None

    def with_kernels(self, kernels: ModuleType | None) -> StageTwoTrainer:
        """Use the compiled merge of `kernels` (None: the numpy one); returns self."""
        self._kernels = kernels
        if kernels is not None:
            size = self.next_id + 1
            self._acc = np.zeros(size, np.int64)  # scratch of the kernel, one entry per token id
            self._slot = np.full(size, -1, np.int64)
        return self

    def _merge_vector(self, key: int, new: int, positions: array, start: int) -> int:
        k = self._kernels
        if k is None:
            return super()._merge_vector(key, new, positions, start)
        if new >= len(self._acc):  # room for ids to come, grown by doubling
            grow = len(self._acc)
            self._acc = np.concatenate((self._acc, np.zeros(grow, np.int64)))
            self._slot = np.concatenate((self._slot, np.full(grow, -1, np.int64)))
        a, b = key >> SHIFT, key & ((1 << SHIFT) - 1)
        ids, nxt, prv, wts = self._np
        P = np.frombuffer(positions, dtype=np.int64)[start:]  # a view: `positions` is no longer in occ
        merged, left, right, new_left, new_right = k.merge_sites(ids, nxt, prv, wts, P, a, b, new,
                                                                  self._acc, self._slot)
        if merged == 0:
            return 0
        counts = self.counts
        for tok, d in zip(left[0].tolist(), left[2].tolist()):
            counts[(tok << SHIFT) | a] -= d
        for tok, d in zip(right[0].tolist(), right[2].tolist()):
            counts[(b << SHIFT) | tok] -= d
        counts[key] -= int(merged)
        self._register(new_left, new, SHIFT)
        self._register(new_right, new << SHIFT, 0)
        return int(merged)

    def _register(self, groups, fixed: int, shift: int) -> None:
        """Count brand-new pairs, one a group: the pair of token t is ``fixed | t << shift``."""
        toks, starts, sums, pos = groups
        if len(toks) == 0:
            return
        raw = memoryview(pos).cast("B")
        first_pos = pos[starts[:-1]].tolist()
        bounds = starts.tolist()
        counts, occ, first, heap = self.counts, self.occ, self.first, self.heap
        min_count, mask = self.min_count, self._tie_mask
        for j, (t, c) in enumerate(zip(toks.tolist(), sums.tolist())):
            k = fixed | (t << shift)
            counts[k] = c
            if c < min_count:
                continue
            lst = array("q")
            lst.frombytes(raw[8 * bounds[j]: 8 * bounds[j + 1]])
            occ[k] = lst
            first[k] = 0
            heapq.heappush(heap, ((CMAX - c) << S1) | ((first_pos[j] & mask) << S2) | k)
