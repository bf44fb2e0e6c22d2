"""Pairs a BPE trainer has seen but not yet stored: kept in bulk until they could be among the best.

A pair's count is fixed when its newer token is made and only falls after that, so its count then
is an upper bound for good. A pair whose bound is below the n-th best count of the queue cannot be
among the n best (nor win), and while the best counts stay above it, it needs no dict entry, no
position list and no heap entry. SuperBPE's stage 2 makes about 420,000 new pairs on gutenberg30
and starts with 900,000, of which a few thousand ever reach the counts that win; storing each one
was a third of its merge time.

`DeferredPairs` holds such pairs a batch at a time in numpy arrays (keys, bounds and their ranges
of a buffer of positions), highest bound first, and hands back those whose bound reaches a
given count; the trainer then counts their live sites (`live_counts`) and stores them as it would
have at the start. What this leaves out: when to ask (`tokviz.core.superbpe.compiled`).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .pair_queue import MASK, SHIFT


@dataclass
class _Batch:
    """Pairs of one registration, highest bound first; `next` is the first not handed back yet."""

    keys: np.ndarray
    bounds: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    buffer: np.ndarray
    stamp: int
    next: int = 0


class Taken(NamedTuple):
    """Pairs handed back: their keys, the ranges of `buffer` holding their positions, their bounds,
    and the stamp they were deferred with."""

    keys: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    buffer: np.ndarray
    bounds: np.ndarray
    stamp: int


class DeferredPairs:
    """Batches of pairs not stored yet, asked for by bound.

    >>> d = DeferredPairs()
    >>> d.add(np.array([7, 8, 9]), np.array([2, 9, 5]), np.arange(6), np.array([0, 2, 4]), np.array([2, 4, 6]))
    >>> d.top()
    9
    >>> [(t.keys.tolist(), t.starts.tolist(), t.ends.tolist()) for t in d.take(5)]
    [([8, 9], [2, 4], [4, 6])]
    >>> d.top(), len(d)
    (2, 1)
    """

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, _Batch]] = []  # (-the batch's highest bound left, seq, batch)
        self._seq = 0
        self._n = 0

    def __len__(self) -> int:
        """How many pairs are deferred."""
        return self._n

    def add(self, keys: np.ndarray, bounds: np.ndarray, buffer: np.ndarray, starts: np.ndarray,
            ends: np.ndarray, stamp: int = 0, *, ordered: bool = False) -> None:
        """Defer the pairs `keys` with count bounds `bounds`, whose positions (ascending) are
        ``buffer[starts[i]:ends[i]]`` (the buffer is kept); `stamp` is handed back with them (a
        trainer's step: when nothing changed since, a bound is the count). `ordered`: the pairs
        come highest bound first already."""
        if len(keys) == 0:
            return
        if ordered:
            batch = _Batch(keys, bounds, starts, ends, buffer, stamp)
        else:
            order = np.argsort(-bounds, kind="stable")
            batch = _Batch(keys[order], bounds[order], starts[order], ends[order], buffer, stamp)
        self._push(batch)
        self._n += len(keys)

    def _push(self, batch: _Batch) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (-int(batch.bounds[batch.next]), self._seq, batch))

    def top(self) -> int:
        """The highest bound deferred (0 when none is)."""
        return -self._heap[0][0] if self._heap else 0

    def pending(self):
        """Every deferred pair, left deferred: a `Taken` a batch."""
        for _, _, batch in self._heap:
            lo = batch.next
            yield Taken(batch.keys[lo:], batch.starts[lo:], batch.ends[lo:], batch.buffer, batch.bounds[lo:],
                        batch.stamp)

    def take(self, bound: int, at_least: int = 0):
        """Hand back every deferred pair whose bound is `bound` or more, and, if that makes fewer
        than `at_least`, the highest others until it does: a `Taken` a batch."""
        taken = 0
        while self._heap and (-self._heap[0][0] >= bound or taken < at_least):
            _, _, batch = heapq.heappop(self._heap)
            lo = batch.next
            # bounds are descending: the pairs at or above `bound`, at least one
            hi = lo + max(1, int(np.searchsorted(-batch.bounds[lo:], -bound, side="right")))
            if taken < at_least:
                hi = max(hi, min(len(batch.keys), lo + at_least - taken))
            batch.next = hi
            taken += hi - lo
            self._n -= hi - lo
            yield Taken(batch.keys[lo:hi], batch.starts[lo:hi], batch.ends[lo:hi], batch.buffer,
                        batch.bounds[lo:hi], batch.stamp)
            if hi < len(batch.keys):
                self._push(batch)


def gathered(batches) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The batches `take` hands back as one: (keys, starts, ends, buffer), the pairs' positions
    copied side by side into a buffer of their own (so that they are counted in one pass).

    >>> one = np.array([1])
    >>> [x.tolist() for x in gathered([Taken(np.array([5]), one, np.array([3]), np.arange(10, 15), one, 0),
    ...                                Taken(np.array([6, 7]), np.array([0, 4]), np.array([1, 5]), np.arange(20, 25),
    ...                                      np.array([1, 1]), 0)])]
    [[5, 6, 7], [0, 2, 3], [2, 3, 4], [11, 12, 20, 24]]
    """
    keys, lengths, positions = [], [], []
    for k, starts, ends, buffer, _, _ in batches:
        lens = ends - starts
        offsets = np.cumsum(lens) - lens
        keys.append(k)
        lengths.append(lens)
        positions.append(buffer[np.repeat(starts - offsets, lens) + np.arange(int(lens.sum()))])
    if not keys:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, empty
    lens = np.concatenate(lengths)
    ends = np.cumsum(lens)
    return np.concatenate(keys), ends - lens, ends, np.concatenate(positions)


def live_counts(ids: np.ndarray, nxt: np.ndarray, wts: np.ndarray, keys: np.ndarray, starts: np.ndarray,
                ends: np.ndarray, buffer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each pair ``keys[i]`` with positions ``buffer[starts[i]:ends[i]]`` (each non-empty):
    its weighted count of live sites now, and the index in its range of its first live site (its
    range's length when none is left). A site at p is live while p holds the left token and the
    next position the right one (counted naively: ``a a a`` holds ``(a, a)`` twice).

    >>> ids, nxt, wts = np.array([1, 2, 1, 2, -1]), np.array([1, 2, 3, -1, -1]), np.array([1, 1, 1, 1, 1])
    >>> [x.tolist() for x in live_counts(ids, nxt, wts, np.array([1 << 32 | 2, 2 << 32 | 1]), np.array([0, 3]),
    ...                                  np.array([3, 4]), np.array([0, 2, 3, 1]))]
    [[2, 1], [0, 0]]
    """
    lens = ends - starts
    offsets = np.concatenate(([0], np.cumsum(lens)[:-1]))
    total = int(lens.sum())
    owner = np.repeat(np.arange(len(keys)), lens)
    at = np.repeat(starts - offsets, lens) + np.arange(total)
    P = buffer[at]
    left, right = keys >> SHIFT, keys & MASK
    Q = nxt[P]
    live = (ids[P] == left[owner]) & (Q >= 0)
    live[live] = ids[Q[live]] == right[owner[live]]
    counts = np.add.reduceat(np.where(live, wts[P], 0), offsets)
    hits = np.flatnonzero(live)
    first = np.searchsorted(hits, offsets)  # the first live site at or after each range's start
    first_at = np.where(first < len(hits), hits[np.minimum(first, len(hits) - 1)] if len(hits) else 0, total)
    first_index = np.minimum(first_at, offsets + lens) - offsets
    return counts, first_index
