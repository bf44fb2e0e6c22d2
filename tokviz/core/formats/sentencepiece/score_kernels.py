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

__all__ = ["BIG", "EMPTY", "build_table", "line_ids", "merge_words", "regrown"]


@njit(cache=True, nogil=True)
def _utf8_width(lead):  # pragma: no cover - compiled
    """Bytes of the character whose UTF-8 starts with `lead` (Python's own encoding: valid)."""
    if lead < 0x80:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


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
        p += _utf8_width(data[p])
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
            p += _utf8_width(data[p])
    return res[:out]


# the line cache (`line_ids`): rows (key, word start, word bytes, ids start, ids count) of an open-addressing
# table, the words' UTF-8 in one store and their ids in another; `state`: entries, the two stores' tops,
# flags (1: a store or the table wants more room, 2: a word was too long for `work`), the table's bits
EMPTY = -1
_ROOM, _TOO_LONG = 1, 2
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def _word_hash(data, a, b):  # pragma: no cover - compiled
    """FNV-1a of ``data[a:b]``."""
    h = _FNV_OFFSET
    for k in range(a, b):
        h = (h ^ np.uint64(data[k])) * _FNV_PRIME
    return h


@njit(cache=True, nogil=True)
def _is_mark(data, j, nb):  # pragma: no cover - compiled
    """Whether ``data[j:]`` starts with ``▁`` (E2 96 81)."""
    return j + 2 < nb and data[j] == 0xE2 and data[j + 1] == 0x96 and data[j + 2] == 0x81


@njit(cache=True, nogil=True)
def _same(store, w, data, a, n):  # pragma: no cover - compiled
    for k in range(n):
        if store[w + k] != data[a + k]:
            return False
    return True


@njit(cache=True)  # holds the GIL: the cache it fills is shared by every thread encoding with the model
def line_ids(data, table, tok_data, meta, bits, unk, byte_ids, ctab, wstore, istore, state, work):  # pragma: no cover
    """The ids of a normalized text (its UTF-8 `data`) cut before each run of ``▁``
    (`score_merge.run_led_segments`): each part's ids from the cache, else merged (`_merge_one`, an
    unknown character as `unk` or its bytes' `byte_ids`) and cached while the cache has room (else
    flag 1, and the caller makes room). A part longer than `work` holds stops it (flag 2: the
    caller takes another path)."""
    nb = len(data)
    out = np.empty(nb, np.int32)  # a piece holds one byte or more
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    cshift, cmask = np.uint64(64 - state[4]), (1 << state[4]) - 1
    longest = work.shape[1] - 1
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
            state[3] |= _TOO_LONG
            return out[:0]
        size = j - i
        h = _word_hash(data, i, j)
        key = np.int32(h >> np.uint64(33))
        s = np.int64((h * _MIX) >> cshift)
        while ctab[s, 0] != EMPTY and not (ctab[s, 0] == key and ctab[s, 2] == size
                                           and _same(wstore, ctab[s, 1], data, i, size)):
            s = (s + 1) & cmask
        if ctab[s, 0] != EMPTY:  # cached
            a, c = ctab[s, 3], ctab[s, 4]
            for k in range(c):
                out[o + k] = istore[a + k]
            o += c
        else:
            end = _merge_one(data, i, chars, table, shift, mask, tok_data, meta, unk, byte_ids, work, out, o)
            c = end - o
            if 2 * (state[0] + 1) <= len(ctab) and state[1] + size <= len(wstore) and state[2] + c <= len(istore):
                w, a = state[1], state[2]
                for k in range(size):
                    wstore[w + k] = data[i + k]
                for k in range(c):
                    istore[a + k] = out[o + k]
                ctab[s, 0], ctab[s, 1], ctab[s, 2], ctab[s, 3], ctab[s, 4] = key, w, size, a, c
                state[0] += 1
                state[1] += size
                state[2] += c
            else:
                state[3] |= _ROOM
            o = end
        i = j
    return out[:o]


@njit(cache=True, nogil=True)
def regrown(ctab, wstore, bits):  # pragma: no cover - compiled
    """`line_ids`'s table with ``2**bits`` rows, holding the entries of `ctab`."""
    out = np.full((1 << bits, 5), EMPTY, np.int32)
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    for r in range(len(ctab)):
        if ctab[r, 0] != EMPTY:
            s = np.int64((_word_hash(wstore, ctab[r, 1], ctab[r, 1] + ctab[r, 2]) * _MIX) >> shift)
            while out[s, 0] != EMPTY:
                s = (s + 1) & mask
            out[s] = ctab[r]
    return out
