"""The Unigram trainer's lattice programmes compiled with numba (imported only when `tokviz.core.jit` says so).

The lattices are those of `lattice.Lattices`: edges sorted by (lattice, start, end), lattice w's
edges at ``eoff[w]:eoff[w + 1]``, positions relative to the lattice. Every programme runs word by
word over that one order, so no per-position plans are needed and pruning is a plain filter:

- `e_step`: forward-backward in probability space (a word whose total probability is below
  ``1e-250`` is redone in log space), expected counts and log Z;
- `log_z_and_freq`: log Z and the weighted uses of every piece in the Viterbi segmentations;
- `alternatives`: each piece's best segmentation without its own whole edge;
- `keep_edges`: the edges of the pieces a prune keeps;
- `substring_table` and `trie_preorder`: the seed's substrings, numbered, and their string order;
  `occurrences_of`: the occurrences of the seed's pieces.

Viterbi ties are broken as in `lattice.Lattices.viterbi` (the smallest start wins): edges are
relaxed in (start, end) order and only a strictly better score replaces a node's best, but the
first edge from a reached node always takes the node it reaches (as the numpy path's first maximum
does, even at -inf); back-pointers start at -1 and are followed only while set, so no score can
send an index out of bounds.

What this leaves out: choosing this path and the numpy arrays around it (`compiled.CompiledLattices`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tokviz.core.text.trie_table import EMPTY, SHIFT, find_slot, rehash

_TINY = 1e-250  # a word less probable than this is summed in log space


@njit(cache=True, nogil=True)
def substring_table(codes, lengths, weights, max_chars, total):  # pragma: no cover - compiled
    """`trainer.substrings` compiled: every substring of at most `max_chars` code points of every
    text (``lengths``: the texts' lengths in `codes`; `total`: how many there are), in (text,
    start, end) order: (number, text, start, end) of each, numbered in order of first occurrence,
    and of each number the number of the substring one character shorter (-1: none), its last code
    point (for `trie_preorder`), its first occurrence and its count (the `weights` of the texts it
    occurs in, summed in order). The substrings form a trie (`tokviz.core.text.trie_table`, node
    ``number + 1``; 0 is the empty string) that doubles when half full."""
    bits = 12
    table = np.full((1 << bits, 2), EMPTY, dtype=np.int64)
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    sid = np.empty(total, dtype=np.int64)
    lat = np.empty(total, dtype=np.int32)
    start = np.empty(total, dtype=np.int32)
    end = np.empty(total, dtype=np.int32)
    parent = np.empty(total, dtype=np.int64)
    last = np.empty(total, dtype=np.int64)
    first = np.empty(total, dtype=np.int64)
    count = np.zeros(total, dtype=np.float64)  # (pages no number reaches are never touched)
    slot = 0
    n_ids = 0
    text_start = 0
    for t in range(len(lengths)):
        text_end = text_start + lengths[t]
        for a in range(text_start, text_end):
            node = 0
            for b in range(a, min(text_end, a + max_chars)):
                key = (node << SHIFT) | np.int64(codes[b])
                s = find_slot(table, key, shift, mask)
                if table[s, 0] == EMPTY:
                    parent[n_ids] = node - 1
                    last[n_ids] = codes[b]
                    first[n_ids] = slot
                    n_ids += 1
                    table[s, 0] = key
                    table[s, 1] = n_ids
                    node = n_ids
                    if 2 * n_ids > mask:  # half full: twice the rows
                        bits += 1
                        table = rehash(table, bits)
                        shift, mask = np.uint64(64 - bits), (1 << bits) - 1
                else:
                    node = table[s, 1]
                sid[slot] = node - 1
                count[node - 1] += weights[t]
                lat[slot] = t
                start[slot] = a - text_start
                end[slot] = b + 1 - text_start
                slot += 1
        text_start = text_end
    return (sid, lat, start, end, parent[:n_ids].copy(), last[:n_ids].copy(), first[:n_ids].copy(),
            count[:n_ids].copy())


@njit(cache=True, nogil=True)
def occurrences_of(sid, lat, start, end, piece_of):  # pragma: no cover - compiled
    """The occurrences (of `substring_table`) whose substring is a piece (``piece_of[number] >= 0``),
    in order: their texts, starts, ends (32-bit, as given) and pieces."""
    n = 0
    for i in range(len(sid)):
        if piece_of[sid[i]] >= 0:
            n += 1
    out_lat = np.empty(n, dtype=lat.dtype)
    out_start = np.empty(n, dtype=start.dtype)
    out_end = np.empty(n, dtype=end.dtype)
    out_piece = np.empty(n, dtype=np.int64)
    j = 0
    for i in range(len(sid)):
        p = piece_of[sid[i]]
        if p >= 0:
            out_lat[j] = lat[i]
            out_start[j] = start[i]
            out_end[j] = end[i]
            out_piece[j] = p
            j += 1
    return out_lat, out_start, out_end, out_piece


@njit(cache=True, nogil=True)
def trie_preorder(parent, last):  # pragma: no cover - compiled
    """The rank of each substring in code point order (Python's string order): the trie of
    `substring_table` walked depth first, children by code point, a prefix before its extensions."""
    n = len(parent)
    first = np.zeros(n + 2, dtype=np.int64)  # children of node q (0: the empty string, else number + 1)
    for i in range(n):
        first[parent[i] + 2] += 1
    for q in range(1, n + 2):
        first[q] += first[q - 1]
    kids = np.empty(n, dtype=np.int64)
    fill = first.copy()
    for i in range(n):
        q = parent[i] + 1
        kids[fill[q]] = i
        fill[q] += 1
    for q in range(n + 1):  # each node's children by code point
        lo, hi = first[q], first[q + 1]
        if hi - lo > 32:
            kids[lo:hi] = kids[lo:hi][np.argsort(last[kids[lo:hi]])]
            continue
        for j in range(lo + 1, hi):
            x = kids[j]
            k = j - 1
            while k >= lo and last[kids[k]] > last[x]:
                kids[k + 1] = kids[k]
                k -= 1
            kids[k + 1] = x
    pre = np.empty(n, dtype=np.int64)
    stack = np.empty(n + 1, dtype=np.int64)
    top = 0
    for j in range(first[1] - 1, first[0] - 1, -1):
        stack[top] = kids[j]
        top += 1
    counter = 0
    while top > 0:
        top -= 1
        x = stack[top]
        pre[x] = counter
        counter += 1
        for j in range(first[x + 2] - 1, first[x + 1] - 1, -1):
            stack[top] = kids[j]
            top += 1
    return pre


@njit(cache=True, nogil=True)
def _logaddexp(a, b):  # pragma: no cover - compiled
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@njit(cache=True, nogil=True)
def _log_forward(e0, e1, n, start, end, piece, logp, la):  # pragma: no cover - compiled
    """One word's forward sums in log space (into ``la[:n + 1]``); returns its log Z."""
    for j in range(n + 1):
        la[j] = -np.inf
    la[0] = 0.0
    for e in range(e0, e1):
        t = end[e]
        la[t] = _logaddexp(la[t], la[start[e]] + logp[piece[e]])
    return la[n]


@njit(cache=True, nogil=True)
def _log_word(e0, e1, n, start, end, piece, logp, weight, la, lb, counts):  # pragma: no cover - compiled
    """One word's expected counts in log space; returns its log Z."""
    _log_forward(e0, e1, n, start, end, piece, logp, la)
    for j in range(n + 1):
        lb[j] = -np.inf
    lb[n] = 0.0
    for e in range(e1 - 1, e0 - 1, -1):
        s = start[e]
        lb[s] = _logaddexp(lb[s], lb[end[e]] + logp[piece[e]])
    lz = la[n]
    for e in range(e0, e1):
        q = piece[e]
        counts[q] += weight * np.exp(la[start[e]] + logp[q] + lb[end[e]] - lz)
    return lz


@njit(cache=True, nogil=True)
def e_step(eoff, lengths, start, end, piece, logp, weights, n_pieces):  # pragma: no cover - compiled
    """(expected count of every piece over all segmentations, weighted; log Z of every word)."""
    p = np.exp(logp)
    counts = np.zeros(n_pieces)
    z = np.empty(len(lengths))
    width = lengths.max() + 1 if len(lengths) else 1
    a = np.empty(width)
    b = np.empty(width)
    for w in range(len(lengths)):
        e0, e1, n = eoff[w], eoff[w + 1], lengths[w]
        for j in range(n + 1):
            a[j] = 0.0
            b[j] = 0.0
        a[0] = 1.0
        b[n] = 1.0
        for e in range(e0, e1):
            a[end[e]] += a[start[e]] * p[piece[e]]
        total = a[n]
        if not total > _TINY:
            z[w] = _log_word(e0, e1, n, start, end, piece, logp, weights[w], a, b, counts)
            continue
        f = weights[w] / total
        for e in range(e1 - 1, e0 - 1, -1):  # backward; beta of the edge's end is final here
            s, q = start[e], piece[e]
            v = b[end[e]] * p[q]
            counts[q] += a[s] * v * f
            b[s] += v
        z[w] = np.log(total)
    return counts, z


@njit(cache=True, nogil=True)
def log_z_and_freq(eoff, lengths, start, end, piece, logp, scores, weights, n_pieces):  # pragma: no cover
    """(log Z of every word under `logp`; weighted uses of every piece in the Viterbi
    segmentations under `scores`)."""
    p = np.exp(logp)
    freq = np.zeros(n_pieces)
    z = np.empty(len(lengths))
    width = lengths.max() + 1 if len(lengths) else 1
    best = np.empty(width)
    back = np.empty(width, dtype=np.int64)
    a = np.empty(width)
    for w in range(len(lengths)):
        e0, e1, n = eoff[w], eoff[w + 1], lengths[w]
        for j in range(n + 1):
            best[j] = -np.inf
            back[j] = -1
            a[j] = 0.0
        best[0] = 0.0
        a[0] = 1.0
        for e in range(e0, e1):
            s, t, q = start[e], end[e], piece[e]
            a[t] += a[s] * p[q]
            v = best[s] + scores[q]
            if (s == 0 or back[s] >= 0) and (back[t] < 0 or v > best[t]):
                best[t] = v
                back[t] = e
        if a[n] > _TINY:
            z[w] = np.log(a[n])
        else:
            z[w] = _log_forward(e0, e1, n, start, end, piece, logp, a)
        j = n
        while j > 0 and back[j] >= 0:
            e = back[j]
            freq[piece[e]] += weights[w]
            j = start[e]
    return z, freq


@njit(cache=True, nogil=True)
def alternatives(eoff, start, end, piece, scores, lats, starts, lengths):  # pragma: no cover - compiled
    """Best segmentation of each stretch k (``lengths[k]`` characters from ``starts[k]`` in lattice
    ``lats[k]``) without the edge covering it whole: arrays (k, start, end, piece), one row per
    token, positions relative to the stretch, stretch by stretch, each right to left (the order in
    which `lattice.Lattices.viterbi` gives a lattice's tokens, so that sums over them agree)."""
    n_rows = lengths.sum()
    out_k = np.empty(n_rows, dtype=np.int64)
    out_s = np.empty(n_rows, dtype=np.int64)
    out_e = np.empty(n_rows, dtype=np.int64)
    out_p = np.empty(n_rows, dtype=np.int64)
    width = lengths.max() + 1 if len(lengths) else 1
    best = np.empty(width)
    back = np.empty(width, dtype=np.int64)
    at = 0
    for k in range(len(lats)):
        w, o, n = lats[k], starts[k], lengths[k]
        lo, hi = eoff[w], eoff[w + 1]
        while lo < hi:  # the first edge starting at o or after
            mid = (lo + hi) >> 1
            if start[mid] < o:
                lo = mid + 1
            else:
                hi = mid
        for j in range(n + 1):
            best[j] = -np.inf
            back[j] = -1
        best[0] = 0.0
        e = lo
        stop = eoff[w + 1]
        while e < stop and start[e] < o + n:
            s, t = start[e] - o, end[e] - o
            if t <= n and not (s == 0 and t == n):
                v = best[s] + scores[piece[e]]
                if (s == 0 or back[s] >= 0) and (back[t] < 0 or v > best[t]):
                    best[t] = v
                    back[t] = e
            e += 1
        if back[n] < 0:  # no other segmentation
            continue
        j = n
        while j > 0 and back[j] >= 0:  # right to left, as `Lattices.viterbi` reads its tokens back
            e = back[j]
            out_k[at] = k
            out_s[at] = start[e] - o
            out_e[at] = j
            out_p[at] = piece[e]
            j = start[e] - o
            at += 1
    return out_k[:at], out_s[:at], out_e[:at], out_p[:at]


@njit(cache=True, nogil=True)
def keep_edges(eoff, start, end, piece, keep_piece):  # pragma: no cover - compiled
    """The edges of the pieces where `keep_piece` is true, in the same order: (eoff, start, end, piece)."""
    n = len(piece)
    out_off = np.empty(len(eoff), dtype=eoff.dtype)
    out_s = np.empty(n, dtype=start.dtype)
    out_e = np.empty(n, dtype=end.dtype)
    out_p = np.empty(n, dtype=piece.dtype)
    at = 0
    out_off[0] = 0
    for w in range(len(eoff) - 1):
        for e in range(eoff[w], eoff[w + 1]):
            if keep_piece[piece[e]]:
                out_s[at] = start[e]
                out_e[at] = end[e]
                out_p[at] = piece[e]
                at += 1
        out_off[w + 1] = at
    return out_off, out_s[:at], out_e[:at], out_p[:at]
