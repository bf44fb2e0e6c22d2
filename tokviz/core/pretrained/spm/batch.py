"""Many segments' Viterbi at once, in numpy: what `PieceLattice._relative` computes for one.

Encoding a large text meets tens of thousands of distinct words; a Python loop per word and
position is most of the time. Here every word is handled together:

1. edges: each substring ``s[start:end]`` that could be a piece (no longer than the longest piece
   with the same first two characters) is hashed twice (64-bit polynomials) and looked up in the
   hash table of the pieces (`HashIndex`); a match must agree on both hashes. A position with no
   one-character piece gets the unknown edge;
2. the best path from score 0, start place by start place across all words (the edges of each
   length grouped by where they start: every node's candidates come earliest start first, so
   a strict ``>`` keeps the libraries' ties), keeping per node the runner-up and the deepest
   candidate path for the margin `PieceLattice` needs;
3. back-pointers followed for all words together.

Results are the same tuples ``(ids, ends, total, margin, wmax)``, except that the margin is
bounded with the deepest candidate's edge count (never larger than the exact per-node margin,
so never less cautious). `GatheredChain` adds the float32 scores of a text's cached paths for
`PieceLattice`'s scan. What this leaves out: exact float32 replays (`lattice`, `viterbi`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

from .viterbi import RESET

_B1 = np.uint64(0x9E3779B97F4A7C15)
_B2 = np.uint64(0xC2B2AE3D27D4EB4F)
MAX_SEGMENT = 512  # longer segments take the per-word path (positions are processed in lockstep)
_MIX = np.uint64(0xD6E8FEB86659FD93)  # spreads hashes over a table's slots (multiplicative hashing)


def _code_points(strings: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(code points + 1 as uint64, start of each string, length of each string)."""
    joined = "".join(strings)
    cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64) + np.uint64(1)
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    starts = np.zeros(len(strings), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return cps, starts, lengths


class PieceHashes:
    """Double hashes of a lattice's pieces (a `HashIndex` of the first), and the longest piece
    per two-character head."""

    def __init__(self, ids: dict[str, int], scores: list[float]) -> None:
        pieces = list(ids)
        cps, starts, lengths = _code_points(pieces)
        # longest first: the pieces with at least L characters are the first count[L]
        by_len = np.argsort(-lengths, kind="stable")
        starts, lengths = starts[by_len], lengths[by_len]
        count = np.searchsorted(-lengths, -np.arange(int(lengths.max(initial=0)) + 2), side="right")
        h1 = np.zeros(len(pieces), dtype=np.uint64)
        h2 = np.zeros(len(pieces), dtype=np.uint64)
        head1 = np.zeros(len(pieces), dtype=np.uint64)  # hash of the first two characters
        for L in range(1, len(count) - 1):
            k = int(count[L])
            c = cps[starts[:k] + (L - 1)]
            h1[:k] = h1[:k] * _B1 + c
            h2[:k] = h2[:k] * _B2 + c
            if L == 2:
                head1[:k] = h1[:k]
        self.h1, self.h2 = h1, h2
        pid = np.fromiter(ids.values(), dtype=np.int64, count=len(pieces))[by_len]
        self.ids = pid
        sc = np.asarray(scores, dtype=np.float64)
        self.scores = sc[pid] if len(pid) else np.zeros(0)
        self.index = HashIndex(h1)
        # no collision among pieces: each piece's hash leads back to it
        self.ok = bool(np.array_equal(self.index.lookup(h1), np.arange(len(h1))))
        multi = lengths >= 2
        hh, hl = head1[multi], lengths[multi]
        if len(hh):
            o = np.lexsort((hl, hh))
            hh, hl = hh[o], hl[o]
            last = np.r_[hh[1:] != hh[:-1], True]
            self.heads, self.head_len = hh[last], hl[last]
        else:
            self.heads, self.head_len = np.zeros(0, np.uint64), np.zeros(0, np.int64)
        self.head_index = HashIndex(self.heads)

    def find(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        """Row of each (h1, h2) in the table (`ids`, `scores`), or -1."""
        out = self.index.lookup(h1)
        hit = np.flatnonzero(out >= 0)
        out[hit[self.h2[out[hit]] != h2[hit]]] = -1
        return out


class HashIndex:
    """``HashIndex(keys).lookup(queries)``: the position in `keys` (distinct uint64) of each
    query, or -1. An open-addressing table with linear probing, at most a quarter full, built
    and searched for all keys at once: most queries take one gather, where a sorted search
    takes eighteen. Built by sorting the keys by slot: each key sits at the first free place at
    or after its slot, ``place[i] = max(slot[i], place[i-1] + 1)``, a running maximum; the
    table runs past its last slot instead of wrapping around."""

    def __init__(self, keys: np.ndarray) -> None:
        n = len(keys)
        bits = max(8, int(4 * n).bit_length())
        self.shift = np.uint64(64 - bits)
        slots = self._slot(keys)
        order = np.argsort(slots, kind="stable")
        ramp = np.arange(n, dtype=np.int64)
        place = ramp + np.maximum.accumulate(slots[order] - ramp) if n else ramp
        size = max(1 << bits, int(place[-1]) + 1 if n else 0) + 1  # one empty place past the end
        self.keys = np.zeros(size, dtype=np.uint64)
        self.rows = np.full(size, -1, dtype=np.int32 if n < 2**31 else np.int64)
        self.keys[place] = keys[order]
        self.rows[place] = order
        self.probes = int((place - slots[order]).max(initial=0))  # the farthest a key sits from its slot

    def _slot(self, h: np.ndarray) -> np.ndarray:
        return ((h * _MIX) >> self.shift).astype(np.int64)

    def lookup(self, q: np.ndarray) -> np.ndarray:
        out = np.full(len(q), -1, dtype=np.int64)
        idx = np.arange(len(q), dtype=np.int64)
        pos = self._slot(q)
        for _ in range(self.probes + 1):
            rows = self.rows[pos]
            hit = self.keys[pos] == q
            found = hit & (rows >= 0)
            out[idx[found]] = rows[found]
            go_on = np.flatnonzero(~hit & (rows >= 0))  # an occupied place with another key
            if not len(go_on):
                break
            idx, q, pos = idx[go_on], q[go_on], pos[go_on] + 1
        return out


def batch_relative(table: PieceHashes, segs: list[str], unk_score: float) -> list[tuple]:
    """`PieceLattice._relative` of every segment in `segs` (each at most `MAX_SEGMENT` long)."""
    cps, off, lens = _code_points(segs)
    n_seg = len(segs)
    seg_of = np.repeat(np.arange(n_seg), lens)
    pos = np.arange(len(cps), dtype=np.int64)
    local = pos - off[seg_of]
    remain = lens[seg_of] - local
    # longest candidate per position: 1, or the longest piece with these two first characters
    lmax = np.ones(len(cps), dtype=np.int64)
    two = np.flatnonzero(remain >= 2)
    if len(two) and len(table.heads):
        k = table.head_index.lookup(cps[two] * _B1 + cps[two + 1])
        hit = k >= 0
        lmax[two[hit]] = np.minimum(table.head_len[k[hit]], remain[two[hit]])
    # positions by their place in the segment (then by segment): the edges of each length come
    # out grouped by where they start, the order the Viterbi takes them in
    by_local = np.argsort(local.astype(np.int16) if len(lens) and lens.max() < 32768 else local, kind="stable")
    n_loc = int(lens.max(initial=0)) + 1
    node = pos + seg_of  # node index: one node per character plus one per segment
    groups = []  # per length: (cuts by start place, source nodes, scores, rows)
    active = pos[by_local]
    h1 = np.zeros(len(cps), dtype=np.uint64)
    h2 = np.zeros(len(cps), dtype=np.uint64)
    L = 1
    while len(active):
        c = cps[active + L - 1]
        h1[active] = h1[active] * _B1 + c
        h2[active] = h2[active] * _B2 + c
        row = table.find(h1[active], h2[active])
        if L == 1:
            e_pos, e_row = active, row  # every position has an edge of one: its piece or the unknown one
        else:
            m = row >= 0
            e_pos, e_row = active[m], row[m]
        score = np.where(e_row >= 0, table.scores[e_row], unk_score)
        cuts = np.searchsorted(local[e_pos], np.arange(n_loc + 1)).tolist()
        groups.append((L, cuts, node[e_pos], score, e_row))
        L += 1
        active = active[lmax[active] >= L]
    node_off = off + np.arange(n_seg)
    n_nodes = int(lens.sum() + n_seg)
    best = np.full(n_nodes, -np.inf)
    best[node_off] = 0.0
    second = np.full(n_nodes, -np.inf)
    depth = np.zeros(n_nodes, dtype=np.int64)
    dmax = np.zeros(n_nodes, dtype=np.int64)
    back_row = np.full(n_nodes, -1, dtype=np.int64)  # the best piece's row (-1: unknown) and length
    back_len = np.ones(n_nodes, dtype=np.int64)
    for t in range(n_loc):
        # starts at place t, longest last: their ends differ, and every edge into those ends
        # from an earlier start was taken before (the libraries' order: earliest start first)
        for L, cuts, src_all, score_all, row_all in groups:
            a, b = cuts[t], cuts[t + 1]
            if a == b:
                continue
            s_ = src_all[a:b]
            d = s_ + L
            cand = best[s_] + score_all[a:b]
            cdep = depth[s_] + 1
            cur = best[d]
            win = cand > cur  # a node's first candidate always wins (cur is -inf)
            second[d] = np.where(win, cur, np.maximum(second[d], cand))
            dmax[d] = np.maximum(dmax[d], cdep)
            w = d[win]
            best[w] = cand[win]
            depth[w] = cdep[win]
            back_row[w] = row_all[a:b][win]
            back_len[w] = L
    with np.errstate(invalid="ignore"):
        margin_node = np.where(np.isfinite(second), (best - second) / (depth + dmax + 1), np.inf)
    margins = np.minimum.reduceat(margin_node, node_off)  # a segment's nodes are contiguous
    wmax = np.maximum.reduceat(np.abs(best), node_off)
    ends_node = node_off + lens
    totals = best[ends_node]
    # follow the back-pointers of every segment together
    rec_seg, rec_end, rec_id = [], [], []
    segs_left = np.flatnonzero(lens > 0)
    cur = ends_node[segs_left]
    while len(cur):
        rec_seg.append(segs_left)
        rec_end.append(cur - node_off[segs_left])
        row = back_row[cur]
        rec_id.append(np.where(row >= 0, table.ids[row], -1))
        nxt = cur - back_len[cur]
        more = nxt > node_off[segs_left]
        cur, segs_left = nxt[more], segs_left[more]
    empty = ((), (), 0.0, np.inf, 0.0)
    if not rec_seg:
        return [empty] * n_seg
    rs, re_, ri = np.concatenate(rec_seg), np.concatenate(rec_end), np.concatenate(rec_id)
    o = np.lexsort((re_, rs))
    re_l, ri_l = re_[o].tolist(), ri[o].tolist()
    cuts = np.searchsorted(rs[o], np.arange(n_seg + 1)).tolist()
    spans = list(zip(cuts, cuts[1:]))
    out = list(zip([tuple(ri_l[a:b]) for a, b in spans], [tuple(re_l[a:b]) for a, b in spans],
                   totals.tolist(), margins.tolist(), wmax.tolist()))
    for k in np.flatnonzero(lens == 0).tolist():
        out[k] = empty
    return out


class GatheredChain:
    """`PieceLattice._chain` over runs of a text's segments as they were cached: the scores of
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
