"""Many segments' Viterbi at once, in numpy: what `PieceLattice.relative` and `exact` compute for one.

Encoding a large text meets tens of thousands of distinct words; a Python loop per word and
position is most of the time. Here every word is handled together:

1. edges (`Edges`): each substring ``s[start:end]`` that could be a piece (no longer than the
   longest piece with the same first two characters) is hashed twice and looked up in the pieces'
   table (`piece_hashes`); a match must agree on both hashes. A position with no one-character
   piece gets the unknown edge. Edges are ordered by the place in their segment where they start;
2. relaxation, start place by start place across all segments: the edges leaving place t of
   every segment end at distinct nodes, so each place is one vectorised step, and every node's
   candidates come earliest start first, so a strict ``>`` keeps the libraries' ties.
   `batch_relative` runs from score 0 in doubles, keeping per node the runner-up and the deepest
   candidate path for the margin `PieceLattice` needs; `batch_exact` from each segment's own
   accumulated score with the library's arithmetic (float32 for sentencepiece);
3. back-pointers followed for all segments together.

`batch_relative` gives the tuples ``(ids, ends, total, margin, wmax)`` of `relative`, except that
the margin is bounded with the deepest candidate's edge count (never larger than the exact
per-node margin, so never less cautious). `GatheredChain` adds the float32 scores of a text's
cached paths for `PieceLattice`'s scan. What this leaves out: resets inside a segment (`viterbi`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

from .piece_hashes import B1, B2, PieceHashes, code_points
from .viterbi import RESET

MAX_SEGMENT = 512  # longer segments take the per-word path (positions are processed in lockstep)


class Edges:
    """The lattice of every segment in `segs` (each at most `MAX_SEGMENT` long) as flat arrays:
    node ``node_off[k] + p`` is place p of segment k; edge e runs from ``src[e]`` to ``dst[e]``
    with piece row ``row[e]`` of the table (-1: unknown), ``score[e]`` and ``length[e]``
    characters; the edges starting at place t are ``cuts[t]:cuts[t + 1]``."""

    def __init__(self, table: PieceHashes, segs: list[str], unk_score: float) -> None:
        cps, off, lens = code_points(segs)
        n_seg = len(segs)
        seg_of = np.repeat(np.arange(n_seg), lens)
        pos = np.arange(len(cps), dtype=np.int64)
        local = pos - off[seg_of]
        remain = lens[seg_of] - local
        # longest candidate per position: 1, or the longest piece with these two first characters
        lmax = np.ones(len(cps), dtype=np.int64)
        two = np.flatnonzero(remain >= 2)
        if len(two) and len(table.heads):
            k = table.head_index.lookup(cps[two] * B1 + cps[two + 1])
            hit = k >= 0
            lmax[two[hit]] = np.minimum(table.head_len[k[hit]], remain[two[hit]])
        small = len(lens) and lens.max() < 32768
        node = pos + seg_of  # one node per character plus one per segment
        parts_pos, parts_row, parts_len = [], [], []
        # the positions still extending, with their hashes so far and longest length
        active, h1, h2, lm = pos, np.zeros(len(cps), dtype=np.uint64), np.zeros(len(cps), dtype=np.uint64), lmax
        L = 1
        while len(active):
            c = cps[active + (L - 1)]
            h1 = h1 * B1 + c
            h2 = h2 * B2 + c
            row = table.find(h1, h2)
            if L == 1:
                parts_pos.append(active)  # every position has an edge of one: its piece or the unknown one
                parts_row.append(row)
            else:
                m = row >= 0
                parts_pos.append(active[m])
                parts_row.append(row[m])
            parts_len.append(np.full(len(parts_pos[-1]), L, dtype=np.int64))
            L += 1
            go = lm >= L
            active, h1, h2, lm = active[go], h1[go], h2[go], lm[go]
        e_pos = np.concatenate(parts_pos) if parts_pos else pos
        e_row = np.concatenate(parts_row) if parts_row else pos
        e_len = np.concatenate(parts_len) if parts_len else pos
        e_loc = local[e_pos]
        order = np.argsort(e_loc.astype(np.int16) if small else e_loc, kind="stable")
        e_pos, e_row, e_len = e_pos[order], e_row[order], e_len[order]
        self.n_places = int(lens.max(initial=0)) + 1
        self.cuts = np.searchsorted(e_loc[order], np.arange(self.n_places + 1)).tolist()
        self.src = node[e_pos]
        self.dst = self.src + e_len
        self.row, self.length = e_row, e_len
        self.score = np.where(e_row >= 0, table.scores[e_row], unk_score)
        self.lens = lens
        self.node_off = off + np.arange(n_seg)
        self.n_nodes = int(lens.sum() + n_seg)

    def paths(self, table: PieceHashes, back_row: np.ndarray, back_len: np.ndarray) -> tuple[list, list]:
        """The paths the back-pointers give, as flat columns ``(ids, ends, cuts)``: segment k's
        pieces are ``cuts[k]:cuts[k + 1]`` (ids -1: unknown; ends in characters of the segment).
        The nodes on the paths are marked, so they come out in order."""
        node_off, lens = self.node_off, self.lens
        on_path = np.zeros(self.n_nodes, dtype=bool)
        first = node_off[lens > 0]
        cur = first + lens[lens > 0]
        while len(cur):
            on_path[cur] = True
            cur = cur - back_len[cur]
            more = cur > first
            cur, first = cur[more], first[more]
        nodes = np.flatnonzero(on_path)
        row = back_row[nodes]
        ids = np.where(row >= 0, table.ids[row], -1)
        cuts = np.append(np.searchsorted(nodes, node_off), len(nodes))
        ends = nodes - np.repeat(node_off, np.diff(cuts))
        return ids, ends, cuts


def split_paths(ids: np.ndarray, ends: np.ndarray, cuts: np.ndarray) -> tuple[list, list]:
    """Flat path columns (`Edges.paths`) as one (ids, ends) pair of tuples per segment."""
    c = cuts.tolist()
    spans = list(map(slice, c, c[1:]))
    # slices of one tuple are tuples: no list per segment, no Python loop
    return list(map(tuple(ids.tolist()).__getitem__, spans)), list(map(tuple(ends.tolist()).__getitem__, spans))


def batch_relative(table: PieceHashes, segs: list[str], unk_score: float) -> list[tuple]:
    """`PieceLattice.relative` of every segment in `segs` (each at most `MAX_SEGMENT` long)."""
    return relative_tuples(relative_columns(table, segs, unk_score))


def relative_tuples(cols: tuple) -> list[tuple]:
    """`relative_columns` as `relative`'s tuple per segment."""
    ids, ends, cuts, totals, margins, wmax = cols
    out = list(zip(*split_paths(ids, ends, cuts), totals.tolist(), margins.tolist(), wmax.tolist()))
    for k in np.flatnonzero(np.diff(cuts) == 0).tolist():
        out[k] = ((), (), 0.0, np.inf, 0.0)  # an empty segment
    return out


def relative_columns(table: PieceHashes, segs: list[str], unk_score: float) -> tuple:
    """`batch_relative` as arrays (cheap to send from a forked child): the path columns of
    `Edges.paths`, then each segment's total, margin and wmax."""
    g = Edges(table, segs, unk_score)
    n_nodes, node_off, lens = g.n_nodes, g.node_off, g.lens
    best = np.full(n_nodes, -np.inf)
    best[node_off] = 0.0
    second = np.full(n_nodes, -np.inf)
    depth = np.zeros(n_nodes, dtype=np.int64)
    dmax = np.zeros(n_nodes, dtype=np.int64)
    back_row = np.full(n_nodes, -1, dtype=np.int64)  # the best piece's row (-1: unknown) and length
    back_len = np.ones(n_nodes, dtype=np.int64)
    cuts, src, dst, score, row, length = g.cuts, g.src, g.dst, g.score, g.row, g.length
    for t in range(g.n_places):
        a, b = cuts[t], cuts[t + 1]
        if a == b:
            continue
        s_, d = src[a:b], dst[a:b]
        cand = best[s_] + score[a:b]
        cdep = depth[s_] + 1
        cur = best[d]
        win = cand > cur  # a node's first candidate always wins (cur is -inf)
        second[d] = np.where(win, cur, np.maximum(second[d], cand))
        dmax[d] = np.maximum(dmax[d], cdep)
        w = d[win]
        best[w] = cand[win]
        depth[w] = cdep[win]
        back_row[w] = row[a:b][win]
        back_len[w] = length[a:b][win]
    if not len(segs):
        empty = np.zeros(0)
        return empty.astype(np.int64), empty.astype(np.int64), np.zeros(1, dtype=np.int64), empty, empty, empty
    with np.errstate(invalid="ignore"):
        margin_node = np.where(np.isfinite(second), (best - second) / (depth + dmax + 1), np.inf)
    margins = np.minimum.reduceat(margin_node, node_off)  # a segment's nodes are contiguous
    wmax = np.maximum.reduceat(np.abs(best), node_off)
    totals = best[node_off + lens]
    return (*g.paths(table, back_row, back_len), totals, margins, wmax)


def batch_exact(table: PieceHashes, segs: list[str], unk_score: float, starts: np.ndarray,
                f32: bool) -> list[tuple | None]:
    """`PieceLattice.exact` of every segment in `segs` from its score in `starts`: ``(ids, ends,
    score at the end)`` with the library's arithmetic (float32 sums when `f32`, else doubles), or
    None for a segment where sentencepiece would reset the score inside it (beyond +-100000 at a
    place a piece starts from: the per-segment path handles those)."""
    if not len(segs):
        return []
    g = Edges(table, segs, unk_score)
    dtype = np.float32 if f32 else np.float64
    n_nodes, node_off, lens = g.n_nodes, g.node_off, g.lens
    best = np.full(n_nodes, -np.inf, dtype=dtype)
    best[node_off] = np.asarray(starts, dtype=dtype)
    back_row = np.full(n_nodes, -1, dtype=np.int64)
    back_len = np.ones(n_nodes, dtype=np.int64)
    cuts, src, dst, row, length = g.cuts, g.src, g.dst, g.row, g.length
    score = g.score.astype(dtype)
    for t in range(g.n_places):
        a, b = cuts[t], cuts[t + 1]
        if a == b:
            continue
        d = dst[a:b]
        cand = best[src[a:b]] + score[a:b]
        win = cand > best[d]
        w = d[win]
        best[w] = cand[win]
        back_row[w] = row[a:b][win]
        back_len[w] = length[a:b][win]
    ids, ends = split_paths(*g.paths(table, back_row, back_len))
    totals = best[node_off + lens].tolist()
    out: list[tuple | None] = list(zip(ids, ends, totals))
    if f32:
        # a reset happens where a piece starts (every place but the last) beyond +-100000
        starts_at = np.ones(n_nodes, dtype=bool)
        starts_at[node_off + lens] = False
        over = starts_at & ((best < -RESET) | (best > RESET))
        seg_of_node = np.repeat(np.arange(len(segs)), lens + 1)
        for k in set(seg_of_node[over].tolist()):
            out[k] = None
    return out


class GatheredChain:
    """`PieceLattice.chain_scores` over runs of a text's segments as they were cached: the scores of
    every piece in order as float32 (`scores32`: by id, the unknown score last), gathered once,
    so a run is one float32 accumulation."""

    def __init__(self, scores32: np.ndarray, paths: Sequence[tuple[int, ...]]) -> None:
        flat = np.fromiter(chain.from_iterable(paths), dtype=np.int64)
        self.vals = scores32[flat]  # id -1 (unknown) takes the last entry
        self.starts = np.zeros(len(paths) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, paths), dtype=np.int64, count=len(paths)), out=self.starts[1:])

    def run(self, x: float, a: int, b: int) -> float:
        """The float32 score after segments a..b-1 from `x` (unchanged since they were gathered),
        reset to 0 where a segment starts beyond +-100000."""
        starts = self.starts
        while True:
            if x < -RESET or x > RESET:
                x = 0.0
            lo = starts[a]
            seg = np.empty(starts[b] - lo + 1, dtype=np.float32)
            seg[0] = x
            seg[1:] = self.vals[lo:starts[b]]
            acc = np.add.accumulate(seg)
            # the value where each later segment starts; a reset there starts over from it
            at = acc[starts[a + 1:b] - lo]
            over = np.flatnonzero((at < -RESET) | (at > RESET))
            if not over.size:
                return float(acc[-1])
            a += 1 + int(over[0])
            x = float(at[over[0]])

    def before_each(self, x: float, a: int = 0, limit: np.ndarray | None = None,
                    window: int = 16384) -> tuple[np.ndarray, int]:
        """The float32 score where each segment from `a` on starts (before its own reset) and,
        last, after them all, from `x` where segment `a` starts (`run` from `a` to each segment);
        with `limit`, only up to the first segment ``k`` whose score after its reset reaches
        ``limit[k]`` in size: ``(scores of segments a..k, k)`` (k = number of segments when none
        does). Accumulated `window` pieces at a time: a reset starts over from its segment."""
        starts = self.starts
        n = len(starts) - 1
        out = np.empty(n + 1 - a, dtype=np.float32)
        base = a
        out[0] = x
        while a < n:
            if x < -RESET or x > RESET:
                x = 0.0
            if limit is not None and abs(x) >= limit[a]:
                return out[:a - base + 1], a
            lo = int(starts[a])
            # the segments a..b-1 that end within the window (at least one)
            b = min(n, max(a + 1, int(np.searchsorted(starts, lo + window, side="right")) - 1))
            seg = np.empty(int(starts[b]) - lo + 1, dtype=np.float32)
            seg[0] = x
            seg[1:] = self.vals[lo:starts[b]]
            acc = np.add.accumulate(seg)
            at = acc[starts[a + 1:b + 1] - lo]  # the score after each of segments a..b-1
            head = at[:-1]
            stop_at = (head < -RESET) | (head > RESET)  # a reset where the next segment starts
            if limit is not None:
                stop_at |= np.abs(head) >= limit[a + 1:b]
            over = np.flatnonzero(stop_at)
            stop = b if not over.size else a + 1 + int(over[0])
            out[a + 1 - base:stop + 1 - base] = at[:stop - a]
            x = float(out[stop - base])
            a = stop
        return out, n
