"""tiktoken's merge loop compiled with numba (imported only when `tokviz.core.jit` says so).

The same rule as `one_chunk.bpe_parts` (lowest rank of a joined pair first, leftmost of equals,
only ranks below the limit), run natively over many pieces in one call. Tokens sit in one
open-addressing hash table (`build_table`) of rows ``(key, rank | length << 32)``: the key of up
to 8 bytes is the bytes themselves, a longer token's is a hash whose match is checked byte by byte,
so the rank of any joined slice is found exactly, as tiktoken's own loop looks it up, mostly with
one memory access. What this leaves out: choosing this path and
turning its flat output into tuples (`compiled.CompiledMerger`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .word_cache import EMPTY as CACHE_EMPTY
from .word_cache import TOO_LONG, find_row, put, regrown, table_shift, utf8_width, word_hash

__all__ = ["build_table", "byte_pair_ranks", "chunk_ids", "merge_pieces", "regrown"]

EMPTY = -1  # an empty slot
BIG = np.int64(1) << 62  # "cannot join"
_BASE = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def _hash(data, a, b):  # pragma: no cover - compiled
    """A polynomial hash of ``data[a:b]`` (mod 2**64)."""
    h = np.uint64(0)
    for k in range(a, b):
        h = h * _BASE + np.uint64(data[k]) + np.uint64(1)
    return h


@njit(cache=True, nogil=True)
def _key(data, a, b):  # pragma: no cover - compiled
    """The key of ``data[a:b]`` in the table: its bytes themselves (little-endian) when they fit
    in 8, else their hash."""
    n = b - a
    if n > 8:
        return _hash(data, a, b)
    k = np.uint64(0)
    for i in range(n):
        k |= np.uint64(data[a + i]) << np.uint64(8 * i)
    return k


@njit(cache=True, nogil=True)
def _slot(key, n, shift):  # pragma: no cover - compiled
    return np.int64(((key + np.uint64(n) * _BASE) * _MIX) >> shift)


@njit(cache=True, nogil=True)
def leftmost_lowest(ranks, n):  # pragma: no cover - compiled
    """The first place of the lowest of ``ranks[:n]``, or -1 when all are `BIG` (nothing joins)."""
    low, j = BIG, -1
    for k in range(n):
        if ranks[k] < low:
            low, j = ranks[k], k
    return j


@njit(cache=True, nogil=True)
def shift_left(a, start, stop):  # pragma: no cover - compiled
    """``a[start:stop] = a[start + 1:stop + 1]``, in place: one entry dropped from a merge's lists."""
    for k in range(start, stop):
        a[k] = a[k + 1]


@njit(cache=True, nogil=True)
def build_table(tok_data, tok_start, tok_len, tok_rank, bits):  # pragma: no cover - compiled
    """A table of ``2**bits`` rows (more than the tokens): ``(key, rank | length << 32)``
    per token, an empty row's second field `EMPTY`."""
    size = 1 << bits
    table = np.zeros((size, 2), np.int64)
    table[:, 1] = EMPTY
    shift, mask = np.uint64(64 - bits), size - 1
    for t in range(len(tok_start)):
        a, n = tok_start[t], tok_len[t]
        key = _key(tok_data, a, a + n)
        s = _slot(key, n, shift)
        while table[s, 1] != EMPTY:
            s = (s + 1) & mask
        table[s, 0] = np.int64(key)
        table[s, 1] = tok_rank[t] | (n << 32)
    return table


@njit(cache=True, nogil=True)
def slice_rank(data, a, b, table, shift, mask, tok_data, start_of):  # pragma: no cover - compiled
    """The rank of the token ``data[a:b]``, or `BIG` when it is none. A key of up to 8 bytes is
    the bytes themselves (no check needed); a longer one's bytes are compared with the token's
    (`start_of`: where each rank's bytes start in `tok_data`)."""
    n = b - a
    key = _key(data, a, b)
    k = np.int64(key)
    s = _slot(key, n, shift)
    while True:
        v = table[s, 1]
        if v == EMPTY:
            return BIG
        if table[s, 0] == k and (v >> 32) == n:
            r = v & 0xFFFFFFFF
            if n <= 8:
                return r
            c = start_of[r]
            same = True
            for i in range(n):
                if tok_data[c + i] != data[a + i]:
                    same = False
                    break
            if same:
                return r
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def byte_pair_ranks(table, bits, tok_data, start_of):  # pragma: no cover - compiled
    """The rank of each two-byte token ``[a * 256 + b]`` (`BIG` for none): a small table for the
    first round of every piece, which looks up every pair of neighbouring bytes."""
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    out = np.empty(65536, np.int64)
    pair = np.empty(2, np.uint8)
    for a in range(256):
        for b in range(256):
            pair[0], pair[1] = a, b
            out[a * 256 + b] = slice_rank(pair, 0, 2, table, shift, mask, tok_data, start_of)
    return out


@njit(cache=True, nogil=True)
def _merge_piece(data, a0, n, thr, byte_ids, pairs, table, shift, mask, tok_data, start_of, work, out,
                 o):  # pragma: no cover - compiled
    """Merge the piece ``data[a0:a0 + n]`` joining only ranks below `thr` (`work`: three rows of at
    least n + 1 scratch entries), writing its ids to ``out[o:]``: returns where they end."""
    bounds, ranks, part = work[0], work[1], work[2]  # ranks[k]: joining part k and part k + 1
    for k in range(n + 1):
        bounds[k] = a0 + k
    for k in range(n):
        part[k] = byte_ids[data[a0 + k]]
    m = n  # parts
    for k in range(n - 1):
        r = pairs[np.int64(data[a0 + k]) * 256 + data[a0 + k + 1]]
        ranks[k] = r if r < thr else BIG
    while m > 1:
        j = leftmost_lowest(ranks, m - 1)
        if j < 0:
            break
        part[j] = ranks[j]  # the joined part is the token of that rank
        shift_left(bounds, j + 1, m)  # drop bound j + 1, part j + 1 and rank j
        shift_left(part, j + 1, m - 1)
        shift_left(ranks, j, m - 2)
        m -= 1
        if j < m - 1:
            r = slice_rank(data, bounds[j], bounds[j + 2], table, shift, mask, tok_data, start_of)
            ranks[j] = r if r < thr else BIG
        if j > 0:
            r = slice_rank(data, bounds[j - 1], bounds[j + 1], table, shift, mask, tok_data, start_of)
            ranks[j - 1] = r if r < thr else BIG
    for k in range(m):
        out[o] = part[k]
        o += 1
    return o


@njit(cache=True, nogil=True)
def merge_pieces(data, starts, lens, thr, byte_ids, pairs, table, bits, tok_data, start_of):  # pragma: no cover
    """The ids of each piece ``data[starts[i]:starts[i] + lens[i]]`` joining only ranks below
    `thr` (`byte_ids`: the id of each byte, `pairs`: `byte_pair_ranks`): ``(ids, counts)``, the
    ids of all pieces one after the other and how many each piece has."""
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    longest = 0
    for i in range(len(lens)):
        longest = max(longest, lens[i])
    work = np.empty((3, longest + 1), np.int64)
    ids = np.empty(len(data), np.int64)
    counts = np.zeros(len(lens), np.int64)
    out = 0
    for i in range(len(lens)):
        end = _merge_piece(data, starts[i], lens[i], thr, byte_ids, pairs, table, shift, mask, tok_data, start_of,
                           work, ids, out)
        counts[i] = end - out
        out = end
    return ids[:out], counts


@njit(cache=True)  # holds the GIL: the cache it fills is shared by every thread encoding with the vocabulary
def chunk_ids(data, char_counts, thr, byte_ids, pairs, table, bits, tok_data, start_of,
              ctab, wstore, istore, state, work):  # pragma: no cover - compiled
    """The ids of the chunks of a text laid end to end (its UTF-8 `data`; ``char_counts[i]``
    characters each), joining only ranks below `thr`: each chunk's ids from the cache
    (`word_cache`), else a chunk that is a token below `thr` (or one byte) is that token, as in
    tiktoken, and any other is merged (`_merge_piece`) and cached while the cache has room. A chunk
    longer than `work` holds stops it (flag `TOO_LONG`)."""
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    cshift = table_shift(state)
    longest = work.shape[1] - 1
    out = np.empty(len(data), np.int32)  # a token holds one byte or more
    o, p = 0, 0
    for i in range(len(char_counts)):
        a = p
        for _ in range(char_counts[i]):
            p += utf8_width(data[p])
        n = p - a
        if n == 0:
            continue
        if n > longest:
            state[3] |= TOO_LONG
            return out[:0]
        h = word_hash(data, a, p)
        s = find_row(ctab, wstore, h, cshift, data, a, p)
        if ctab[s, 0] == CACHE_EMPTY:
            r = slice_rank(data, a, p, table, shift, mask, tok_data, start_of)
            if r != BIG and (r < thr or n == 1):  # a chunk that is a token is that token, as in tiktoken
                out[o] = r
                end = o + 1
            else:
                end = _merge_piece(data, a, n, thr, byte_ids, pairs, table, shift, mask, tok_data, start_of, work,
                                   out, o)
            put(ctab, wstore, istore, state, s, h, data, a, p, out, o, end)
            o = end
            continue
        at, c = ctab[s, 3], ctab[s, 4]  # cached
        for k in range(c):
            out[o + k] = istore[at + k]
        o += c
    return out[:o]
