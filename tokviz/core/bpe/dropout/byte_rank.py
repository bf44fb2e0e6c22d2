"""BPE-dropout under tiktoken's rule: neighbours join when their joined bytes are a token, the
lowest rank first (`reference.dropout_parts_reference`'s loop on byte offsets). Every chunk starts
from single bytes: with dropout a chunk that is a token is not taken whole (tokenizers also skips
its whole-word shortcut when sampling)."""

from __future__ import annotations

import heapq
import random

from ..pair_merge import INF_RANK
from .rate import kept_entries

_SHIFT = 32
_MASK = (1 << _SHIFT) - 1


def dropout_parts(enc: dict[bytes, int], piece: bytes, p: float, rng: random.Random,
                  thr: int = INF_RANK) -> list[int]:
    """Boundaries of the parts of `piece` (``[0, 2, 3]``: ``piece[0:2]``, ``piece[2:3]``) after
    joining tokens of rank < `thr` with dropout `p`."""
    n = len(piece)
    get, big = enc.get, INF_RANK
    nxt = list(range(1, n + 1))  # the start of the next part; n at the end
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap = []
    for i in range(n - 1):
        r = get(piece[i : i + 2], big)
        if r < thr:
            heap.append(r << _SHIFT | i)
    heapq.heapify(heap)
    push = heapq.heappush
    for e in kept_entries(heap, p, rng):
        r, s = e >> _SHIFT, e & _MASK
        t = nxt[s]
        if not alive[s] or t >= n:
            continue
        u = nxt[t]
        if get(piece[s:u]) != r:
            continue  # stale: the part's bytes changed since it was queued
        alive[t] = False
        nxt[s] = u
        if u < n:
            prv[u] = s
        o = prv[s]
        if o >= 0:
            k = get(piece[o:u], big)
            if k < thr:
                push(heap, k << _SHIFT | o)
        if u < n:
            k = get(piece[s : nxt[u]], big)
            if k < thr:
                push(heap, k << _SHIFT | s)
    bounds = [0]
    s = 0
    while s < n:
        s = nxt[s]
        bounds.append(s)
    return bounds
