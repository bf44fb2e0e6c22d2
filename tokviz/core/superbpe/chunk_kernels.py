"""SuperBPE's stage-2 chunks of a text, cut and counted compiled (imports numba; loaded only when
`tokviz.core.jit` says so).

`count_chunks` walks the text's code points once, cutting it as the stage-2 split does
(`tokviz.core.superbpe.split`: the authors' alternatives ``\\p{N}{1,3}``, `` ?[^\\s\\p{L}\\p{N}]{2,}[\\r\\n/]*``
and `` +(?!\\S)``, each match a chunk and so is the text between two matches; `match_end`), and
counts the distinct chunks in order of first appearance in an open-addressing table of their
FNV-1a hashes, a hit checked code point by code point. Unlike the stage-1 pieces
(`tokviz.core.superbpe.piece_kernels`), the chunks must be the split's exactly: they are the
corpus stage 2 trains on (tested against the split's pattern, astral characters included).

What this leaves out: the class table (`tokviz.core.text.fastsplit.class_table`), the text's code
points and its special tokens (`tokviz.core.superbpe.pieces`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tokviz.core.bpe.byte_ranks.word_cache import same_run, word_hash

_L, _N, _W = 1, 2, 4  # `class_table`'s bits
_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def match_end(cps, p, end, table):
    """Where the authors' first alternative that matches at `p` ends, or -1 (the text ends at `end`)."""
    if table[cps[p]] & _N:
        j = p + 1
        while j < end and j < p + 3 and table[cps[j]] & _N:
            j += 1
        return j
    q = p + 1 if cps[p] == 32 else p  # ` ?` then two or more of neither a space, a letter nor a number
    if q + 1 < end and table[cps[q]] == 0 and table[cps[q + 1]] == 0:
        j = q + 2
        while j < end and table[cps[j]] == 0:
            j += 1
        while j < end and (cps[j] == 10 or cps[j] == 13 or cps[j] == 47):
            j += 1
        return j
    if cps[p] == 32:  # spaces that no non-space follows
        j = p + 1
        while j < end and cps[j] == 32:
            j += 1
        if j == end or table[cps[j]] & _W:
            return j
        if j - 1 > p:
            return j - 1
    return -1


@njit(cache=True, nogil=True)
def _grown(a, size):
    out = np.empty(size, a.dtype)
    out[:len(a)] = a
    return out


@njit(cache=True, nogil=True)
def chunk_end(cps, pos, end, table):
    """Where the chunk starting at `pos` ends: a match of the authors' alternatives, or the text
    up to the next match (or to `end`)."""
    j = match_end(cps, pos, end, table)
    if j >= 0:
        return j
    p = pos + 1
    while p < end and match_end(cps, p, end, table) < 0:
        p += 1
    return p


@njit(cache=True, nogil=True)
def count_chunks(cps, seg_starts, seg_ends, table):
    """The distinct chunks of the texts ``cps[seg_starts[s]:seg_ends[s]]`` in order of first
    appearance: (where each first appears in `cps`, its length, its count)."""
    bits = 10
    hashes = np.zeros(1 << bits, np.uint64)
    slots = np.full(1 << bits, -1, np.int64)
    first = np.empty(256, np.int64)
    length = np.empty(256, np.int64)
    count = np.empty(256, np.int64)
    n = 0
    for s in range(len(seg_starts)):
        a, end = seg_starts[s], seg_ends[s]
        while a < end:
            b = chunk_end(cps, a, end, table)
            h = word_hash(cps, a, b)
            mask = (1 << bits) - 1
            slot = np.int64((h * _MIX) >> np.uint64(64 - bits))
            c = slots[slot]
            while c >= 0 and not (hashes[slot] == h and length[c] == b - a and same_run(cps, first[c], cps, a, b - a)):
                slot = (slot + 1) & mask
                c = slots[slot]
            if c >= 0:
                count[c] += 1
            else:
                if n == len(first):
                    first, length, count = _grown(first, 2 * n), _grown(length, 2 * n), _grown(count, 2 * n)
                first[n], length[n], count[n] = a, b - a, 1
                hashes[slot], slots[slot] = h, n
                n += 1
                if 2 * n > len(slots):  # at most half full
                    bits += 1
                    hashes, slots = _rehashed(hashes, slots, bits)
            a = b
    return first[:n].copy(), length[:n].copy(), count[:n].copy()


@njit(cache=True, nogil=True)
def _rehashed(hashes, slots, bits):
    size = 1 << bits
    new_hashes = np.zeros(size, np.uint64)
    new_slots = np.full(size, -1, np.int64)
    for r in range(len(slots)):
        if slots[r] >= 0:
            s = np.int64((hashes[r] * _MIX) >> np.uint64(64 - bits))
            while new_slots[s] >= 0:
                s = (s + 1) & (size - 1)
            new_hashes[s], new_slots[s] = hashes[r], slots[r]
    return new_hashes, new_slots
