"""The Viterbi of `PieceLattice` written plainly (the engine's code before its fast loops): a
slow oracle for `tokviz.core.unigram.encoder.viterbi`. ``self`` is a `PieceLattice`."""

from __future__ import annotations

import math

from tokviz.core.unigram.encoder.lattice import F32_SP, RESET, f32


def relative_oracle(self, s: str) -> tuple:
    """Best path of `s` from score 0 in doubles: ``(ids, ends, total, margin, wmax)`` with the
    pieces' ids (-1: unknown) and end positions, the path's score, the closest decision's
    margin (min over nodes of (best - runner-up) / (edges on both paths + 1)) and the largest
    |score| met. A decision with a margin above ``u * (|x| + wmax)`` cannot be changed by
    float rounding (relative error u per addition) when the segment starts at score x."""
    n = len(s)
    ids, sc, longest = self.ids, self.score_of, max(map(len, self.ids), default=1)
    unk = self.unk_score
    best: list = [0.0] + [None] * n
    second: list = [None] * (n + 1)
    depth = [0] * (n + 1)
    depth2 = [0] * (n + 1)
    back_s = [0] * (n + 1)
    back_i = [0] * (n + 1)
    for st in range(n):
        b = best[st]
        d = depth[st] + 1
        i = ids.get(s[st])
        if i is None:
            i, c = -1, b + unk
        else:
            c = b + sc[i]
        end = st + 1
        top = min(st + longest, n)
        while True:
            cur = best[end]
            if cur is None:
                best[end] = c
                depth[end] = d
                back_s[end] = st
                back_i[end] = i
            elif c > cur:
                second[end] = cur
                depth2[end] = depth[end]
                best[end] = c
                depth[end] = d
                back_s[end] = st
                back_i[end] = i
            else:
                sec = second[end]
                if sec is None or c > sec:
                    second[end] = c
                    depth2[end] = d
            while True:
                end += 1
                if end > top:
                    break
                i = ids.get(s[st:end])
                if i is not None:
                    c = b + sc[i]
                    break
            if end > top:
                break
    margin = math.inf
    for t in range(1, n + 1):
        sec = second[t]
        if sec is not None:
            g = (best[t] - sec) / (depth[t] + depth2[t] + 1)
            if g < margin:
                margin = g
    wmax = max(map(abs, best))
    return (*backtrack_oracle(back_s, back_i, n), best[n], margin, wmax)

def exact_oracle(self, s: str, x: float) -> tuple[tuple[int, ...], tuple[int, ...], float]:
    """Best path of `s` from the accumulated score `x` with the library's own arithmetic:
    ``(ids, ends, score at the end)``."""
    n = len(s)
    ids, sc, longest = self.ids, self.score_of, max(map(len, self.ids), default=1)
    unk = self.unk_score
    sp = self.mode == F32_SP
    best: list = [None] * (n + 1)
    best[0] = x
    back_s = [0] * (n + 1)
    back_i = [0] * (n + 1)
    frontier = 0
    for st in range(n):
        b = best[st]
        if sp and abs(b) > RESET:  # sentencepiece's reset: every node reached so far minus b
            best[st + 1 : frontier + 1] = [None if v is None else f32(v - b) for v in best[st + 1 : frontier + 1]]
            best[st] = b = 0.0
        edges = []
        i = ids.get(s[st])
        if i is not None:
            edges.append((st + 1, i, sc[i]))
        for end in range(st + 2, min(st + longest, n) + 1):
            i = ids.get(s[st:end])
            if i is not None:
                edges.append((end, i, sc[i]))
        if not edges or edges[0][0] != st + 1:
            edges.append((st + 1, -1, unk))  # the unknown edge comes after the pieces
        for end, i, score in edges:
            if end > frontier:
                frontier = end
            c = b + score
            if sp:
                c = f32(c)
            cur = best[end]
            if cur is None or c > cur:
                best[end] = c
                back_s[end] = st
                back_i[end] = i
    return (*backtrack_oracle(back_s, back_i, n), best[n])


def backtrack_oracle(back_s: list[int], back_i: list[int], n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(ids, ends) of the best path ending at node n, from the back-pointers."""
    ids = []
    ends = []
    t = n
    while t > 0:
        ids.append(back_i[t])
        ends.append(t)
        t = back_s[t]
    ids.reverse()
    ends.reverse()
    return tuple(ids), tuple(ends)
