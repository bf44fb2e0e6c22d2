"""A SentencePiece BPE model's merge timeline as a sequence whose rows are worked out when read:
opening a model to encode reads none of them (each row searches its piece's splits).

What this leaves out: which pieces merge and in what order (`tokenizer.SentencePieceTokenizer`).
"""

from __future__ import annotations

from collections.abc import Sequence

from tokviz.core.algorithm.lazy_merges import LazyMerges


class ScoreMerges(LazyMerges):
    """``ScoreMerges(ids, token_of, pair_of)``: row k is ``LoadedMerge(k, ids[k], pair_of(id),
    token_of(id))``; `ids` is there without building a row. Equal to any sequence of the same rows."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]
