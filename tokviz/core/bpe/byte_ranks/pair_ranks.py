"""`PairRanks`: the rank of joining two ids, for the pairs a merge table has not seen yet, and the
ids shared with the ``{bytes: rank}`` dict (`shared_ids`).

A pair's rank is that of its joined bytes in the dict (``big`` where they are no token). Looking
the joined bytes up costs about 0.4 µs a pair; `TokenHashes` rules most pairs out first, a third
faster a pair, but hashing every token costs about what two lookups a token do (0.03 s for cl100k,
0.05 s for o200k). So the first pairs are looked up as they come, and the hashes are made once a
table has asked for twice as many pairs as the vocabulary has tokens: a megabyte of udhr2 asks for
45,000-60,000 a half, and never pays for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import add

import numpy as np

from .token_hashes import TokenHashes

HASHES_AFTER = 2  # pairs looked up without hashes, per token of the vocabulary, before they are made
_SLICE = 4096  # pairs looked up per C call


class PairRanks:
    """``ranks(keys)`` for int64 keys ``left * n + right``: an int64 array of ranks (``big`` where the
    joined bytes are no token). Holds the dict and the vocabulary, never its caller (no cycle)."""

    def __init__(self, enc: Mapping[bytes, int], vocab: Sequence[bytes | None], big: int) -> None:
        self._get, self._at = enc.get, vocab.__getitem__
        self._vocab, self._n, self._big = vocab, len(vocab), big
        self._hashes: TokenHashes | None = None
        self._plain = 0  # pairs looked up without the hashes so far

    @property
    def hashed(self) -> bool:
        """Whether the tokens' hashes are made (they rule pairs out before the dict is asked)."""
        return self._hashes is not None

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        big = self._big
        out = np.full(len(keys), big, np.int64)
        left, right = np.divmod(keys, self._n)
        if self._hashes is None and self._plain + len(keys) > HASHES_AFTER * self._n:
            self._hashes = TokenHashes(self._vocab)
        if self._hashes is not None:
            where = np.flatnonzero(self._hashes.may_be_token(left, right))  # the others are no token
            left, right = left[where], right[where]
        else:
            self._plain += len(keys)
            where = slice(None)
        lefts, rights = left.tolist(), right.tolist()
        at, get = self._at, self._get
        ranks: list[int] = []
        for i in range(0, len(lefts), _SLICE):  # one C call holds the GIL: keep each short
            joined = map(add, map(at, lefts[i : i + _SLICE]), map(at, rights[i : i + _SLICE]))
            ranks.extend(map(get, joined, repeat(big)))
        out[where] = ranks
        return out


def byte_pair_ranks(enc: Mapping[bytes, int], big: int) -> np.ndarray:
    """The rank of joining byte ``a`` and byte ``b`` at ``a * 256 + b``, for all 65,536 pairs
    (``big`` where the two bytes are no token): the dict's 2-byte tokens (a few thousand) put in
    place, rather than 65,536 lookups."""
    two = [t for t in enc if len(t) == 2]
    table = np.full(1 << 16, big, np.int64)
    table[[t[0] << 8 | t[1] for t in two]] = list(map(enc.__getitem__, two))
    return table


def shared_ids(enc: Mapping[bytes, int], n: int) -> list[int]:
    """``list(range(n))`` holding the dict's own int objects, so that tuples of ids made from it
    hold no new copy of each id (509,000 ids were 16 MB); a dict whose ranks run from 0 in order
    (OpenAI's files) gives them as they come."""
    ranks = list(enc.values())
    if len(ranks) == n and ranks == list(range(n)):
        return ranks
    shared = list(range(n))
    for r in ranks:
        shared[r] = r
    return shared
