"""SuperBPE's stage-2 trainer: `BpeTrainer` with its many-site merges compiled when numba is there.

The stage-2 corpus is the text itself more than a table of words (its chunks run across words, so
few repeat), so its merges have hundreds of sites where stage 1's have a handful, and the numpy
merge's fixed costs add up. With numba (`tokviz.core.jit`), `StageTwoTrainer` hands those merges to
`tokviz.core.superbpe.kernels.merge_step` and only updates its dicts and heap here; without it,
it is `BpeTrainer` unchanged. Both make the same merges (tested against each other).

What this leaves out: the stage-2 start (`stage_two`), the trainer itself (`tokviz.core.bpe.trainer`).
"""

from __future__ import annotations

import heapq
from array import array
from collections import defaultdict
from types import ModuleType

import numpy as np

from tokviz.core import jit
from tokviz.core.bpe.deferred_pairs import DeferredPairs, gathered, live_counts
from tokviz.core.bpe.pair_queue import CMAX, S1, S2, SHIFT, sorted_groups
from tokviz.core.bpe.trainer import N_CANDIDATES, BpeTrainer

KERNELS = "tokviz.core.superbpe.kernels"


def load_kernels() -> ModuleType | None:
    """The compiled merge, or None where kernels are off or do not load (`tokviz.core.jit`)."""
    return jit.kernels(KERNELS)


class StageTwoTrainer(BpeTrainer):
    """`BpeTrainer` whose vectorized merges run compiled (`kernels.merge_step`) when `kernels` is
    set after construction (`with_kernels`); the same merges either way.

    Its first pairs, and the new pairs of a compiled merge, are stored only once they could be
    among the best (`tokviz.core.bpe.deferred_pairs`): `next_best` stores those whose count when
    made reaches the n-th best count (less an eighth, so that they come a batch at a time)."""

    _kernels: ModuleType | None = None
    _first_kernels: ModuleType | None = None  # the kernels `from_flat` groups the first pairs with
    _deferred: DeferredPairs | None = None
    _stored: np.ndarray = np.zeros(0, np.int64)  # every pair key `_store` stored, sorted

    def with_kernels(self, kernels: ModuleType | None) -> StageTwoTrainer:
        """Use the compiled merge of `kernels` (None: the numpy one); returns self."""
        self._kernels = kernels
        if kernels is not None:
            size = self.next_id + 1
            self._acc = np.zeros(size, np.int64)  # scratch of the kernel, one entry per token id
            self._slot = np.full(size, -1, np.int64)
        return self

    @classmethod
    def from_flat(cls, ids: np.ndarray, lengths, weights, token_bytes, *, min_count: int = 2,
                  n_candidates: int = N_CANDIDATES, hf_order=None,
                  kernels: ModuleType | None = None) -> StageTwoTrainer:
        """`BpeTrainer.from_flat` with its first pairs grouped by `kernels` (`first_pair_groups`)
        when given; `with_kernels` next hands it the compiled merge."""
        if len(lengths) != len(weights):
            raise ValueError("lengths and weights differ in length")
        self = cls.__new__(cls)
        self._first_kernels = kernels
        self._init(np.asarray(ids, dtype=np.int64), lengths, weights, token_bytes, min_count=min_count,
                   n_candidates=n_candidates, hf_order=hf_order)
        return self

    def _count_initial_pairs(self) -> None:
        k = self._first_kernels
        ids, nxt, _, wts = self._np
        if k is None or len(ids) < 2:
            return super()._count_initial_pairs()
        keys, starts, ends, sums, pos = k.first_pair_groups(ids, nxt, wts, self.next_id)
        keep = sums >= self.min_count  # the others can never win
        self.counts, self.occ, self.heap = defaultdict(int), {}, []
        self.first = {}
        self._defer().add(keys[keep], sums[keep], pos, starts[keep], ends[keep], self.rank)

    def _add_groups(self, sk, sp, sw, counts, occ) -> list[int]:
        """The first pairs, deferred (`BpeTrainer._add_groups` stores each one)."""
        if len(sk):
            starts, ends, sums = sorted_groups(sk, sw)
            keep = sums >= self.min_count  # the others can never win
            self._defer().add(sk[starts[keep]], sums[keep], sp, starts[keep], ends[keep], self.rank)
        return []

    @property
    def waiting(self) -> int:
        """How many pairs are deferred, not stored yet."""
        return len(self._deferred) if self._deferred is not None else 0

    def _defer(self) -> DeferredPairs:
        if self._deferred is None:
            self._deferred = DeferredPairs()
        return self._deferred

    def next_best(self, n: int) -> list[int]:
        deferred = self._deferred
        while True:
            best = super().next_best(n)
            if not deferred:
                return best
            if len(best) < n:  # too few stored: the highest deferred ones, whatever their bound
                self._store(deferred.take(deferred.top(), at_least=max(n, 256)))
                continue
            bound = CMAX - (best[-1] >> S1)
            if deferred.top() < bound:
                return best  # nothing deferred can be among the n best
            self._store(deferred.take(bound - bound // 8))

    def _store(self, batches) -> None:
        """Store deferred pairs as `BpeTrainer` stores a new pair: its live count, its positions
        from its first live site, its heap entry (those fallen below `min_count`: nothing). Pairs
        deferred since the last merge are stored as they are (their bounds are their counts, every
        site live); the others are counted, compiled batch by batch, else as one (a few numpy calls
        a batch otherwise, thousands)."""
        fresh, stale = [], []
        for taken in batches:
            (fresh if taken.stamp == self.rank else stale).append(taken)
        kept = []
        for keys, starts, ends, buffer, bounds, _ in fresh:
            kept.append(self._keep(keys, starts, ends, buffer, bounds, np.zeros(len(keys), np.int64)))
        ids, nxt, _, wts = self._np
        k = self._kernels
        if k is not None:
            for keys, starts, ends, buffer, _, _ in stale:
                kept.append(self._keep(keys, starts, ends, buffer, *k.live_counts(ids, nxt, wts, keys, starts, ends,
                                                                                 buffer)))
        elif stale:
            keys, starts, ends, buffer = gathered(stale)
            kept.append(self._keep(keys, starts, ends, buffer, *live_counts(ids, nxt, wts, keys, starts, ends, buffer)))
        if kept:
            self._stored = np.union1d(self._stored, np.concatenate(kept))

    def _keep(self, keys, starts, ends, buffer, live, first_index) -> np.ndarray:
        """Store the pairs `keys` whose `live` count reaches `min_count`, their positions
        ``buffer[starts[i]:ends[i]]`` from index ``first_index[i]`` on; returns their keys."""
        keep = np.flatnonzero(live >= self.min_count)
        if len(keep) == 0:
            return keys[keep]
        kept, kept_counts, index = keys[keep].tolist(), live[keep].tolist(), first_index[keep]
        first_pos = (buffer[starts[keep] + index] & self._tie_mask).tolist()
        self.counts.update(zip(kept, kept_counts))
        self.occ.update(zip(kept, self._hold(buffer, starts[keep], ends[keep])))
        self.first.update(zip(kept, index.tolist()))
        heap = self.heap
        for e in [((CMAX - c) << S1) | (p << S2) | k for k, c, p in zip(kept, kept_counts, first_pos)]:
            heapq.heappush(heap, e)
        return keys[keep]

    def _vectorized(self, sites: int) -> bool:
        # compiled, every merge: its new pairs are deferred (`_merge_vector`), so a pair has a count
        # only once `_store` stored it
        return self._kernels is not None or super()._vectorized(sites)

    def live_pair_counts(self) -> dict[int, int]:
        """Every pair that can still win (at least `min_count`), stored or deferred, with its count
        now: what `counts` holds in a trainer that stores every pair (for checks)."""
        out = {k: c for k, c in self.counts.items() if c >= self.min_count}
        ids, nxt, _, wts = self._np
        for keys, starts, ends, buffer, _, _ in (self._deferred.pending() if self._deferred else ()):
            live, _ = live_counts(ids, nxt, wts, keys, starts, ends, buffer)
            out.update((k, c) for k, c in zip(keys.tolist(), live.tolist()) if c >= self.min_count)
        return out

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
        merged, lost_keys, lost, keys, sums, starts, ends, pos = k.merge_step(
            ids, nxt, prv, wts, P, a, b, new, self._acc, self._slot, self._stored, self.min_count)
        if merged == 0:
            return 0
        # only stored pairs keep a count (a deferred one is counted when stored): most are not
        counts = self.counts
        get = counts.get
        for x, d in zip(lost_keys.tolist(), lost.tolist()):
            c = get(x)
            if c is not None:
                counts[x] = c - d
        counts[key] -= int(merged)
        if len(keys):  # brand-new pairs, deferred: exact once the merge under way is done, at the next step
            self._defer().add(keys, sums, pos, starts, ends, self.rank + 1, ordered=True)
        return int(merged)
