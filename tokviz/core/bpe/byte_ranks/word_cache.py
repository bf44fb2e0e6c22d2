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

__all__ = ["ROOM", "TOO_LONG", "lookup", "put", "regrown", "table_shift", "utf8_width"]

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
def _word_hash(data, a, b):  # pragma: no cover - compiled
    """FNV-1a of ``data[a:b]``."""
    h = _FNV_OFFSET
    for k in range(a, b):
        h = (h ^ np.uint64(data[k])) * _FNV_PRIME
    return h


@njit(cache=True, nogil=True, inline="always")
def _same(store, w, data, a, n):  # pragma: no cover - compiled
    for k in range(n):
        if store[w + k] != data[a + k]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def find(ctab, wstore, shift, data, a, b):  # pragma: no cover - compiled
    """The row of the word ``data[a:b]``, or the empty row where it would go: ``(row, key)``
    (`shift`: 64 minus the table's bits, `table_shift`)."""
    h = _word_hash(data, a, b)
    key = np.int32(h >> np.uint64(33))
    s = np.int64((h * _MIX) >> shift)
    mask = len(ctab) - 1
    n = b - a
    while ctab[s, 0] != EMPTY:
        if ctab[s, 0] == key and ctab[s, 2] == n and _same(wstore, ctab[s, 1], data, a, n):
            break
        s = (s + 1) & mask
    return s, key


@njit(cache=True, nogil=True, inline="always")
def lookup(ctab, wstore, istore, shift, data, a, b, out, o):  # pragma: no cover - compiled
    """Write the cached ids of the word ``data[a:b]`` to ``out[o:]``: ``(row, key, where they end)``,
    the end -1 when the word is not cached (the row and key then say where `put` caches it)."""
    s, key = find(ctab, wstore, shift, data, a, b)
    if ctab[s, 0] == EMPTY:
        return s, key, -1
    return s, key, copy_hit(ctab, istore, s, out, o)


@njit(cache=True, nogil=True)
def table_shift(state):  # pragma: no cover - compiled
    """64 minus the table's bits, for `find`."""
    return np.uint64(64 - state[4])


@njit(cache=True, nogil=True, inline="always")
def copy_hit(ctab, istore, s, out, o):  # pragma: no cover - compiled
    """Write the ids of row `s` to ``out[o:]``: returns where they end."""
    a, c = ctab[s, 3], ctab[s, 4]
    for k in range(c):
        out[o + k] = istore[a + k]
    return o + c


@njit(cache=True, nogil=True)
def put(ctab, wstore, istore, state, s, key, data, a, b, ids, i, j):  # pragma: no cover - compiled
    """Cache the word ``data[a:b]`` with the ids ``ids[i:j]`` in the empty row `s` (from `find`),
    or flag `ROOM` when the table (kept at most half full) or a store has none."""
    n, c = b - a, j - i
    if 2 * (state[0] + 1) > len(ctab) or state[1] + n > len(wstore) or state[2] + c > len(istore):
        state[3] |= ROOM
        return
    w, at = state[1], state[2]
    for k in range(n):
        wstore[w + k] = data[a + k]
    for k in range(c):
        istore[at + k] = ids[i + k]
    ctab[s, 0], ctab[s, 1], ctab[s, 2], ctab[s, 3], ctab[s, 4] = key, w, n, at, c
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
            s = np.int64((_word_hash(wstore, ctab[r, 1], ctab[r, 1] + ctab[r, 2]) * _MIX) >> shift)
            while out[s, 0] != EMPTY:
                s = (s + 1) & mask
            out[s] = ctab[r]
    return out
