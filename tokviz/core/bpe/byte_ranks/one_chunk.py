"""tiktoken's merge loop on one chunk: `bpe_parts` (a list of ranks, for short chunks) and
`bpe_parts_heap` (a heap, for long ones): the oracle the batch loop (`merge_rounds`) must agree with."""

from __future__ import annotations

import heapq

from ..pair_merge import INF_RANK

LONG_PIECE = 96  # pieces longer than this (bytes) use the heap loop
_SHIFT = 32  # a heap entry is rank << _SHIFT | start
_MASK = (1 << _SHIFT) - 1


def bpe_parts(enc: dict[bytes, int], piece: bytes, thr: int) -> list[int]:
    """Boundaries of the parts tiktoken's merge loop leaves in `piece`, joining only tokens of
    rank < `thr`. Leftmost of equal ranks first.

    ``[0, 2, 3]`` means parts ``piece[0:2]`` and ``piece[2:3]``.
    """
    n = len(piece)
    if n > LONG_PIECE:
        return bpe_parts_heap(enc, piece, thr)
    big = INF_RANK
    bounds = list(range(n + 1))
    ranks = []  # ranks[j]: rank of joining part j and part j + 1
    for i in range(n - 1):
        r = enc.get(piece[i : i + 2], big)
        ranks.append(r if r < thr else big)
    while ranks:
        m = min(ranks)
        if m == big:
            break
        i = ranks.index(m)
        del bounds[i + 1]
        del ranks[i]
        if i < len(ranks):
            r = enc.get(piece[bounds[i] : bounds[i + 2]], big)
            ranks[i] = r if r < thr else big
        if i:
            r = enc.get(piece[bounds[i - 1] : bounds[i + 1]], big)
            ranks[i - 1] = r if r < thr else big
    return bounds


def bpe_parts_heap(enc: dict[bytes, int], piece: bytes, thr: int) -> list[int]:
    """`bpe_parts` for long pieces: a heap of ``rank << 32 | start`` with lazy invalidation,
    O(n log n). One int per entry orders as the tuple (rank, start) would (starts stay below
    2**32) and compares several times faster than a tuple."""
    n = len(piece)
    big = INF_RANK
    get = enc.get
    nxt = list(range(1, n + 1))  # start of the next part, n at the end
    prv = list(range(-1, n - 1))
    cur = [big] * n  # rank of joining the part starting here with the next one; -1: gone
    heap = []
    for i in range(n - 1):
        r = get(piece[i : i + 2], big)
        if r < thr:
            cur[i] = r
            heap.append(r << _SHIFT | i)
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        e = pop(heap)
        s, r = e & _MASK, e >> _SHIFT
        if cur[s] != r:
            continue  # stale entry
        t = nxt[s]
        u = nxt[t]
        nxt[s] = u
        cur[t] = -1
        cur[s] = big
        if u < n:
            prv[u] = s
            r = get(piece[s : nxt[u]], big)
            if r < thr:
                cur[s] = r
                push(heap, r << _SHIFT | s)
        p = prv[s]
        if p >= 0:
            r = get(piece[p:u], big)
            cur[p] = big
            if r < thr:
                cur[p] = r
                push(heap, r << _SHIFT | p)
    bounds = [0]
    s = 0
    while s < n:
        s = nxt[s]
        bounds.append(s)
    return bounds
