"""`WordCacheArrays`: the arrays of a compiled kernel's word cache (`word_cache`), made, grown and
started over here, between the kernel's calls.

The kernel holds the GIL, so no two calls run at once; but a thread may fetch `arrays`, and another
one replace them, before the first one's call. So the arrays are never changed in place here: room
is made in new arrays, swapped in whole, and a call on the old ones only fills a cache no longer
used. What this leaves out: the lookups and the merging (the kernels).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

EMPTY = -1  # an empty row's key
ROOM, TOO_LONG = 1, 2  # flags a kernel leaves in ``state[3]``: make room; a word was too long for it
FIRST_BITS = 12  # the first table: 4,096 rows, room for 2,048 words
ENTRIES = 200_000  # words kept at most (then the cache starts over: bounded memory)
STORE_BYTES = 64 << 20  # and bytes in its two stores at most (200,000 words of 4 KB would be 800 MB)


class WordCacheArrays:
    """``arrays``: (table, word bytes, ids, state) to pass a kernel; `after` reads its flags.

    `kernels`: a module with the cache's `regrown`; `longest`: the
    bytes of the longest word the kernel caches (its ids are as many at most); `entries` and
    `store_bytes`: the words kept and their stores' bytes at most."""

    def __init__(self, kernels: ModuleType, longest: int, *, entries: int = ENTRIES, first_bits: int = FIRST_BITS,
                 store_bytes: int = STORE_BYTES):
        self._k = kernels
        self._room = longest + 1
        self._entries, self._first_bits, self._store_bytes = entries, first_bits, store_bytes
        self.arrays = self._fresh()

    def _fresh(self) -> tuple[np.ndarray, ...]:
        bits = self._first_bits
        state = np.zeros(5, np.int64)
        state[4] = bits
        return (np.full((1 << bits, 5), EMPTY, np.int32), np.empty(32 << bits, np.uint8),
                np.empty(8 << bits, np.int32), state)

    def after(self, arrays: tuple[np.ndarray, ...]) -> bool:
        """After a kernel's call on `arrays`: make room if it asked (new arrays); whether it
        stopped at a word too long for it (the caller then takes another path)."""
        state = arrays[3]
        flags = int(state[3])
        if not flags:
            return False
        state[3] = 0
        if flags & ROOM:
            self.arrays = self._roomier(arrays)
        return bool(flags & TOO_LONG)

    def _roomier(self, arrays: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        """A copy of `arrays` with room for the next words (twice the table or a store that is
        full), or empty arrays once they hold `entries` words or `store_bytes` bytes."""
        table, words, ids, state = arrays
        entries, w_top, i_top, _, bits = state.tolist()
        if entries >= self._entries or w_top + 4 * i_top >= self._store_bytes:
            return self._fresh()
        if 2 * (entries + 1) > len(table):
            bits += 1
            table = self._k.regrown(table, words, bits)
        else:
            table = table.copy()
        state = np.array([entries, w_top, i_top, 0, bits], np.int64)
        return table, _copied(words, w_top, self._room), _copied(ids, i_top, self._room), state


def _copied(store: np.ndarray, top: int, room: int) -> np.ndarray:
    """A new array holding ``store[:top]``, as long as `store`, or twice when fewer than `room`
    entries would be left after `top`."""
    n = len(store)
    while top + room > n:
        n *= 2
    out = np.empty(n, store.dtype)
    out[:top] = store[:top]
    return out
