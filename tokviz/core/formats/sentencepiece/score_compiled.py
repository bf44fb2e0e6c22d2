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
import regex

from tokviz.core.bpe.byte_ranks.word_cache_arrays import ENTRIES, FIRST_BITS, WordCacheArrays
from tokviz.core.formats.sentencepiece.score_merge import MARK
from tokviz.core.text.chunks import safe_slices

LONGEST = 4096  # longer words take the heap loop (the compiled loop's rounds cost length squared)
_CODEC = ("utf-8", "surrogatepass")  # a lone surrogate is a character like any other
LINE_LONGEST = 1024  # `line_ids` merges words of up to this many characters (a text with a longer one: None)
CALL_CHARS = 32_768  # a longer text is cut into pieces of about this many for `line_ids`'s calls
_RUN_START = regex.compile(f"(?<!{MARK}){MARK}")  # a mark that starts a run of marks


def run_led_pieces(s: str, size: int) -> list[str]:
    """`s` cut into pieces of about `size` characters (`safe_slices`), each cut where a run of ``▁``
    starts (where `score_merge.run_led_segments` starts a part anyway: the pieces' parts are the text's).

    >>> run_led_pieces("ab\u2581\u2581cd\u2581e\u2581f", 3)
    ['ab\u2581\u2581cd', '\u2581e\u2581f']
    """
    return [s[a:b] for a, b in safe_slices(s, 0, len(s), size, _RUN_START)]


class CompiledScoreMerger:
    """``merge_words(words)``: each word's ids, as `merge_word` gives them."""

    def __init__(self, kernels: ModuleType, keys: Mapping[str, float], ids: Mapping[str, int], unk: int,
                 byte_ids: Sequence[int] | None = None, *, line_entries: int = ENTRIES,
                 first_bits: int = FIRST_BITS) -> None:
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
        self._byte_ids = np.asarray(byte_ids if byte_ids is not None else [], np.int64)  # `line_ids`'s fallback
        # `line_ids`'s caches: with the byte fallback applied, and raw (unknown characters as `unk`)
        self._caches = {raw: WordCacheArrays(kernels, 4 * LINE_LONGEST, entries=line_entries, first_bits=first_bits)
                        for raw in (False, True)}
        self._no_bytes = np.empty(0, np.int64)
        self._work = np.empty((4, LINE_LONGEST + 1), np.int64)  # `line_ids`'s scratch (it holds the GIL)

    def merge_words(self, words: Sequence[str]) -> list[tuple[int, ...]]:
        """The ids of the pieces of each word (1 to `LONGEST` characters)."""
        if not words:
            return []
        n = len(words)
        res = self._k.merge_words(np.frombuffer("".join(words).encode(*_CODEC), np.uint8),
                                  np.fromiter(map(len, words), np.int64, n), self._table, self._tok_data,
                                  self._meta, self._bits, self._unk).tolist()
        ids = res[n:]
        out = []
        a = 0
        for count in res[:n]:  # a few words a call, mostly: a loop costs less than numpy's set-up
            b = a + count
            out.append(tuple(ids[a:b]))
            a = b
        return out

    def line_ids(self, s: str, *, raw: bool = False) -> list[int] | None:
        """The ids of the normalized text `s` cut before each run of ``▁``, each part merged as
        `merge_words` merges it (with `byte_ids` and not `raw`, an unknown character is its bytes'
        ids), in one call that keeps the parts' ids in a cache of arrays (`WordCacheArrays`: a line costs a
        microsecond or two, not a dictionary lookup, tuple and list per word), a long text in calls
        of about `CALL_CHARS` (the kernel holds the GIL); None when a part is longer than
        `LINE_LONGEST` characters or `s` holds a lone surrogate (no bytes to fall back to)."""
        if len(s) <= CALL_CHARS:
            return self._call(s, raw)
        out: list[int] = []
        for piece in run_led_pieces(s, CALL_CHARS):
            ids = self._call(piece, raw)
            if ids is None:
                return None
            out += ids
        return out

    def _call(self, s: str, raw: bool) -> list[int] | None:
        """`line_ids` in one kernel call."""
        try:
            data = s.encode("utf-8")
        except UnicodeEncodeError:
            return None
        cache = self._caches[raw]
        arrays = cache.arrays
        out = self._k.line_ids(data, self._table, self._tok_data, self._meta, self._bits, self._unk,
                               self._no_bytes if raw else self._byte_ids, *arrays, self._work)
        if arrays[3][3] and cache.after(arrays):  # (flags: asked a line in seventy)
            return None
        return out.tolist()
