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

__all__ = ["BIG", "build_table", "merge_words"]


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
def merge_words(data, char_counts, table, tok_data, meta, bits, unk):  # pragma: no cover
    """The pieces of each word (``char_counts[i]`` characters, one after the other in `data`):
    one array, how many pieces each word has (one number per word), then the ids of all pieces
    in order, then their lengths in characters. A character that is no piece has the id `unk`."""
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    start_of, order, piece_id = meta[0], meta[1], meta[2]
    longest, total = 0, 0
    for i in range(len(char_counts)):
        longest = max(longest, char_counts[i])
        total += char_counts[i]
    bounds = np.empty(longest + 1, np.int64)  # byte offset where part k starts
    chars = np.empty(longest + 1, np.int64)  # character offset where part k starts
    code = np.empty(longest + 1, np.int64)  # the piece part k is (BIG: none)
    joined = np.empty(longest + 1, np.int64)  # the piece parts k and k + 1 make (BIG: none)
    rank = np.empty(longest + 1, np.int64)  # its order (BIG: none)
    words = len(char_counts)
    res = np.empty(words + 2 * total, np.int64)  # counts, ids, lengths (trimmed at the end)
    ids = res[words : words + total]
    lens = res[words + total :]
    p, out = 0, 0
    for i in range(len(char_counts)):
        n = char_counts[i]
        for k in range(n):
            bounds[k] = p
            chars[k] = k
            p += _utf8_width(data[p])
        bounds[n] = p
        chars[n] = n
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
            shift_left(chars, j + 1, m)
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
            ids[out] = piece_id[code[k]] if code[k] != BIG else unk
            lens[out] = chars[k + 1] - chars[k]
            out += 1
        res[i] = m
    for k in range(out):  # the lengths after the ids (forward: the target starts before the source)
        res[words + out + k] = lens[k]
    return res[: words + 2 * out]
