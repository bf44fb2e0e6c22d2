"""Merging a pair inside one word: the new word, and the change of every pair count it makes.

The WordPiece trainer calls these for every word holding the merged pair; `merge_one` writes out
the usual case (one site) and `merge_many` is the general rule it is tested against. Pairs are
keys ``a << SHIFT | b`` (`tokviz.core.wordpiece.corpus`). What this leaves out: which words hold
the pair and the counts themselves (`tokviz.core.wordpiece.trainer`).

    >>> k = (1 << SHIFT) | 2  # merge (1, 2) into 9 in 0 1 2 3
    >>> out, delta = merge_one([0, 1, 2, 3], 1, k, 9)
    >>> out, sorted((x >> SHIFT, x & MASK, d) for x, d in delta.items())
    ([0, 9, 3], [(0, 1, -1), (0, 9, 1), (1, 2, -1), (2, 3, -1), (9, 3, 1)])
"""

from __future__ import annotations

from .corpus import SHIFT

MASK = (1 << SHIFT) - 1


def merge_one(seq: list[int], i: int, k: int, new: int) -> tuple[list[int], dict[int, int]]:
    """`seq` with the pair `k` at `i` merged into `new`, and the change of each pair's count."""
    out = seq[:i]
    out.append(new)
    out += seq[i + 2:]
    delta = {k: -1}
    if i:
        x = seq[i - 1] << SHIFT
        left = x | (k >> SHIFT)
        delta[left] = delta.get(left, 0) - 1
        delta[x | new] = 1
    if i + 2 < len(seq):
        y = seq[i + 2]
        right = ((k & MASK) << SHIFT) | y
        delta[right] = delta.get(right, 0) - 1
        delta[(new << SHIFT) | y] = 1
    return out, delta


def merge_many(seq: list[int], sites: list[int], new: int) -> tuple[list[int], dict[int, int]]:
    """`seq` with the pairs at `sites` (ascending, not overlapping) merged into `new`, and the
    change of each pair's count. Only pairs touching a site change: old pairs i-1, i, i+1 of
    each site go, new pairs j-1, j of each new token j come (each index once)."""
    out: list[int] = []
    prev = 0
    for i in sites:
        out += seq[prev:i]
        out.append(new)
        prev = i + 2
    out += seq[prev:]
    n = len(seq)
    delta: dict[int, int] = {}
    last = -1
    for i in sites:
        for p in (i - 1, i, i + 1):
            if p > last and 0 <= p < n - 1:
                x = (seq[p] << SHIFT) | seq[p + 1]
                delta[x] = delta.get(x, 0) - 1
                last = p
    last = -1
    m = len(out)
    for j, i in enumerate(sites):
        j = i - j  # position of the new token in `out`
        for q in (j - 1, j):
            if q > last and 0 <= q < m - 1:
                x = (out[q] << SHIFT) | out[q + 1]
                delta[x] = delta.get(x, 0) + 1
                last = q
    return out, delta
