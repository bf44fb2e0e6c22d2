"""A SentencePiece BPE model's merge timeline as a sequence whose rows are worked out when read:
opening a model to encode reads none of them (each row searches its piece's splits).

What this leaves out: which pieces merge and in what order (`tokenizer.SentencePieceTokenizer`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tokviz.core.algorithm.records import LoadedMerge


class ScoreMerges(Sequence):
    """``ScoreMerges(ids, token_of, pair_of)``: row k is ``LoadedMerge(k, ids[k], pair_of(id),
    token_of(id))``; `ids` is there without building a row."""

    def __init__(self, ids: Sequence[int], token_of: Callable[[int], bytes],
                 pair_of: Callable[[int], tuple[int, int] | None]) -> None:
        self.ids = ids
        self._token_of, self._pair_of = token_of, pair_of
        self._rows: dict[int, LoadedMerge] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def _row(self, k: int) -> LoadedMerge:
        row = self._rows.get(k)
        if row is None:
            i = self.ids[k]
            row = self._rows[k] = LoadedMerge(k, i, self._pair_of(i), self._token_of(i))
        return row

    def __getitem__(self, k):  # int -> LoadedMerge, slice -> list
        if isinstance(k, slice):
            return [self._row(j) for j in range(*k.indices(len(self.ids)))]
        n = len(self.ids)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(k)
        return self._row(k)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]
