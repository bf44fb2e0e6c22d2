"""The arrays the compiled WordPiece trainer works on (`tokviz.core.wordpiece.kernels`): what each
row, column and slot holds, building them from a corpus with numpy, and growing them.

A token occupies the characters ``[p, p + length)`` of the words laid end to end and lives at its
first character ``p``. Per position (rows of `pos`): the token starting there (-1 inside a token),
the next and previous token starts in its word (-1 at the word's ends) and the word's weight. Per
token (a row of `toks`): its weighted count and the heads of two lists of the pairs holding it, on
the left and on the right. Per pair (a row of `pairs`): left and right token, weighted count, its
occurrences ``pool[start:end]`` (ascending: all are made in the step that makes its newer token,
so the list only goes stale, never grows), the index of the first that may still be live, its
place in `live`, and the next pair in each of its tokens' lists. A pair's key ``a << 32 | b``
finds its row through an open-addressing `table` (`tokviz.core.text.trie_table`). The pairs whose
count reaches the minimum are listed in `live` (pair, first live occurrence), with their float
scores in `scores`, in no order. `meta` holds the sizes and settings. Links, heads and places are
stored plus one, so that 0 (what new rows are filled with) means none.

Building them needs no numba, so a caller can build them while numba imports.
What this leaves out: the merge loop (`kernels`), the trainer around it (`compiled`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .corpus import CONTINUATION

# rows of `pos`
TOK, NXT, PRV, WT = 0, 1, 2, 3
# columns of `toks`
T_COUNT, T_LEFTS, T_RIGHTS = 0, 1, 2
TOK_COLUMNS = 3
# columns of `pairs`
LEFT, RIGHT, COUNT, START, END, FIRST, LIVE_AT, NEXT_LEFT, NEXT_RIGHT = range(9)
PAIR_COLUMNS = 9
# columns of `live`
L_PAIR, L_FIRST = 0, 1
LIVE_COLUMNS = 2
# slots of `meta`: sizes, the settings, the room a merge asked for, the tokens the last merge changed
N_PAIRS, POOL_USED, N_TOKENS, N_LIVE, MIN_COUNT, TABLE_BITS, ROOM, LAST_LEFT, LAST_RIGHT = range(9)
META_SLOTS = 9
# columns of a step's candidate rows
C_LEFT, C_RIGHT, C_COUNT, C_LEFT_COUNT, C_RIGHT_COUNT, C_POS = range(6)
DONE, GROW = 0, 1  # the merge loop stopped for want of pairs or steps, or for want of room
COUNT_LIMIT = 1 << 31  # counts and ids stay below this (the kernels' exact products need it)
FIRST_PAIRS = 1 << 16  # room for this many pairs at first
LOOKUP_MAX = 1 << 17  # characters below this find their ids in a table by code point, others by sorting


def _ids_of_characters(joined: str, first: np.ndarray, index: dict[str, int]) -> np.ndarray:
    """The base id of every character of `joined`: plain where `first` (a word's first character),
    else its ``##`` form (`ValueError` for a character `index` lacks)."""
    codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    ids = np.full(len(codes), -1, dtype=np.int64)
    for is_first, prefix in ((True, ""), (False, CONTINUATION)):
        where = np.flatnonzero(first == is_first)
        if not len(where):
            continue
        these = codes[where]
        top = int(these.max())
        if top < LOOKUP_MAX:  # a table by code point: no sort
            present = np.zeros(top + 1, dtype=bool)
            present[these] = True
            distinct = np.flatnonzero(present)
            lut = np.full(top + 1, -1, dtype=np.int64)
            lut[distinct] = [index.get(prefix + chr(c), -1) for c in distinct.tolist()]
            ids[where] = lut[these]
        else:
            distinct, inverse = np.unique(these, return_inverse=True)
            lut = np.array([index.get(prefix + chr(c), -1) for c in distinct.tolist()], dtype=np.int64)
            ids[where] = lut[inverse]
    if len(ids) and ids.min() < 0:
        raise ValueError(f"character {joined[int(np.flatnonzero(ids < 0)[0])]!r} is missing from the base symbols")
    return ids


@dataclass
class TrainerArrays:
    """Everything the kernels read and write (module doc); `starts` and `length` for the records."""

    pos: np.ndarray
    toks: np.ndarray
    pairs: np.ndarray
    pool: np.ndarray
    table: np.ndarray
    live: np.ndarray
    scores: np.ndarray
    meta: np.ndarray
    starts: list[int]  # each word's first position
    length: int  # the weighted number of characters

    @classmethod
    def build(cls, words: Sequence[str], weights: Sequence[int], symbols: Sequence[str],
              min_count: int) -> TrainerArrays:
        """The arrays of `words` before any merge, with room for an occurrence of a pair at every
        position; the counts, the pairs (growing their arrays) and the live list are made by the
        kernels' ``set_up``."""
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        ends = np.cumsum(lengths)
        wts = np.asarray(weights, dtype=np.int64)
        n = int(ends[-1]) if len(words) else 0
        word_starts = ends - lengths
        first = np.zeros(n, dtype=bool)
        first[word_starts[lengths > 0]] = True
        last = np.zeros(n, dtype=bool)
        last[ends[lengths > 0] - 1] = True
        positions = np.arange(n, dtype=np.int64)
        pos = np.stack([
            _ids_of_characters("".join(words), first, {s: i for i, s in enumerate(symbols)}),
            np.where(last, -1, positions + 1),
            np.where(first, -1, positions - 1),
            np.repeat(wts, lengths),
        ])
        room = max(16, min(n, len(symbols) ** 2, FIRST_PAIRS))  # the kernels' set-up grows it if need be
        bits = max(4, (2 * room).bit_length())
        meta = np.zeros(META_SLOTS, dtype=np.int64)
        meta[N_TOKENS] = len(symbols)
        meta[MIN_COUNT] = min_count
        meta[TABLE_BITS] = bits
        meta[LAST_LEFT] = meta[LAST_RIGHT] = -1
        return cls(pos, np.zeros((len(symbols) + 64, TOK_COLUMNS), dtype=np.int64),
                   np.zeros((room, PAIR_COLUMNS), dtype=np.int64),
                   np.zeros(max(16, n), dtype=np.int64), np.full((1 << bits, 2), -1, dtype=np.int64),
                   np.zeros((0, LIVE_COLUMNS), dtype=np.int64), np.zeros(0, dtype=np.float64), meta,
                   word_starts.tolist(), int(np.dot(lengths, wts)) if len(words) else 0)

    def grow(self, rehash) -> None:
        """Room in every array for the merge the kernels stopped before (``meta[ROOM]`` new pairs
        and occurrences), at least doubling what is too small; `rehash`: the kernels' table rehash."""
        meta = self.meta
        room = int(meta[ROOM])
        if meta[N_PAIRS] + room > len(self.pairs):
            self.pairs = _wider(self.pairs, int(meta[N_PAIRS]) + room)
        if meta[POOL_USED] + room > len(self.pool):
            self.pool = _wider(self.pool, int(meta[POOL_USED]) + room)
        if meta[N_LIVE] + room > len(self.live):
            self.live = _wider(self.live, int(meta[N_LIVE]) + room)
            self.scores = _wider(self.scores, len(self.live))
        if meta[N_TOKENS] >= len(self.toks):
            self.toks = _wider(self.toks, int(meta[N_TOKENS]) + 1)
        bits = int(meta[TABLE_BITS])
        while (1 << bits) < 2 * (int(meta[N_PAIRS]) + room):  # at most half full
            bits += 1
        if bits != meta[TABLE_BITS]:
            self.table = rehash(self.table, bits + 1)  # (a size to spare: each rehash walks the whole table)
            meta[TABLE_BITS] = bits + 1


def _wider(a: np.ndarray, at_least: int) -> np.ndarray:
    """`a` with its first axis at least doubled and at least `at_least` long, the new part zeros."""
    out = np.zeros((max(2 * len(a), at_least), *a.shape[1:]), dtype=a.dtype)
    out[:len(a)] = a
    return out
