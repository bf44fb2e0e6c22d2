"""SentencePiece BPE's merge by piece score, compiled with numba (imported only when
`tokviz.core.jit` says so).

The rule of `score_merge.merge_word` (the pair whose joined string is the best-scored piece first,
leftmost of equals), run natively over many words in one call. The words arrive as one UTF-8
buffer and their lengths in characters; the pieces sit in tiktoken's table
(`tokviz.core.bpe.byte_ranks.kernels.build_table`), keyed by their UTF-8 bytes, with a piece's
index as its "rank": the UTF-8 of joined characters is the join of their UTF-8, so a byte slice
is found exactly when the string is a piece. Column `code` of `meta` holds where the piece's
bytes start in `tok_data`, the order of its score (0 the highest, equal scores equal) and its id. Few
arguments and one array out: a line brings a word or two, and each costs numba a few
microseconds to pass. What this leaves out: the table's arrays and turning the flat output into
tuples (`score_compiled.CompiledScoreMerger`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tokviz.core.bpe.byte_ranks.kernels import BIG, build_table, leftmost_lowest, shift_left, slice_rank
from tokviz.core.bpe.byte_ranks.word_cache import (
    EMPTY,
    TOO_LONG,
    find_row,
    put,
    regrown,
    table_shift,
    utf8_width,
    word_hash,
)

__all__ = ["BIG", "build_table", "line_ids", "merge_words", "regrown"]


@njit(cache=True, nogil=True)
def _merge_one(data, a, n, table, shift, mask, tok_data, meta, unk, byte_ids, work, out, o):  # pragma: no cover
    """Merge the word of `n` characters whose UTF-8 starts at ``data[a]`` (`work`: four rows of
    at least n + 1 scratch entries), writing its ids to ``out[o:]``: returns where they end. A
    character that is no piece is `unk`, or with `byte_ids` (256 of them) its bytes' ids."""
    start_of, order, piece_id = meta[0], meta[1], meta[2]
    bounds, code, joined, rank = work[0], work[1], work[2], work[3]  # byte offset of part k; its piece,
    # the piece parts k and k + 1 make and that piece's order (BIG: none)
    p = a
    for k in range(n):
        bounds[k] = p
        p += utf8_width(data[p])
    bounds[n] = p
    for k in range(n):
        code[k] = slice_rank(data, bounds[k], bounds[k + 1], table, shift, mask, tok_data, start_of)
    for k in range(n - 1):
        c = slice_rank(data, bounds[k], bounds[k + 2], table, shift, mask, tok_data, start_of)
        joined[k] = c
        rank[k] = order[c] if c != BIG else BIG
    m = n
    while m > 1:
        j = leftmost_lowest(rank, m - 1)
        if j < 0:
            break
        code[j] = joined[j]
        shift_left(bounds, j + 1, m)  # drop boundary j + 1, part j + 1 and pair j
        shift_left(code, j + 1, m - 1)
        shift_left(joined, j, m - 2)
        shift_left(rank, j, m - 2)
        m -= 1
        for k in (j - 1, j):  # the pairs the new part makes with its neighbours
            if 0 <= k < m - 1:
                c = slice_rank(data, bounds[k], bounds[k + 2], table, shift, mask, tok_data, start_of)
                joined[k] = c
                rank[k] = order[c] if c != BIG else BIG
    for k in range(m):
        if code[k] != BIG:
            out[o] = piece_id[code[k]]
        elif len(byte_ids):
            for b in range(bounds[k], bounds[k + 1] - 1):
                out[o] = byte_ids[data[b]]
                o += 1
            out[o] = byte_ids[data[bounds[k + 1] - 1]]
        else:
            out[o] = unk
        o += 1
    return o


@njit(cache=True, nogil=True)
def merge_words(data, char_counts, table, tok_data, meta, bits, unk):  # pragma: no cover
    """The pieces of each word (``char_counts[i]`` characters, one after the other in `data`):
    one array, how many pieces each word has (one number per word), then the ids of all pieces
    in order. A character that is no piece has the id `unk`."""
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    longest, total = 0, 0
    for i in range(len(char_counts)):
        longest = max(longest, char_counts[i])
        total += char_counts[i]
    work = np.empty((4, longest + 1), np.int64)
    no_bytes = np.empty(0, np.int64)  # unknown characters stay `unk`
    words = len(char_counts)
    res = np.empty(words + total, np.int64)  # counts, then ids (trimmed at the end)
    p, out = 0, words
    for i in range(words):
        end = _merge_one(data, p, char_counts[i], table, shift, mask, tok_data, meta, unk, no_bytes, work, res, out)
        res[i] = end - out
        out = end
        for _ in range(char_counts[i]):
            p += utf8_width(data[p])
    return res[:out]


@njit(cache=True)  # holds the GIL: the cache it fills is shared by every thread encoding with the model
def line_ids(data, table, tok_data, meta, bits, unk, byte_ids, ctab, wstore, istore, state, work):  # pragma: no cover
    """The ids of a normalized text (its UTF-8 `data`) cut before each run of ``▁``
    (`score_merge.run_led_segments`): each part's ids from the cache (`word_cache`), else merged
    (`_merge_one`, an unknown character as `unk` or its bytes' `byte_ids`) and cached while the
    cache has room. A part longer than `work` holds stops it (flag `TOO_LONG`)."""
    nb = len(data)
    out = np.empty(nb, np.int32)  # a piece holds one byte or more
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    longest = work.shape[1] - 1
    cshift = table_shift(state)
    o, i = 0, 0
    while i < nb:
        j = i
        while _is_mark(data, j, nb):
            j += 3
        chars = (j - i) // 3
        while j < nb and not _is_mark(data, j, nb):
            if data[j] & 0xC0 != 0x80:  # a character's first byte
                chars += 1
            j += 1
        if chars > longest:
            state[3] |= TOO_LONG
            return out[:0]
        h = word_hash(data, i, j)
        s = find_row(ctab, wstore, h, cshift, data, i, j)
        if ctab[s, 0] != EMPTY:  # cached
            at, c = ctab[s, 3], ctab[s, 4]
            for k in range(c):
                out[o + k] = istore[at + k]
            o += c
        else:
            end = _merge_one(data, i, chars, table, shift, mask, tok_data, meta, unk, byte_ids, work, out, o)
            put(ctab, wstore, istore, state, s, h, data, i, j, out, o, end)
            o = end
        i = j
    return out[:o]


@njit(cache=True, nogil=True)
def _is_mark(data, j, nb):  # pragma: no cover - compiled
    """Whether ``data[j:]`` starts with ``▁`` (E2 96 81)."""
    return j + 2 < nb and data[j] == 0xE2 and data[j + 1] == 0x96 and data[j + 2] == 0x81
