"""Many segments' Viterbi at once, in numpy: what `PieceLattice._relative` computes for one.

Encoding a large text meets tens of thousands of distinct words; a Python loop per word and
position is most of the time. Here every word is handled together:

1. edges: each substring ``s[start:end]`` that could be a piece (no longer than the longest piece
   with the same first two characters) is hashed twice (64-bit polynomials) and looked up in the
   sorted hashes of the pieces; a match must agree on both hashes. A position with no
   one-character piece gets the unknown edge;
2. the best path from score 0, position by position across all words (``reduceat`` over the
   edges ending at each node, ties to the smallest start), keeping per node the runner-up and
   the deepest candidate path for the margin `PieceLattice` needs;
3. back-pointers followed for all words together.

Results are the same tuples ``(ids, ends, total, margin, wmax)``, except that the margin is
bounded with the deepest candidate's edge count (never larger than `_relative`'s, so never less
cautious). What this leaves out: exact float32 replays (`lattice`).
"""

from __future__ import annotations

import numpy as np

_B1 = np.uint64(0x9E3779B97F4A7C15)
_B2 = np.uint64(0xC2B2AE3D27D4EB4F)
MAX_SEGMENT = 512  # longer segments take the per-word path (positions are processed in lockstep)
_BITS = 22
_MASK = np.uint64((1 << _BITS) - 1)


def _code_points(strings: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(code points + 1 as uint64, start of each string, length of each string)."""
    joined = "".join(strings)
    cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64) + np.uint64(1)
    lengths = np.fromiter((len(s) for s in strings), dtype=np.int64, count=len(strings))
    starts = np.zeros(len(strings), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return cps, starts, lengths


class PieceHashes:
    """Sorted double hashes of a lattice's pieces, and the longest piece per two-character head."""

    def __init__(self, ids: dict[str, int], scores: list[float]) -> None:
        pieces = list(ids)
        cps, starts, lengths = _code_points(pieces)
        h1 = np.zeros(len(pieces), dtype=np.uint64)
        h2 = np.zeros(len(pieces), dtype=np.uint64)
        head1 = np.zeros(len(pieces), dtype=np.uint64)  # hash of the first two characters
        for L in range(1, int(lengths.max(initial=0)) + 1):
            m = np.flatnonzero(lengths >= L)
            c = cps[starts[m] + L - 1]
            h1[m] = h1[m] * _B1 + c
            h2[m] = h2[m] * _B2 + c
            if L == 2:
                head1[m] = h1[m]
        order = np.argsort(h1, kind="stable")
        self.h1, self.h2 = h1[order], h2[order]
        pid = np.fromiter(ids.values(), dtype=np.int64, count=len(pieces))[order]
        self.ids = pid
        sc = np.asarray(scores, dtype=np.float64)
        self.scores = sc[pid] if len(pid) else np.zeros(0)
        self.ok = not len(self.h1) or bool(np.all(self.h1[1:] != self.h1[:-1]))  # no collision among pieces
        self.bits = np.zeros(1 << _BITS, dtype=bool)  # a one-hash Bloom filter: most misses end here
        self.bits[(self.h1 & _MASK).astype(np.int64)] = True
        multi = lengths >= 2
        hh, hl = head1[multi], lengths[multi]
        if len(hh):
            o = np.lexsort((hl, hh))
            hh, hl = hh[o], hl[o]
            last = np.r_[hh[1:] != hh[:-1], True]
            self.heads, self.head_len = hh[last], hl[last]
        else:
            self.heads, self.head_len = np.zeros(0, np.uint64), np.zeros(0, np.int64)

    def find(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        """Index into the sorted table of each (h1, h2), or -1."""
        out = np.full(len(h1), -1, dtype=np.int64)
        if not len(self.h1):
            return out
        maybe = np.flatnonzero(self.bits[(h1 & _MASK).astype(np.int64)])
        q1 = h1[maybe]
        i = np.minimum(np.searchsorted(self.h1, q1), len(self.h1) - 1)
        ok = (self.h1[i] == q1) & (self.h2[i] == h2[maybe])
        out[maybe[ok]] = i[ok]
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
        hh = cps[two] * _B1 + cps[two + 1]
        k = np.minimum(np.searchsorted(table.heads, hh), len(table.heads) - 1)
        hit = table.heads[k] == hh
        lmax[two[hit]] = np.minimum(table.head_len[k[hit]], remain[two[hit]])
    e_pos, e_len, e_row = [], [], []
    active = pos
    h1 = np.zeros(len(cps), dtype=np.uint64)
    h2 = np.zeros(len(cps), dtype=np.uint64)
    L = 1
    while len(active):
        c = cps[active + L - 1]
        h1[active] = h1[active] * _B1 + c
        h2[active] = h2[active] * _B2 + c
        row = table.find(h1[active], h2[active])
        m = row >= 0
        e_pos.append(active[m])
        e_len.append(np.full(int(m.sum()), L, dtype=np.int64))
        e_row.append(row[m])
        L += 1
        active = active[lmax[active] >= L]
    e_pos = np.concatenate(e_pos)
    e_len = np.concatenate(e_len)
    e_row = np.concatenate(e_row)
    single = np.zeros(len(cps), dtype=bool)
    single[e_pos[e_len == 1]] = True
    unk = np.flatnonzero(~single)
    pos_all = np.concatenate([e_pos, unk])
    len_all = np.concatenate([e_len, np.ones(len(unk), dtype=np.int64)])
    row_all = np.concatenate([e_row, np.full(len(unk), -1, dtype=np.int64)])
    # buckets of edges by (end, longest first): within one, each node has at most one edge, and
    # taking them longest first is taking them in the libraries' order (earliest start first)
    lcap = int(len_all.max(initial=1)) + 1
    key = (local[pos_all] + len_all) * lcap + (lcap - 1 - len_all)
    if key.max(initial=0) < 32768:
        key = key.astype(np.int16)  # a radix sort
    order = np.argsort(key, kind="stable")
    key = key[order]
    pos_s, len_s, row_s = pos_all[order], len_all[order], row_all[order]
    src = pos_s + seg_of[pos_s]  # node index: one node per character plus one per segment
    dst = src + len_s
    score = np.where(row_s >= 0, table.scores[row_s], unk_score)
    node_off = off + np.arange(n_seg)
    n_nodes = int(lens.sum() + n_seg)
    best = np.full(n_nodes, -np.inf)
    best[node_off] = 0.0
    second = np.full(n_nodes, -np.inf)
    depth = np.zeros(n_nodes, dtype=np.int64)
    dmax = np.zeros(n_nodes, dtype=np.int64)
    back = np.full(n_nodes, -1, dtype=np.int64)
    cuts = np.flatnonzero(np.r_[True, key[1:] != key[:-1], True])
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        d = dst[a:b]
        s_ = src[a:b]
        cand = best[s_] + score[a:b]
        cdep = depth[s_] + 1
        cur = best[d]
        win = cand > cur  # a node's first candidate always wins (cur is -inf)
        second[d] = np.where(win, cur, np.maximum(second[d], cand))
        dmax[d] = np.maximum(dmax[d], cdep)
        w = d[win]
        best[w] = cand[win]
        depth[w] = cdep[win]
        back[w] = np.flatnonzero(win) + a
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
        e = back[cur]
        rec_seg.append(segs_left)
        rec_end.append(cur - node_off[segs_left])
        row = row_s[e]
        rec_id.append(np.where(row >= 0, table.ids[row], -1))
        nxt = src[e]
        more = nxt > node_off[segs_left]
        cur, segs_left = nxt[more], segs_left[more]
    out: list[tuple] = [((), (), 0.0, np.inf, 0.0)] * n_seg
    if rec_seg:
        rs, re_, ri = np.concatenate(rec_seg), np.concatenate(rec_end), np.concatenate(rec_id)
        o = np.lexsort((re_, rs))
        rs, re_, ri = rs[o], re_[o], ri[o]
        cuts = np.searchsorted(rs, np.arange(n_seg + 1))
        re_l, ri_l = re_.tolist(), ri.tolist()
        tot, mar, wm = totals.tolist(), margins.tolist(), wmax.tolist()
        for k, (a, b) in enumerate(zip(cuts[:-1].tolist(), cuts[1:].tolist())):
            if b > a:
                out[k] = (tuple(ri_l[a:b]), tuple(re_l[a:b]), tot[k], mar[k], wm[k])
    return out
