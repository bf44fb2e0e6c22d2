"""The queue BPE-like trainers pick their next merge from: pairs of adjacent ids in linked flat
arrays, each pair's weighted count and positions, and a heap with lazy invalidation.

A heap entry is one int ordered as the tuple ``(-count, first position, pair key)`` would be (ints
compare several times faster than tuples); `heap_entry` builds it. The heap is exact when every
occurrence of a pair is created in one step and afterwards its count only falls and its first
occurrence only moves later: a stale entry is then never better than the truth, so popping
refreshes it and pushes it back. Both `tokviz.core.bpe.trainer.BpeTrainer` (pairs of tokens in
chunks) and `tokviz.core.boundless.supertrainer.SuperTrainer` (pairs of whole pretokens in runs)
keep their state this way. What this leaves out: building and merging the pairs (each trainer's).
"""

from __future__ import annotations

import heapq
from array import array
from bisect import insort

import numpy as np

SHIFT = 32  # a pair key is (left << SHIFT) | right
MASK = (1 << SHIFT) - 1
S2 = 2 * SHIFT  # the pair key takes the low 64 bits of a heap entry
S1 = S2 + 48  # positions below 2**48
KMASK = (1 << S2) - 1
PMASK = (1 << 48) - 1
CMAX = 1 << 62


def heap_entry(count: int, position: int, key: int) -> int:
    """The heap entry of a pair: smaller for a higher count, then an earlier position.

    >>> heap_entry(5, 0, 7) < heap_entry(4, 0, 1) and heap_entry(5, 2, 9) < heap_entry(5, 3, 0)
    True
    """
    return ((CMAX - count) << S1) | (position << S2) | key


def linked(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sequences of `lengths` laid end to end: (each sequence's first position, each position's
    next position, its previous one), -1 where a sequence ends or starts.

    >>> [a.tolist() for a in linked(np.array([2, 0, 1]))]
    [[0, 2, 2], [1, -1, -1], [-1, 0, -1]]
    """
    starts, last, first = link_ends(lengths)
    n = int(lengths.sum())
    nxt = np.arange(1, n + 1, dtype=np.int64)
    prv = np.arange(-1, n - 1, dtype=np.int64)
    nxt[last] = -1
    prv[first] = -1
    return starts, nxt, prv


def link_ends(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What `linked` needs beside two ranges: (each sequence's first position, the last position
    of each non-empty sequence (no next), the first of each (no previous)). For a caller that
    builds the next and previous positions one at a time.

    >>> [a.tolist() for a in link_ends(np.array([2, 0, 1]))]
    [[0, 2, 2], [1, 2], [0, 2]]
    """
    ends = np.cumsum(lengths)
    starts = ends - lengths
    full = lengths > 0
    return starts, ends[full] - 1, starts[full]


def live_sites(ids: np.ndarray, nxt: np.ndarray, P: np.ndarray, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The positions `P` (ascending) where the pair (`a`, `b`) still stands and merges, and the
    positions of their `b`s: a vectorized merge's sites.

    >>> ids, nxt = np.array([7, 7, 7, 7, 7]), np.array([1, 2, 3, 4, -1])
    >>> [x.tolist() for x in live_sites(ids, nxt, np.array([0, 1, 2, 3]), 7, 7)]
    [[0, 2], [1, 3]]
    """
    P = P[ids[P] == a]
    Q = nxt[P]
    keep = Q >= 0
    P, Q = P[keep], Q[keep]
    keep = ids[Q] == b
    P, Q = P[keep], Q[keep]
    if a == b and len(P) > 1:
        # In a chain of overlapping sites (each starts where the previous ends), only every
        # other one merges, left to right: "a a a a" -> "aa aa".
        idx = np.arange(len(P))
        chained = np.zeros(len(P), dtype=bool)
        chained[1:] = P[1:] == Q[:-1]
        chain_start = np.maximum.accumulate(np.where(chained, 0, idx))
        keep = (idx - chain_start) % 2 == 0
        P, Q = P[keep], Q[keep]
    return P, Q


def key_groups(keys: np.ndarray, pos: np.ndarray, w: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Occurrences `keys[i]` at `pos[i]` (ascending) with weight `w[i]`, grouped by key: (the keys
    sorted, their positions in that order (ascending within a key), each group's start and end
    there, each group's summed weight).

    >>> [x.tolist() for x in key_groups(np.array([5, 3, 5]), np.array([0, 1, 2]), np.array([1, 2, 4]))]
    [[3, 5, 5], [1, 0, 2], [0, 1], [1, 3], [2, 5]]
    """
    order = stable_order(keys)
    sk, sp, sw = keys[order], pos[order], w[order]
    del order
    return (sk, sp, *sorted_groups(sk, sw))


def sorted_groups(sk: np.ndarray, sw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keys already grouped (`sk`, equal keys side by side) with their weights `sw`: each group's
    start and end and summed weight. Sums by `np.add.reduceat`, with no position-long cumulative
    sum beside the sorted arrays (two arrays fewer at the set-up's peak).

    >>> [x.tolist() for x in sorted_groups(np.array([3, 5, 5]), np.array([2, 1, 4]))]
    [[0, 1], [1, 3], [2, 5]]
    """
    if len(sk) == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    bounds = np.flatnonzero(sk[1:] != sk[:-1]) + 1
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [len(sk)]))
    return starts, ends, np.add.reduceat(sw, starts)


def stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of pair keys. Ids below 2**16 (a corpus's units before
    any merge, SuperBPE's stage 2) sort as 16-bit numbers, which numpy's stable sort sorts by radix:
    the two ids in one number below 256 (bytes), else one pass an id (the right ids, then the left).
    Otherwise one int64 a key: the pair renumbered densely, times the length, plus the index (unique,
    so any sort is stable; several times faster than a stable argsort of millions of keys).

    >>> stable_order(np.array([5 << 32 | 1, 2, 5 << 32 | 1, 2])).tolist()
    [1, 3, 0, 2]
    >>> stable_order(np.array([300 << 32 | 1, 2, 5 << 32 | 70000, 5 << 32 | 1])).tolist()
    [1, 3, 2, 0]
    """
    n = len(keys)
    if n < 2:
        return np.arange(n)
    left_max, right_max = int(keys.max()) >> SHIFT, int((keys & MASK).max())
    if left_max < 1 << 8 and right_max < 1 << 8:  # (the left id is the key's top: its maximum is the keys')
        small = (keys >> (SHIFT - 8)).astype(np.uint16)
        small |= (keys & 0xFF).astype(np.uint16)
        return np.argsort(small, kind="stable")
    if left_max < 1 << 16 and right_max < 1 << 16:
        order = np.argsort((keys & MASK).astype(np.uint16), kind="stable")
        return order[np.argsort((keys[order] >> SHIFT).astype(np.uint16), kind="stable")]
    packed, lo = keys >> SHIFT, keys & MASK  # in place from here: one array of the keys' size
    width = int(lo.max()) + 1
    if (int(packed.max()) + 1) * width * n >= 1 << 62:  # would overflow: the stable sort
        return np.argsort(keys, kind="stable")
    packed *= width
    packed += lo
    del lo
    packed *= n
    packed += np.arange(n)
    packed.sort()
    np.remainder(packed, n, out=packed)
    return packed


class PairQueue:
    """Counts, positions and the heap of a trainer's pairs; subclasses fill in the state.

    State: `ids` and `nxt` (``array('q')``: the id at each position, the next position or -1),
    `counts` (key -> weighted count), `occ` (key -> its positions, ascending; or, until first
    read, an int ``no << 64 | start << SHIFT | end``: a range of ``_held[no]``, a buffer of many
    pairs' positions, so that registering many pairs at once makes no object a pair),
    `first` (key -> index in `occ[key]` of the first possibly live position), `heap`,
    `min_count`, and `_hf` (True: the pair itself breaks ties, so heap positions are 0 and need
    no refreshing).
    """

    ids: array
    nxt: array
    counts: dict[int, int]
    occ: dict[int, array | memoryview | int]
    _held: list[memoryview]
    first: dict[int, int]
    heap: list[int]
    min_count: int
    _hf: bool = False
    _out_of_heap: tuple[int, ...] = ()  # entries `next_best` keeps out of the heap

    def _hold(self, buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[int]:
        """Keep `buffer` (int64 positions) and return the ranges ``[starts[i], ends[i])`` of it as
        `occ` values (positions fewer than 2**32 a buffer: `check_memory` allows far fewer)."""
        no = len(self._held)
        self._held.append(memoryview(np.ascontiguousarray(buffer, dtype=np.int64)))
        ranges = ((starts << SHIFT) | ends).tolist()
        if no == 0:
            return ranges
        high = no << 64
        return [high | r for r in ranges]

    def _held_range(self, packed: int) -> memoryview:
        """The positions a held range of `occ` stands for (see `_hold`)."""
        return self._held[packed >> 64][(packed >> SHIFT) & MASK: packed & MASK]

    def _first_valid(self, key: int) -> int:
        """Position of the first live occurrence of `key` (advancing its lazy pointer)."""
        a, b = key >> SHIFT, key & MASK
        ids, nxt = self.ids, self.nxt
        lst = self.occ[key]
        if type(lst) is int:  # still a range of a held buffer: a view of its own from its first read
            lst = self.occ[key] = self._held_range(lst)
        i = self.first[key]
        while True:
            p = lst[i]
            if ids[p] == a:
                q = nxt[p]
                if q >= 0 and ids[q] == b:
                    self.first[key] = i
                    return p
            i += 1

    def _pop_valid(self) -> int | None:
        """Pop the best live heap entry, refreshing stale ones on the way."""
        heap, counts = self.heap, self.counts
        while heap:
            e = heapq.heappop(heap)
            key, negc = e & KMASK, (e >> S1) - CMAX
            c = counts.get(key, 0)
            if c < self.min_count:  # can never win again: forget its positions
                if key in self.occ:
                    del self.occ[key], self.first[key]
                if c <= 0:
                    counts.pop(key, None)
                continue
            if c != -negc:
                p = 0 if self._hf else self._first_valid(key)
                heapq.heappush(heap, heap_entry(c, p, key))
                continue
            return e  # an unchanged count means an unchanged first position (see `next_best`)
        return None

    def candidates(self, n: int) -> list[tuple[int, int, int]]:
        """The `n` best live pairs with at least `min_count` occurrences, as (count,
        first_position, key), best first; the state is left as it was."""
        return [(CMAX - (e >> S1), (e >> S2) & PMASK, e & KMASK) for e in self.next_best(n)]

    def next_best(self, n: int) -> list[int]:
        """The heap entries of the `n` best live pairs, best first, kept out of the heap (`_out_of_heap`)
        for the next call: a step's runners-up are mostly the last step's, and then need no pop,
        no push and no position check. A held entry is exact while its pair's count has not
        changed (an occurrence only ever goes with a fall of the count by its chunk's weight, so
        an unchanged count means an unchanged first position); the others go back to the heap, to
        be refreshed when popped. The heap is popped only while its top (never worse than the
        truth) could beat the n-th best. A caller that merges the first pair drops its entry
        from `_out_of_heap`."""
        heap, counts = self.heap, self.counts
        best = []
        for e in self._out_of_heap:
            if counts.get(e & KMASK, 0) == CMAX - (e >> S1):
                best.append(e)
            else:
                heapq.heappush(heap, e)
        while len(best) > n:
            heapq.heappush(heap, best.pop())
        while heap and (len(best) < n or heap[0] < best[-1]):
            found = self._pop_valid()
            if found is None:
                break
            insort(best, found)
            if len(best) > n:
                heapq.heappush(heap, best.pop())
        self._out_of_heap = tuple(best)
        return best
