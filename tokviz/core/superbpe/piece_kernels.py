"""The stage-1 pieces of SuperBPE's stage-2 chunks, cut and numbered compiled (imports numba; loaded
only when `tokviz.core.jit` says so).

`number_pieces` walks the chunks' code points once: it cuts each chunk as the ``gpt4`` or ``gpt2``
split would (`piece_end`, the pattern's alternatives in order, written out) and looks every piece
up among the stage-1 words (`word_table`: an open-addressing table of their FNV-1a hashes, a hit
checked code point by code point). A piece that is no word is reported (its number -1 and its
bounds), for the caller to number as a new piece. The cut only needs to be close to the split's:
SuperBPE's stage-2 start is exact for any cut of a chunk (`tokviz.core.superbpe.stage_two`); a
piece cut otherwise is merely one more new piece to merge (case-insensitive contractions know
ASCII letters only, say).

What this leaves out: the class table (`tokviz.core.text.fastsplit.class_table`: the caller gives
one with an entry for every code point the text holds), the chunks' code points and new pieces
(`tokviz.core.superbpe.pieces`), counting the chunks (`tokviz.core.superbpe.chunk_kernels`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tokviz.core.bpe.byte_ranks.word_cache import same_run, word_hash

GPT2, GPT4 = 0, 1  # `number_pieces`'s `scheme`
_L, _N, _W = 1, 2, 4  # `class_table`'s bits
_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def _cls(cps, i, table):
    return table[cps[i]]


@njit(cache=True, nogil=True)
def _lower(c):
    return c | 32 if 65 <= c <= 90 else c


@njit(cache=True, nogil=True)
def _run(cps, j, end, table, bit):
    """The end of the run of class `bit` from `j`."""
    while j < end and _cls(cps, j, table) & bit:
        j += 1
    return j


@njit(cache=True, nogil=True)
def _punct_run(cps, j, end, table):
    while j < end and _cls(cps, j, table) == 0:
        j += 1
    return j


@njit(cache=True, nogil=True)
def piece_end(cps, i, end, table, scheme):
    """Where the piece starting at `i` ends, the chunk ending at `end`: the first alternative of
    the split's pattern that matches at `i` (GPT-4: ``'(?i:[sdmt]|ll|ve|re)``, ``[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++``,
    ``\\p{N}{1,3}+``, `` ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+``, ``\\s++$``, ``\\s*[\\r\\n]``, ``\\s+(?!\\S)``, ``\\s``;
    GPT-2 the same without the case, the newlines and the limit of three digits)."""
    c = cps[i]
    k = _cls(cps, i, table)
    if c == 39 and i + 1 < end:  # a contraction
        d = cps[i + 1]
        if scheme == GPT4:
            d = _lower(d)
        if d == 115 or d == 100 or d == 109 or d == 116:  # s d m t
            return i + 2
        if i + 2 < end:
            e = cps[i + 2]
            if scheme == GPT4:
                e = _lower(e)
            if (d == 108 and e == 108) or (d == 118 and e == 101) or (d == 114 and e == 101):  # ll ve re
                return i + 3
    if scheme == GPT4:
        if k & _L:
            return _run(cps, i + 1, end, table, _L)
        if c != 10 and c != 13 and not k & _N and i + 1 < end and _cls(cps, i + 1, table) & _L:
            return _run(cps, i + 2, end, table, _L)
        if k & _N:
            j = i + 1
            while j < end and j < i + 3 and _cls(cps, j, table) & _N:
                j += 1
            return j
        j = i + 1 if c == 32 and i + 1 < end and _cls(cps, i + 1, table) == 0 else i
        if _cls(cps, j, table) == 0:
            j = _punct_run(cps, j + 1, end, table)
            while j < end and (cps[j] == 10 or cps[j] == 13):
                j += 1
            return j
        j = _run(cps, i + 1, end, table, _W)  # spaces from here on
        if j == end:
            return end
        last = -1
        for q in range(i, j):
            if cps[q] == 10 or cps[q] == 13:
                last = q
        if last >= 0:
            return last + 1
        return j - 1 if j - i >= 2 else i + 1
    j = i + 1 if c == 32 and i + 1 < end and not _cls(cps, i + 1, table) & _W else i
    kj = _cls(cps, j, table)
    if kj & _L:
        return _run(cps, j + 1, end, table, _L)
    if kj & _N:
        return _run(cps, j + 1, end, table, _N)
    if kj == 0:
        return _punct_run(cps, j + 1, end, table)
    j = _run(cps, i + 1, end, table, _W)
    if j == end:
        return end
    return j - 1 if j - i >= 2 else i + 1


@njit(cache=True, nogil=True)
def word_table(wcps, wstarts, bits):
    """The words (word w: ``wcps[wstarts[w]:wstarts[w + 1]]``, all distinct) in a table of
    ``2**bits`` rows, each (a hash, as 64 bits, its word or -1, where the word starts in `wcps`,
    its length): a probe reads one row, one cache line."""
    size = 1 << bits
    rows = np.zeros((size, 4), np.int64)
    rows[:, 1] = -1
    shift = np.uint64(64 - bits)
    for w in range(len(wstarts) - 1):
        h = word_hash(wcps, wstarts[w], wstarts[w + 1])
        s = np.int64((h * _MIX) >> shift)
        while rows[s, 1] >= 0:
            s = (s + 1) & (size - 1)
        rows[s, 0] = np.int64(h)
        rows[s, 1] = w
        rows[s, 2] = wstarts[w]
        rows[s, 3] = wstarts[w + 1] - wstarts[w]
    return rows


@njit(cache=True, nogil=True)
def _find(cps, a, b, wcps, rows, bits):
    h = word_hash(cps, a, b)
    mask = (1 << bits) - 1
    s = np.int64((h * _MIX) >> np.uint64(64 - bits))
    hh = np.int64(h)
    n = b - a
    while True:
        w = rows[s, 1]
        if w < 0:
            return -1
        if rows[s, 0] == hh and rows[s, 3] == n and same_run(wcps, rows[s, 2], cps, a, n):
            return w
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def number_pieces(cps, chunk_starts, chunk_ends, table, scheme, wcps, rows, bits):
    """The chunks ``cps[chunk_starts[c]:chunk_ends[c]]`` cut into pieces (`piece_end`), each
    piece's word number (`word_table`; -1: no word), side by side: (numbers, pieces a chunk, and for
    the pieces that are no word: their index among the numbers, their start and their end in `cps`)."""
    n = 0
    for c in range(len(chunk_starts)):
        n += chunk_ends[c] - chunk_starts[c]
    numbers = np.empty(n, np.int64)
    per_chunk = np.zeros(len(chunk_starts), np.int64)
    at = np.empty(n, np.int64)
    starts = np.empty(n, np.int64)
    stops = np.empty(n, np.int64)
    k = 0
    u = 0
    for c in range(len(chunk_starts)):
        i, end = chunk_starts[c], chunk_ends[c]
        first = k
        while i < end:
            j = piece_end(cps, i, end, table, scheme)
            w = _find(cps, i, j, wcps, rows, bits)
            numbers[k] = w
            if w < 0:
                at[u] = k
                starts[u] = i
                stops[u] = j
                u += 1
            k += 1
            i = j
        per_chunk[c] = k - first
    return numbers[:k].copy(), per_chunk, at[:u].copy(), starts[:u].copy(), stops[:u].copy()


@njit(cache=True, nogil=True)
def laid_out(numbers, seg_off, seg_flat):
    """The ids of the pieces `numbers` side by side (piece p: ``seg_flat[seg_off[p]:seg_off[p + 1]]``)."""
    n = 0
    for k in range(len(numbers)):
        n += seg_off[numbers[k] + 1] - seg_off[numbers[k]]
    out = np.empty(n, np.int64)
    o = 0
    for k in range(len(numbers)):
        for q in range(seg_off[numbers[k]], seg_off[numbers[k] + 1]):
            out[o] = seg_flat[q]
            o += 1
    return out


@njit(cache=True, nogil=True)
def may_join(numbers, inner, last_unit, first_unit, n_base, table):
    """For each boundary k between pieces ``numbers[k]`` and ``numbers[k + 1]`` with `inner[k]`:
    whether the pair of units (the left piece's last, the right piece's first) is in `table` (a
    bool a pair ``left * n_base + right``), as `Joins.may_join` asks; False elsewhere."""
    out = np.zeros(len(inner), np.bool_)
    for k in range(len(inner)):
        if inner[k]:
            out[k] = table[last_unit[numbers[k]] * n_base + first_unit[numbers[k + 1]]]
    return out
