"""`CompiledScoreMerger`: `score_merge.merge_word` over many words in one compiled call
(`score_kernels`, numba).

The same ids as `merge_word`, for the models it serves (no unused pieces or
user-defined symbols, every mergeable score finite); the kernel sees only arrays built here from
those validated tables. What this leaves out: when to load it (`bpe.SpBpe`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType

import numpy as np

LONGEST = 4096  # longer words take the heap loop (the compiled loop's rounds cost length squared)
_CODEC = ("utf-8", "surrogatepass")  # a lone surrogate is a character like any other


class CompiledScoreMerger:
    """``merge_words(words)``: each word's ids, as `merge_word` gives them."""

    def __init__(self, kernels: ModuleType, keys: Mapping[str, float], ids: Mapping[str, int], unk: int) -> None:
        self._k = kernels
        pieces = list(keys)
        tokens = [p.encode(*_CODEC) for p in pieces]
        size = np.fromiter(map(len, tokens), np.int64, len(tokens))
        start = np.cumsum(size) - size
        self._tok_data = np.frombuffer(b"".join(tokens), np.uint8)
        self._bits = max(8, (len(tokens) * 5 // 4).bit_length())  # under 80% full
        self._table = kernels.build_table(self._tok_data, start, size, np.arange(len(tokens), dtype=np.int64), self._bits)
        place = {v: r for r, v in enumerate(sorted(set(keys.values()), reverse=True))}  # the highest score first
        self._meta = np.stack([start, np.fromiter((place[keys[p]] for p in pieces), np.int64, len(pieces)),
                               np.fromiter((ids[p] for p in pieces), np.int64, len(pieces))])
        self._unk = unk

    def merge_words(self, words: Sequence[str]) -> list[tuple[int, ...]]:
        """The ids of the pieces of each word (1 to `LONGEST` characters)."""
        if not words:
            return []
        n = len(words)
        res = self._k.merge_words(np.frombuffer("".join(words).encode(*_CODEC), np.uint8),
                                  np.fromiter(map(len, words), np.int64, n), self._table, self._tok_data,
                                  self._meta, self._bits, self._unk).tolist()
        ids = res[n : n + (len(res) - n) // 2]  # the lengths after them are not wanted
        out = []
        a = 0
        for count in res[:n]:  # a few words a call, mostly: a loop costs less than numpy's set-up
            b = a + count
            out.append(tuple(ids[a:b]))
            a = b
        return out
