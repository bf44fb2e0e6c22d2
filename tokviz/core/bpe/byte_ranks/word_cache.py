"""A cache of words' ids kept in arrays, for compiled kernels that encode a whole text in one call
(imports numba; the arrays are made and grown by `word_cache_arrays.WordCacheArrays`).

A dictionary from words to tuples costs Python a lookup, a hash of a new string and a tuple per
word; a kernel that cuts a text itself can look its words up in arrays instead: an open-addressing
table of rows ``(key, word start, word bytes, ids start, ids count)`` (the key: 31 bits of the
word's FNV-1a hash; a hit is checked byte by byte), a store of the words' bytes and one of their
ids. `state` holds the entries, the two stores' tops, flags for the caller (`ROOM`: a store or the
table is full, a word was left out; `TOO_LONG`: a word was longer than the kernel's scratch) and
the table's bits. Used by tiktoken's merge (`kernels.chunk_ids`) and SentencePiece BPE's
(`tokviz.core.formats.sentencepiece.score_kernels.line_ids`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .word_cache_arrays import EMPTY, ROOM, TOO_LONG

__all__ = ["EMPTY", "ROOM", "TOO_LONG", "find_row", "put", "regrown", "same_run", "table_shift", "utf8_width",
           "word_hash"]

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def utf8_width(lead):  # pragma: no cover - compiled
    """Bytes of the character whose UTF-8 starts with `lead` (Python's own encoding: valid)."""
    if lead < 0x80:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


@njit(cache=True, nogil=True, inline="always")
def word_hash(data, a, b):  # pragma: no cover - compiled
    """FNV-1a of ``data[a:b]``: the word's key is its top 31 bits (`key_of`), its row starts from it."""
    h = _FNV_OFFSET
    for k in range(a, b):
        h = (h ^ np.uint64(data[k])) * _FNV_PRIME
    return h


@njit(cache=True, nogil=True, inline="always")
def key_of(h):  # pragma: no cover - compiled
    return np.int32(h >> np.uint64(33))


@njit(cache=True, nogil=True, inline="always")
def same_run(store, w, data, a, n):  # pragma: no cover - compiled
    """Whether ``store[w:w + n]`` and ``data[a:a + n]`` hold the same values."""
    for k in range(n):
        if store[w + k] != data[a + k]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def find_row(ctab, wstore, h, shift, data, a, b):  # pragma: no cover - compiled
    """The row of the word ``data[a:b]`` (its hash `h`), or the empty row where it would go; a
    hit's ids are ``istore[ctab[row, 3]:][:ctab[row, 4]]`` (`shift`: `table_shift`)."""
    key = key_of(h)
    s = np.int64((h * _MIX) >> shift)
    mask = len(ctab) - 1
    n = b - a
    while ctab[s, 0] != EMPTY:
        if ctab[s, 0] == key and ctab[s, 2] == n and same_run(wstore, ctab[s, 1], data, a, n):
            break
        s = (s + 1) & mask
    return s


@njit(cache=True, nogil=True)
def table_shift(state):  # pragma: no cover - compiled
    """64 minus the table's bits, for `find_row`."""
    return np.uint64(64 - state[4])


@njit(cache=True, nogil=True)
def put(ctab, wstore, istore, state, s, h, data, a, b, ids, i, j):  # pragma: no cover - compiled
    """Cache the word ``data[a:b]`` (its hash `h`) with the ids ``ids[i:j]`` in the empty row `s`
    (from `find_row`), or flag `ROOM` when the table (kept at most half full) or a store has none."""
    n, c = b - a, j - i
    if 2 * (state[0] + 1) > len(ctab) or state[1] + n > len(wstore) or state[2] + c > len(istore):
        state[3] |= ROOM
        return
    w, at = state[1], state[2]
    for k in range(n):
        wstore[w + k] = data[a + k]
    for k in range(c):
        istore[at + k] = ids[i + k]
    ctab[s, 0], ctab[s, 1], ctab[s, 2], ctab[s, 3], ctab[s, 4] = key_of(h), w, n, at, c
    state[0] += 1
    state[1] += n
    state[2] += c


@njit(cache=True, nogil=True)
def regrown(ctab, wstore, bits):  # pragma: no cover - compiled
    """The table with ``2**bits`` rows, holding the entries of `ctab`."""
    out = np.full((1 << bits, 5), EMPTY, np.int32)
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    for r in range(len(ctab)):
        if ctab[r, 0] != EMPTY:
            s = np.int64((word_hash(wstore, ctab[r, 1], ctab[r, 1] + ctab[r, 2]) * _MIX) >> shift)
            while out[s, 0] != EMPTY:
                s = (s + 1) & mask
            out[s] = ctab[r]
    return out
