"""A trie over code points kept as one open-addressing hash table, for compiled kernels (imports numba).

The child of node ``v`` by code point ``c`` is stored under the key ``v << 21 | c`` (exact: code
points take 21 bits, so there are no collisions to resolve, only probing); a row is ``(key,
child)``, an empty slot's key is `EMPTY`. `find_slot` finds a key's slot (or the empty slot where it
goes); `rehash` moves the rows to a bigger table. Used by the SentencePiece Viterbi
(`tokviz.core.unigram.encoder.kernels`) and the Unigram trainer's substring numbering
(`tokviz.core.unigram.kernels`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

EMPTY = -1  # an empty slot's key
MIX = np.uint64(0x9E3779B97F4A7C15)
SHIFT = 21  # code points take 21 bits


@njit(cache=True, nogil=True)
def find_slot(table, key, shift, mask):  # pragma: no cover - compiled
    """The slot holding `key` in `table` (rows ``(key, child)``), or the empty slot where it goes
    (`shift`: 64 minus the table's bits; `mask`: its size minus 1)."""
    s = np.int64((np.uint64(key) * MIX) >> shift)
    while table[s, 0] != key and table[s, 0] != EMPTY:
        s = (s + 1) & mask
    return s


@njit(cache=True, nogil=True)
def rehash(table, bits):  # pragma: no cover - compiled
    """`table`'s rows in a table of ``2**bits`` rows."""
    size = 1 << bits
    out = np.full((size, 2), EMPTY, dtype=np.int64)
    shift, mask = np.uint64(64 - bits), size - 1
    for r in range(len(table)):
        if table[r, 0] != EMPTY:
            s = find_slot(out, table[r, 0], shift, mask)
            out[s, 0] = table[r, 0]
            out[s, 1] = table[r, 1]
    return out
