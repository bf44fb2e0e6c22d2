"""BPE-dropout over a merge list (`PairMerges`): the loop of `reference` on ids, with parts linked
to their live neighbours and queue entries packed as ``rank << 32 | position`` (the order of the
tuple (rank, position)), as `PairMerges`' own heap loop. Kept apart from that loop so the
deterministic encode pays nothing for dropout."""

from __future__ import annotations

import heapq
import random

from ..pair_merge import INF_RANK, PairMerges
from .rate import kept_entries

_SHIFT = 32
_MASK = (1 << _SHIFT) - 1


def dropout_merge(pairs: PairMerges, ids: list[int], p: float, rng: random.Random, limit: int = INF_RANK,
                  firsts: list[int] | None = None) -> list[int]:
    """The ids left after joining pairs of rank < `limit` with dropout `p` (`reference`'s rule).
    `firsts`: filled in place with the position of each part's first symbol (for spans)."""
    n = len(ids)
    ids = list(ids)
    rank_get, new_of, big = pairs.rank_of.get, pairs.new_ids, INF_RANK
    nxt = list(range(1, n + 1))  # n: no next part (the last part, or one joined away)
    prv = list(range(-1, n - 1))
    heap = []
    for i in range(n - 1):
        r = rank_get((ids[i] << _SHIFT) | ids[i + 1], big)
        if r < limit:
            heap.append(r << _SHIFT | i)
    heapq.heapify(heap)
    push = heapq.heappush
    for e in kept_entries(heap, p, rng):
        r, i = e >> _SHIFT, e & _MASK
        j = nxt[i]
        if j >= n or rank_get((ids[i] << _SHIFT) | ids[j]) != r:
            continue  # stale: i was joined away (or is last), or its pair changed
        new = ids[i] = new_of[r]
        after = nxt[j]
        nxt[j] = n
        nxt[i] = after
        if after < n:
            prv[after] = i
        o = prv[i]
        if o >= 0:
            k = rank_get((ids[o] << _SHIFT) | new, big)
            if k < limit:
                push(heap, k << _SHIFT | o)
        if after < n:
            k = rank_get((new << _SHIFT) | ids[after], big)
            if k < limit:
                push(heap, k << _SHIFT | i)
    live = []
    i = 0
    while i < n:
        live.append(i)
        i = nxt[i]
    if firsts is not None:
        firsts[:] = live
    return [ids[i] for i in live]
