"""Hash tables of a Unigram model's pieces for the numpy Viterbi (`batch`): each piece hashed twice
(64-bit polynomials over its code points), an open-addressing table of the first hash, and the
longest piece per two-character head.

What this leaves out: the lattices themselves (`batch`).
"""

from __future__ import annotations

import numpy as np

B1 = np.uint64(0x9E3779B97F4A7C15)
B2 = np.uint64(0xC2B2AE3D27D4EB4F)
_MIX = np.uint64(0xD6E8FEB86659FD93)  # spreads hashes over a table's slots (multiplicative hashing)


def text_code_points(s: str) -> np.ndarray:
    """The code points of `s` (uint32)."""
    return np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def joined_code_points(strings: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the code points of the strings one after the other as uint32, start of each string,
    length of each string)."""
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    starts = np.zeros(len(strings), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return text_code_points("".join(strings)), starts, lengths


def code_points(strings: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(code points + 1 as uint64, start of each string, length of each string)."""
    cps, starts, lengths = joined_code_points(strings)
    return cps.astype(np.uint64) + np.uint64(1), starts, lengths


class PieceHashes:
    """Double hashes of a lattice's pieces (a `HashIndex` of the first), and the longest piece
    per two-character head."""

    def __init__(self, ids: dict[str, int], scores: list[float]) -> None:
        pieces = list(ids)
        cps, starts, lengths = code_points(pieces)
        # longest first: the pieces with at least L characters are the first count[L]
        by_len = np.argsort(-lengths, kind="stable")
        starts, lengths = starts[by_len], lengths[by_len]
        count = np.searchsorted(-lengths, -np.arange(int(lengths.max(initial=0)) + 2), side="right")
        h1 = np.zeros(len(pieces), dtype=np.uint64)
        h2 = np.zeros(len(pieces), dtype=np.uint64)
        head1 = np.zeros(len(pieces), dtype=np.uint64)  # hash of the first two characters
        for L in range(1, len(count) - 1):
            k = int(count[L])
            c = cps[starts[:k] + (L - 1)]
            h1[:k] = h1[:k] * B1 + c
            h2[:k] = h2[:k] * B2 + c
            if L == 2:
                head1[:k] = h1[:k]
        self.h1, self.h2 = h1, h2
        pid = np.fromiter(ids.values(), dtype=np.int64, count=len(pieces))[by_len]
        self.ids = pid
        sc = np.asarray(scores, dtype=np.float64)
        self.scores = sc[pid] if len(pid) else np.zeros(0)
        self.index = HashIndex(h1)
        # no collision among pieces: each piece's hash leads back to it
        self.ok = bool(np.array_equal(self.index.lookup(h1), np.arange(len(h1))))
        multi = lengths >= 2
        hh, hl = head1[multi], lengths[multi]
        if len(hh):
            o = np.lexsort((hl, hh))
            hh, hl = hh[o], hl[o]
            last = np.r_[hh[1:] != hh[:-1], True]
            self.heads, self.head_len = hh[last], hl[last]
        else:
            self.heads, self.head_len = np.zeros(0, np.uint64), np.zeros(0, np.int64)
        self.head_index = HashIndex(self.heads)

    def find(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        """Row of each (h1, h2) in the table (`ids`, `scores`), or -1."""
        out = self.index.lookup(h1)
        hit = np.flatnonzero(out >= 0)
        out[hit[self.h2[out[hit]] != h2[hit]]] = -1
        return out


class HashIndex:
    """``HashIndex(keys).lookup(queries)``: the position in `keys` (distinct uint64) of each
    query, or -1. An open-addressing table with linear probing, at most a quarter full, built
    and searched for all keys at once: most queries take one gather, where a sorted search
    takes eighteen. Built by sorting the keys by slot: each key sits at the first free place at
    or after its slot, ``place[i] = max(slot[i], place[i-1] + 1)``, a running maximum; the
    table runs past its last slot instead of wrapping around."""

    def __init__(self, keys: np.ndarray) -> None:
        n = len(keys)
        bits = max(8, int(4 * n).bit_length())
        self.shift = np.uint64(64 - bits)
        slots = self._slot(keys)
        order = np.argsort(slots, kind="stable")
        ramp = np.arange(n, dtype=np.int64)
        place = ramp + np.maximum.accumulate(slots[order] - ramp) if n else ramp
        size = max(1 << bits, int(place[-1]) + 1 if n else 0) + 1  # one empty place past the end
        self.keys = np.zeros(size, dtype=np.uint64)
        self.rows = np.full(size, -1, dtype=np.int32 if n < 2**31 else np.int64)
        self.keys[place] = keys[order]
        self.rows[place] = order
        self.probes = int((place - slots[order]).max(initial=0))  # the farthest a key sits from its slot

    def _slot(self, h: np.ndarray) -> np.ndarray:
        return ((h * _MIX) >> self.shift).astype(np.int64)

    def lookup(self, q: np.ndarray) -> np.ndarray:
        pos = self._slot(q)
        rows = self.rows[pos]
        hit = self.keys[pos] == q
        out = np.where(hit, rows, -1)  # an empty place holds row -1 (and key 0)
        idx = np.flatnonzero((rows >= 0) > hit)  # an occupied place with another key: probe on
        pos = pos[idx]
        for _ in range(self.probes):
            if not len(idx):
                break
            pos += 1
            rows = self.rows[pos]
            hit = self.keys[pos] == q[idx]
            out[idx[hit]] = rows[hit]
            more = (rows >= 0) > hit
            idx, pos = idx[more], pos[more]
        return out
