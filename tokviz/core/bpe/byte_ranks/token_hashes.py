"""`TokenHashes`: which joined pairs of ids cannot be a token, told by numpy without building their bytes.

Every id gets a polynomial hash of its bytes (mod 2**64) and the power of the base its length
gives, so the hash of two ids' joined bytes is ``h[a] * p[b] + h[b]``. A joined pair whose hash is
no token's hash is no token; one whose hash is a token's is looked up in the ``{bytes: rank}``
dict (a rare collision then just costs that lookup). Most pairs a merge loop meets are no token.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_BASE = 0x100000001B3  # odd: the hash of a byte string is a polynomial in it, mod 2**64
_MOD = 1 << 64


class TokenHashes:
    """``may_be_token(left, right)``: False where the joined bytes of ids `left`, `right` are surely no token."""

    def __init__(self, vocab: Sequence[bytes | None]) -> None:
        toks = [t or b"" for t in vocab]
        lens = np.fromiter(map(len, toks), np.int64, len(toks))
        data = np.frombuffer(b"".join(toks), np.uint8).astype(np.uint64) + np.uint64(1)
        starts = np.cumsum(lens) - lens
        powers, p = [], 1
        for _ in range(int(lens.max(initial=0)) + 1):
            powers.append(p)
            p = p * _BASE % _MOD
        power = np.array(powers, np.uint64)
        # h = sum of byte k times base ** (len - 1 - k), all bytes at once, summed per token (mod 2**64)
        ends = np.repeat(starts + lens, lens)
        weighted = data * power[ends - 1 - np.arange(len(data))]
        h = np.zeros(len(toks), np.uint64)
        used = np.flatnonzero(lens > 0)
        if len(used):
            h[used] = np.add.reduceat(weighted, starts[used])
        self._hash = h
        self._power = power[lens]
        # for searchsorted: every id with bytes (a special token's too: a pair that joins into one
        # only costs its dict lookup)
        self._tokens = np.sort(h[used])

    def may_be_token(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        joined = self._hash[left] * self._power[right] + self._hash[right]
        tokens = self._tokens
        pos = np.minimum(np.searchsorted(tokens, joined), len(tokens) - 1)
        return tokens[pos] == joined
