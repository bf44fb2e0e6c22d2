"""The supermerge side of BoundlessBPE training: pairs of adjacent whole pretokens, counted and joined.

The runs of pretokens (`tokviz.core.boundless.runs`) are laid end to end in flat arrays with
next/previous links, as `tokviz.core.bpe.trainer.BpeTrainer` lays out chunks. A position holds a
pretoken that is *locked* (-1: not yet a single token), or the id of its single token once the word
side made it one (`unlock`), or a superword made by a supermerge. A pair counts only when both of
its elements are unlocked; each pair keeps its positions and weighted count, and a heap of
``(-count, first position, pair)`` keys with lazy invalidation (`tokviz.core.bpe.pair_queue`) picks the winner: the highest count,
then the pair seen first (runs in order of first appearance, then position in the run).

That heap is exact for the same reason as BPE's: every occurrence of a pair is created in one
step (an unlocked pretoken's token and a superword are new ids, so a pair that includes one is
new), and afterwards its count only falls and its first occurrence only moves later.

Counting is BPE's (``a a a`` holds ``(a, a)`` twice; a merge joins left to right), not the paper's
code, which counts a run of equal pairs once per two.

    >>> t = SuperTrainer([[0, 1, 0, 1], [1, 0]], [1, 2], n_chunks=2)
    >>> t.unlock([(0, 300), (1, 301)])
    >>> count, _, pair = t.best(); count, pair >> 32, pair & 0xFFFFFFFF   # (301, 300): 1 + 2
    (3, 301, 300)
    >>> t.merge(pair, 302), t.best()  # the pairs left occur once: below the minimum count
    (3, None)
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence

import numpy as np

from tokviz.core.bpe.pair_queue import MASK as _MASK
from tokviz.core.bpe.pair_queue import SHIFT as _SHIFT
from tokviz.core.bpe.pair_queue import PairQueue, heap_entry, key_groups, linked
from tokviz.core.bpe.trainer_records import Candidate

VECTOR_MIN_SITES = 64  # unlocks of at least this many sites count their pairs in numpy
LOCKED, GONE = -1, -2  # a pretoken not yet one token; a position joined into its left neighbour


class SuperTrainer(PairQueue):
    """The state of the supermerge side; `unlock` pretokens, ask `best`, `merge` the winner."""

    def __init__(self, runs: Sequence[Sequence[int]], weights: Sequence[int], *, n_chunks: int,
                 min_count: int = 2) -> None:
        """`runs`: each run's pretokens as chunk numbers (below `n_chunks`); `weights`: how often
        each run occurs."""
        lengths = np.fromiter((len(r) for r in runs), dtype=np.int64, count=len(runs))
        n = int(lengths.sum())
        flat = np.fromiter((c for r in runs for c in r), dtype=np.int64, count=n)
        starts, nxt, prv = linked(lengths)
        self.ids = array("q", np.full(n, LOCKED, dtype=np.int64).tobytes())
        self.nxt = array("q", nxt.tobytes())
        self.prv = array("q", prv.tobytes())
        self.wts = array("q", np.repeat(np.asarray(weights, dtype=np.int64), lengths).tobytes())
        self.starts = starts.tolist()
        # chunk -> its positions, ascending (where `unlock` writes the chunk's token)
        order = np.argsort(flat, kind="stable")
        bounds = np.searchsorted(flat[order], np.arange(n_chunks + 1))
        self._order, self._bounds = order, bounds
        self.min_count = max(1, min_count)
        self.counts: dict[int, int] = {}
        self.occ: dict[int, array] = {}
        self.first: dict[int, int] = {}
        self.heap: list[int] = []

    def sites(self, chunk: int) -> np.ndarray:
        """The positions of pretoken `chunk` in the runs, ascending."""
        return self._order[self._bounds[chunk]:self._bounds[chunk + 1]]

    # -- unlocking ------------------------------------------------------------------------------

    def unlock(self, pairs: Iterable[tuple[int, int]]) -> None:
        """Pretoken `chunk` is now the single token `token`, for each ``(chunk, token)``: its
        positions take the token, and its pairs with unlocked neighbours start to count. Every
        token given must be new to this side (a pair that includes it is then a new pair)."""
        ids, nxt, prv, wts = self.ids, self.nxt, self.prv, self.wts
        touched = []
        for chunk, token in pairs:
            where = self.sites(chunk)
            if len(where) >= VECTOR_MIN_SITES:
                np.frombuffer(ids, dtype=np.int64)[where] = token
            else:
                for p in where.tolist():
                    ids[p] = token
            touched.append(where)
        if not touched:
            return
        where = np.sort(np.concatenate(touched))
        if len(where) >= VECTOR_MIN_SITES:
            self._unlock_vector(where)
            return
        positions = where.tolist()
        mine = set(positions)
        counts, occ = self.counts, self.occ
        new_keys: dict[int, None] = {}
        for p in positions:  # ascending, so each pair's positions are appended in order
            o = prv[p]
            if o >= 0 and o not in mine and ids[o] >= 0:  # a pair with a neighbour of this batch is counted from its left
                self._add((ids[o] << _SHIFT) | ids[p], o, wts[p], counts, occ, new_keys)
            r = nxt[p]
            if r >= 0 and ids[r] >= 0:
                self._add((ids[p] << _SHIFT) | ids[r], p, wts[p], counts, occ, new_keys)
        self._push(new_keys)

    def _unlock_vector(self, where: np.ndarray) -> None:
        """`unlock`'s counting of new pairs in numpy, for many sites: the same pairs, counts and
        positions (ascending), the same heap entries."""
        ids, nxt, prv, wts = (np.frombuffer(a, dtype=np.int64) for a in (self.ids, self.nxt, self.prv, self.wts))
        O, R, W = prv[where], nxt[where], wts[where]
        left = (O >= 0) & ~np.isin(O, where)  # a pair with a neighbour of this batch is counted from its left
        left[left] = ids[O[left]] >= 0
        right = R >= 0
        right[right] = ids[R[right]] >= 0
        tok = ids[where]
        # in the loop's order: site by site, its left pair (at O) before its right pair (at the site)
        keys = np.stack(((ids[np.where(left, O, 0)] << _SHIFT) | tok, (tok << _SHIFT) | ids[np.where(right, R, 0)]), 1)
        pos = np.stack((O, where), 1)
        live = np.stack((left, right), 1)
        keys, pos, w = keys[live], pos[live], np.stack((W, W), 1)[live]
        if len(keys) == 0:
            return
        sk, sp, starts, ends, sums = key_groups(keys, pos, w)
        counts, occ = self.counts, self.occ
        new_keys: dict[int, None] = {}
        raw = memoryview(np.ascontiguousarray(sp)).cast("B")
        for k, c, a, b in zip(sk[starts].tolist(), sums.tolist(), starts.tolist(), ends.tolist()):
            found = array("q")
            found.frombytes(raw[8 * a:8 * b])
            if k in counts:
                counts[k] += c
                occ[k].extend(found)
            else:
                counts[k] = c
                occ[k] = found
                new_keys[k] = None
        self._push(new_keys)

    @staticmethod
    def _add(key: int, pos: int, w: int, counts: dict, occ: dict, new_keys: dict) -> None:
        if key in counts:
            counts[key] += w
            occ[key].append(pos)
        else:
            counts[key] = w
            occ[key] = array("q", (pos,))
            new_keys[key] = None

    def _push(self, keys: Iterable[int]) -> None:
        """Put new pairs on the heap (those below `min_count` never can win: forget them)."""
        counts, occ, first, heap = self.counts, self.occ, self.first, self.heap
        for k in keys:
            c = counts[k]
            if c >= self.min_count:
                first[k] = 0
                heapq.heappush(heap, heap_entry(c, self._first_valid(k), k))
            else:
                del occ[k]

    # -- choosing -------------------------------------------------------------------------------

    def best(self) -> tuple[int, int, int] | None:
        """The winning pair as ``(count, first position, key)``, or None."""
        found = self.candidates(1)
        return found[0] if found else None

    def candidate(self, count: int, pos: int, key: int) -> Candidate:
        """The `Candidate` record of a pair: its first occurrence as (run, pretoken in the run)."""
        run = bisect_right(self.starts, pos) - 1
        return Candidate((key >> _SHIFT, key & _MASK), count, run, pos - self.starts[run])

    # -- merging --------------------------------------------------------------------------------

    def merge(self, key: int, new: int) -> int:
        """Join every live occurrence of `key` into superword `new`, left to right; return the
        weighted number of joins (how many tokens the corpus loses)."""
        a, b = key >> _SHIFT, key & _MASK
        ids, nxt, prv, wts = self.ids, self.nxt, self.prv, self.wts
        counts, occ = self.counts, self.occ
        positions = occ.pop(key)
        start = self.first.pop(key)
        new_keys: dict[int, None] = {}
        merged = 0
        for i in range(start, len(positions)):
            p = positions[i]
            if ids[p] != a:
                continue
            q = nxt[p]
            if q < 0 or ids[q] != b:
                continue
            w = wts[p]
            merged += w
            o = prv[p]
            if o >= 0 and ids[o] >= 0:
                counts[(ids[o] << _SHIFT) | a] -= w
                self._add((ids[o] << _SHIFT) | new, o, w, counts, occ, new_keys)
            r = nxt[q]
            if r >= 0:
                prv[r] = p
                if ids[r] >= 0:
                    counts[(b << _SHIFT) | ids[r]] -= w
                    self._add((new << _SHIFT) | ids[r], p, w, counts, occ, new_keys)
            ids[p] = new
            ids[q] = GONE
            nxt[p] = r
        counts.pop(key, None)
        self._push(new_keys)
        return merged
