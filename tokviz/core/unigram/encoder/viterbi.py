"""One segment's Unigram Viterbi in plain Python, written for speed: the loops `PieceLattice` runs.

Both walk the positions of a segment left to right and relax, from each start, the node at the
end of every piece that matches there (the one-character piece, or the unknown edge when there is
none, then longer pieces up to the longest one with the same first two characters). A candidate
replaces a node's score only when it is larger, so on a tie the earliest start (the longest last
piece) wins, as in sentencepiece and tokenizers; but a node's first candidate always takes it,
whatever its score (sums of scores like -1e308 reach -inf, and the libraries still set the node).
Nodes keep only the id of their best piece (its length gives the start back), so a relaxation is
a handful of list operations.

- `relative_path`: from score 0 in doubles, node by node (pieces ending at a node, earliest start
  first: the same comparisons in the same order) with each prefix's nodes kept for the next
  word that starts the same way, and the closest comparison's margin (its gap over the edges of
  both paths) that `PieceLattice` tests against rounding;
- `exact_path`: from an accumulated score, with sentencepiece's float32 additions and resets
  (or plain doubles for tokenizers).

What this leaves out: caching, cutting texts into segments, many segments at once (`batch`).
"""

from __future__ import annotations

import array
from collections.abc import Callable, Sequence
from math import inf

RESET = 100000.0  # sentencepiece's kScoreResetThreshold
_NEG = -inf
_UNSET = -2  # `exact_path`'s id of a node no candidate has reached yet (-1 is the unknown piece)


def backtrack(back: list[int], plen: Sequence[int], n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(ids, ends) of the best path ending at node `n`, from each node's best id (-1: unknown,
    one character; else ``plen[id]`` characters)."""
    ids = []
    ends = []
    t = n
    while t > 0:
        i = back[t]
        ids.append(i)
        ends.append(t)
        t -= plen[i] if i >= 0 else 1
    ids.reverse()
    ends.reverse()
    return tuple(ids), tuple(ends)


def relative_path(s: str, memo: dict, get: Callable, sc: Sequence[float], tails_get: Callable, unk: float,
                  plen: Sequence[int]) -> tuple:
    """Best path of `s` from 0 in doubles: ``(ids, ends, total, margin, wmax)`` (see
    `PieceLattice.relative`). The margin is the smallest, over every comparison the Viterbi
    makes, of the two candidates' gap / (edges on both paths + 1): no larger than best against
    runner-up at each node (a mediant of such terms), and exactly the decisions rounding could flip.

    Node by node (each node takes every piece ending there, earliest start first: the order in
    which the libraries' starts reach it), so a node depends on the text before it only, and its
    state ``(score, id, depth, margin so far, wmax so far)`` is kept in `memo` under that prefix:
    a new word shares most of its nodes with words met before."""
    n = len(s)
    best = [0.0] * (n + 1)
    depth = [0] * (n + 1)
    back = [0] * (n + 1)
    margin = inf
    wmax = 0.0
    t = 1
    memo_get = memo.get
    while t <= n:
        hit = memo_get(s[:t])
        if hit is None:
            break
        best[t], back[t], depth[t], margin, wmax = hit
        t += 1
    while t <= n:
        lo = t - tails_get(s[t - 2:t], 1) if t > 1 else 0
        if lo < 0:
            lo = 0
        cur = _NEG  # a first candidate's gap to it is inf: never the margin
        bi = bd = 0
        first = True
        last = t - 1
        for st in range(lo, t):
            i = get(s[st:t])
            if i is not None:
                c = best[st] + sc[i]
            elif st == last:  # no one-character piece: the unknown edge
                i = -1
                c = best[st] + unk
            else:
                continue
            d = depth[st] + 1
            if first or c > cur:
                first = False
                g = (c - cur) / (d + bd + 1)
                cur = c
                bi = i
                bd = d
            else:
                g = (cur - c) / (d + bd + 1)
            if g < margin:
                margin = g
        best[t] = cur
        back[t] = bi
        depth[t] = bd
        if cur > wmax:
            wmax = cur
        elif -cur > wmax:
            wmax = -cur
        memo[s[:t]] = (cur, bi, bd, margin, wmax)
        t += 1
    return (*backtrack(back, plen, n), best[n], margin, wmax)


def exact_path(s: str, x: float, get: Callable, sc: Sequence[float], heads_get: Callable, unk: float,
               plen: Sequence[int], f32: bool) -> tuple[tuple[int, ...], tuple[int, ...], float]:
    """Best path of `s` from the accumulated score `x` with the library's arithmetic: float32
    sums and resets beyond +-100000 when `f32` (sentencepiece), doubles otherwise:
    ``(ids, ends, score at the end)``."""
    n = len(s)
    r = array.array("f", [0.0])  # r[0] = v; r[0] is v rounded to float32
    best = [x] + [_NEG] * n
    back = [_UNSET] * (n + 1)
    frontier = 0
    for st in range(n):
        b = best[st]
        if f32 and (b < -RESET or b > RESET):
            for k in range(st + 1, frontier + 1):
                if back[k] != _UNSET:  # sentencepiece moves the nodes already set only
                    r[0] = best[k] - b
                    best[k] = r[0]
            best[st] = b = 0.0
        end = st + 1
        top = st + heads_get(s[st:st + 2], 1)
        if top > n:
            top = n
        i = get(s[st])
        if i is None:
            i = -1
            c = b + unk
        else:
            c = b + sc[i]
        while True:
            if f32:
                r[0] = c
                c = r[0]
            if c > best[end] or back[end] == _UNSET:
                best[end] = c
                back[end] = i
            if end > frontier:
                frontier = end
            end += 1
            while end <= top:
                i = get(s[st:end])
                if i is not None:
                    break
                end += 1
            else:
                break
            c = b + sc[i]
    return (*backtrack(back, plen, n), best[n])
