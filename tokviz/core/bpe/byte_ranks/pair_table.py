"""`PairTable`: an open-addressing hash table from a pair of ids to the rank of their join, in numpy.

A pair ``(a, b)`` is the key ``a * n + b``; a missing pair's rank is asked of a callback once (the
``{bytes: rank}`` dict on the joined bytes) and kept. Lookups and insertions are vectorised: a
round of probes over every still unresolved key at once (linear probing, half full at most).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

_EMPTY = -1
MAX_KEYS = 1 << 20  # a fuller table starts over (bounded memory: 2**21 slots, 32 MB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing


class PairTable:
    """``lookup(keys) -> ranks`` for int64 keys ``a * n + b``; `missing(keys)` gives the ranks of
    keys never seen (ints, one per key)."""

    def __init__(self, missing: Callable[[np.ndarray], Sequence[int]], *, bits: int = 18) -> None:
        self._missing = missing
        self._alloc(bits)
        self._count = 0

    def __len__(self) -> int:
        """How many keys the table holds (at most `MAX_KEYS`: a fuller table starts over)."""
        return self._count

    def _alloc(self, bits: int) -> None:
        self._bits = bits
        self._mask = (1 << bits) - 1
        self._keys = np.full(1 << bits, _EMPTY, np.int64)
        self._vals = np.zeros(1 << bits, np.int64)

    def _slots(self, keys: np.ndarray) -> np.ndarray:
        return ((keys.astype(np.uint64) * _GOLDEN) >> np.uint64(64 - self._bits)).astype(np.int64)

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """The rank of each key (int64 array of the same length)."""
        out = np.empty(len(keys), np.int64)
        idx = np.arange(len(keys))
        q = keys
        h = self._slots(q)
        tab_keys, tab_vals, mask = self._keys, self._vals, self._mask
        absent = []
        while len(idx):
            k = tab_keys[h]
            found = k == q
            out[idx[found]] = tab_vals[h[found]]
            empty = k == _EMPTY
            if empty.any():
                absent.append(idx[empty])
            rest = ~(found | empty)
            idx, q, h = idx[rest], q[rest], (h[rest] + 1) & mask
        if absent:
            where = np.concatenate(absent)
            new, inverse = np.unique(keys[where], return_inverse=True)
            vals = np.array(self._missing(new), np.int64)
            out[where] = vals[inverse.reshape(-1)]
            self._insert(new, vals)
        return out

    def _insert(self, keys: np.ndarray, vals: np.ndarray) -> None:
        """Add distinct keys that are not in the table."""
        if self._count + len(keys) > MAX_KEYS:
            self._alloc(self._bits)
            self._count = 0
        if 2 * (self._count + len(keys)) > len(self._keys):
            old_keys, old_vals = self._keys, self._vals
            used = old_keys != _EMPTY
            bits = self._bits
            while 2 * (self._count + len(keys)) > (1 << bits):
                bits += 1
            self._alloc(bits)
            self._count = 0
            self._insert(old_keys[used], old_vals[used])
        self._count += len(keys)
        h = self._slots(keys)
        tab_keys, tab_vals, mask = self._keys, self._vals, self._mask
        while len(keys):
            free = np.flatnonzero(tab_keys[h] == _EMPTY)
            tab_keys[h[free]] = keys[free]  # of keys aiming at one free slot, one lands (the last)
            landed = free[tab_keys[h[free]] == keys[free]]
            tab_vals[h[landed]] = vals[landed]
            rest = np.ones(len(keys), bool)
            rest[landed] = False
            keys, vals, h = keys[rest], vals[rest], (h[rest] + 1) & mask
