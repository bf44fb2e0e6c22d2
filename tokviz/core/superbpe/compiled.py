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
        get = counts.get
        for keys, lost in (((left[0] << SHIFT) | a, left[2]), ((b << SHIFT) | right[0], right[2])):
            for k, d in zip(keys.tolist(), lost.tolist()):
                c = get(k)
                if c is not None:  # (a pair not counted can never win: `_register`)
                    counts[k] = c - d
        counts[key] -= int(merged)
        self._register(new_left, new, SHIFT)
        self._register(new_right, new << SHIFT, 0)
        return int(merged)

    def _register(self, groups, fixed: int, shift: int) -> None:
        """Count brand-new pairs, one a group: the pair of token t is ``fixed | t << shift``. The
        groups' positions stay in the kernel's buffer (`PairQueue._hold`) and every dict is filled
        by one C call: a Python loop a pair took half the stage's time (4.5 of 8.5 s)."""
        toks, starts, sums, pos = groups
        if len(toks) == 0:
            return
        keep = np.flatnonzero(sums >= self.min_count)  # the others can never win: not even counted
        if len(keep) == 0:
            return
        kept, kept_sums = ((toks[keep] << shift) | fixed).tolist(), sums[keep].tolist()
        self.counts.update(zip(kept, kept_sums))
        first_pos = (pos[starts[keep]] & self._tie_mask).tolist()
        self.occ.update(zip(kept, self._hold(pos, starts[keep], starts[keep + 1])))
        self.first.update(dict.fromkeys(kept, 0))
        heap = self.heap
        for e in [((CMAX - c) << S1) | (p << S2) | k for k, c, p in zip(kept, kept_sums, first_pos)]:
            heapq.heappush(heap, e)
