"""The records a WordPiece training run yields: one `WordPieceStep` per merge, with the
`WordPieceCandidate` pairs it beat (scores and the raw counts behind them).

Named tuples (a run makes tens of thousands), immutable and shared: a runner-up that did not change
between two steps is the same object in both.
What this leaves out: the trainer (`tokviz.core.wordpiece.trainer`), the file format
(`tokviz.core.wordpiece.timeline`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple


class WordPieceCandidate(NamedTuple):
    """A pair that could have been merged at a step, with its score and the raw counts."""

    pair: tuple[int, int]
    score: float  # count / (left_count * right_count)
    count: int  # weighted count of the pair
    left_count: int  # weighted count of the left token
    right_count: int  # weighted count of the right token
    first_chunk: int  # index of the word (in order of first appearance) of the first occurrence
    first_offset: int  # character offset of the pair in that word


class WordPieceStep(NamedTuple):
    """One merge of a WordPiece timeline. Step k = the base vocabulary + the first k merges."""

    rank: int  # 0-based merge index
    pair: tuple[int, int]  # (left id, right id)
    id: int  # id of the new token
    token: bytes  # vocabulary form of the new token, UTF-8 (b"##ug" for a continuation)
    score: float  # count / (left_count * right_count) when it won
    count: int  # weighted count of the pair when it won
    left_count: int
    right_count: int
    length: int  # corpus length in tokens (weighted) after the merge
    candidates: tuple[WordPieceCandidate, ...] = ()  # best pairs at this step, winner first

    @property
    def text(self) -> str:
        return self.token.decode("utf-8")

    @property
    def exact_score(self) -> Fraction:
        return Fraction(self.count, self.left_count * self.right_count)


def merge_record(rank: int, new_id: int, form: str, length: int,
                 candidates: tuple[WordPieceCandidate, ...]) -> WordPieceStep:
    """The record of merge `rank`: its winner (``candidates[0]``) became token `new_id`, spelled
    `form`, leaving the corpus `length` tokens long."""
    win = candidates[0]
    return WordPieceStep(rank, win.pair, new_id, form.encode("utf-8"), win.score, win.count, win.left_count,
                         win.right_count, length, candidates)
