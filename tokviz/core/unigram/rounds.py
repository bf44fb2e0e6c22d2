"""A Unigram training's rounds: `UnigramRound` and `PrunedPiece`, kept as arrays until asked for.

A round lists its whole vocabulary (tens of thousands of pieces, with scores) and the pieces it
pruned (with their losses and best segmentations without them). Building those as Python tuples
cost more than the trainer's own arithmetic, and most of them are never looked at: a model file
needs only ids and numbers, the window shows one round at a time. So a round made by the trainer
or read from a model file holds `RoundColumns`: numpy arrays of indices into a `PieceTable` that
all the rounds of one timeline share. ``round.pieces``, ``round.scores`` and ``round.pruned`` are
built from them on first use (and kept); `id_order` and `scores_in_id_order` give a timeline's ids
and per-round scores straight from the arrays. A round sent to another process is sent as tuples
(`UnigramRound.__reduce__`): the table is not copied with every round.

What this leaves out: the training rules (`tokviz.core.unigram.trainer`), the timeline and its
model files (`tokviz.core.unigram.timeline`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

SCORE_SCALE = 1 << 20  # scores are log-probabilities times this, rounded to integers


def order_by(major: np.ndarray, minor: np.ndarray, first: int | None = None) -> np.ndarray:
    """``np.lexsort((minor, major))`` for integer keys, minor ones distinct and non-negative
    (one argsort of a combined key when it fits in 63 bits); with `first`, only the first `first`
    of that order (the others set aside unsorted)."""
    if not len(major) or (first is not None and first <= 0):
        return np.zeros(0, dtype=np.int64)
    lo, span = int(major.min()), int(minor.max()) + 1
    if (int(major.max()) - lo + 1) * span < 1 << 62:
        combined = (major - lo) * span + minor
        if first is not None and first < len(combined):
            part = np.argpartition(combined, first - 1)[:first]
            return part[np.argsort(combined[part])]
        return np.argsort(combined)
    return np.lexsort((minor, major))[:first]


class PrunedPiece(NamedTuple):
    """A piece removed at the start of a round, and why it was cheap to remove (a named tuple:
    a round makes tens of thousands of them)."""

    piece: str
    loss: float  # SentencePiece's estimate of the corpus log-likelihood lost without it
    freq: int  # weighted uses in the Viterbi segmentation of the corpus
    score: int  # its log-probability (units of 2**-20 nat) when it was pruned
    # its best segmentation without it; () when freq is 0 (ask the tokenizer of the round
    # before for ``nbest(piece, 2)`` to see one)
    alternative: tuple[str, ...]


class PieceTable(NamedTuple):
    """The pieces the rounds of one timeline index into (the trainer's seed, or a model's ids)."""

    strings: Sequence[str]
    rank: np.ndarray  # each piece's rank in Python's string order (ties in a listing)


_NO_INDEX = np.zeros(0, dtype=np.int64)
_NO_OFFSETS = np.zeros(1, dtype=np.int64)


class RoundColumns(NamedTuple):
    """One round as arrays of indices into `table` (int64 arrays, owned by the round)."""

    table: PieceTable
    alive: np.ndarray  # the round's vocabulary, in any order
    scores: np.ndarray  # their scores, in the same order
    pruned: np.ndarray = _NO_INDEX  # pruned at the start of the round, in pruning order
    loss: np.ndarray = np.zeros(0)  # float64, one per pruned piece
    freq: np.ndarray = _NO_INDEX  # whole weighted Viterbi uses
    pruned_scores: np.ndarray = _NO_INDEX
    alt_offsets: np.ndarray = _NO_OFFSETS  # pruned piece i's alternative: alt_pieces[off[i]:off[i+1]]
    alt_pieces: np.ndarray = _NO_INDEX

    def listing_order(self) -> np.ndarray:
        """Positions into `alive`: highest score first, ties in string order."""
        return order_by(-self.scores, self.table.rank[self.alive])

    def listing(self) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """(pieces, scores), highest score first (ties: piece string)."""
        order = self.listing_order()
        return (tuple(map(self.table.strings.__getitem__, self.alive[order].tolist())),
                tuple(self.scores[order].tolist()))

    def alternatives(self, id_of: np.ndarray | None = None) -> list[list[int]]:
        """Each pruned piece's alternative as table indices, or as ``id_of[index]`` ([] when the
        piece had no Viterbi uses)."""
        flat = (self.alt_pieces if id_of is None else id_of[self.alt_pieces]).tolist()
        offsets = self.alt_offsets.tolist()
        return [flat[a:b] for a, b in zip(offsets, offsets[1:])]

    def records(self, n: int | None = None) -> tuple[PrunedPiece, ...]:
        """The pruned pieces, in pruning order (the first `n`)."""
        part = self if n is None or n >= len(self.pruned) else self._head(n)
        name = self.table.strings.__getitem__
        return tuple(map(PrunedPiece, map(name, part.pruned.tolist()), part.loss.tolist(), part.freq.tolist(),
                         part.pruned_scores.tolist(), [tuple(map(name, a)) for a in part.alternatives()]))

    def _head(self, n: int) -> "RoundColumns":
        """The same round with only its first `n` pruned pieces."""
        offsets = self.alt_offsets[:n + 1]
        return self._replace(pruned=self.pruned[:n], loss=self.loss[:n], freq=self.freq[:n],
                             pruned_scores=self.pruned_scores[:n], alt_offsets=offsets,
                             alt_pieces=self.alt_pieces[:offsets[-1]])


class UnigramRound:
    """The vocabulary after one round (round 0: the seed after its first EM). Made either from
    tuples (``pruned``, ``pieces``, ``scores``) or from `RoundColumns` (``columns=``), which give
    the same tuples on first use. Compared by value; not meant to be changed."""

    __slots__ = ("index", "vocab_size", "log_likelihood", "em_log_likelihood", "viterbi_tokens", "columns",
                 "_pruned", "_pieces", "_scores")

    def __init__(self, index: int, vocab_size: int, log_likelihood: float, em_log_likelihood: tuple[float, ...],
                 viterbi_tokens: int, pruned: tuple[PrunedPiece, ...] | None = None,
                 pieces: tuple[str, ...] | None = None, scores: tuple[int, ...] | None = None, *,
                 columns: RoundColumns | None = None) -> None:
        if columns is None and (pruned is None or pieces is None or scores is None):
            raise TypeError("a round needs its pruned pieces, pieces and scores, or columns")
        self.index = index
        self.vocab_size = vocab_size  # pieces + [UNK] + special tokens
        self.log_likelihood = log_likelihood  # corpus log-likelihood (all segmentations) after the round's EM
        self.em_log_likelihood = em_log_likelihood  # before each M-step, then after the last one
        self.viterbi_tokens = viterbi_tokens  # weighted corpus length in tokens under Viterbi segmentation
        self.columns = columns
        self._pruned, self._pieces, self._scores = pruned, pieces, scores

    @property
    def pruned(self) -> tuple[PrunedPiece, ...]:
        """Removed at the start of this round, in pruning order."""
        if self._pruned is None:
            self._pruned = self.columns.records()
        return self._pruned

    @property
    def pieces(self) -> tuple[str, ...]:
        """The vocabulary, highest score first (ties: piece string)."""
        if self._pieces is None:
            self._pieces, self._scores = self.columns.listing()
        return self._pieces

    @property
    def scores(self) -> tuple[int, ...]:
        """Log-probabilities in units of 2**-20 nat, in `pieces` order."""
        if self._scores is None:
            self._pieces, self._scores = self.columns.listing()
        return self._scores

    @property
    def n_pieces(self) -> int:
        return len(self.columns.alive) if self._pieces is None else len(self._pieces)

    @property
    def n_pruned(self) -> int:
        return len(self.columns.pruned) if self._pruned is None else len(self._pruned)

    def first_pruned(self, n: int) -> tuple[PrunedPiece, ...]:
        """``pruned[:n]``, without making the others' records."""
        return self._pruned[:n] if self._pruned is not None else self.columns.records(n)

    @property
    def n_unused_pruned(self) -> int:
        """How many pruned pieces no Viterbi segmentation used (freq 0)."""
        if self._pruned is not None:
            return sum(1 for p in self._pruned if not p.freq)
        return int(np.count_nonzero(self.columns.freq == 0))

    def top(self, n: int = 10) -> list[tuple[str, float]]:
        """The `n` most probable pieces with their probabilities."""
        return [(p, float(np.exp(s / SCORE_SCALE))) for p, s in zip(self.pieces[:n], self.scores[:n])]

    def _key(self) -> tuple:
        return (self.index, self.vocab_size, self.log_likelihood, self.em_log_likelihood, self.viterbi_tokens,
                self.pruned, self.pieces, self.scores)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UnigramRound):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.index, self.vocab_size, self.log_likelihood, self.viterbi_tokens))

    def __reduce__(self):
        return UnigramRound, self._key()

    def __repr__(self) -> str:
        return (f"UnigramRound(index={self.index}, vocab_size={self.vocab_size}, "
                f"log_likelihood={self.log_likelihood!r}, pieces={self.n_pieces}, pruned={self.n_pruned})")


def shared_table(rounds: Sequence[UnigramRound]) -> PieceTable | None:
    """The table every round of `rounds` indexes into, or None (a round made from tuples, or
    rounds of different timelines)."""
    if not rounds or rounds[0].columns is None:
        return None
    table = rounds[0].columns.table
    return table if all(r.columns is not None and r.columns.table is table for r in rounds) else None


def id_order(rounds: Sequence[UnigramRound]) -> np.ndarray:
    """The table indices in id order (after [UNK] and the specials): the last round's vocabulary
    as it lists it, then the pieces pruned in the last round, then in the round before, and so
    on, each round's group from the last pruned to the first. Every round must have columns."""
    last = rounds[-1].columns
    groups = [last.alive[last.listing_order()]]
    groups += [r.columns.pruned[::-1] for r in reversed(rounds[1:])]
    return np.concatenate(groups)


def scores_in_id_order(r: UnigramRound, id_of: np.ndarray) -> list[int]:
    """The scores of round `r` in id order (`id_of`: each table index's id among the pieces; the
    round's pieces are the first ``r.n_pieces`` of them)."""
    return score_array_in_id_order(r, id_of).tolist()


def score_array_in_id_order(r: UnigramRound, id_of: np.ndarray) -> np.ndarray:
    """`scores_in_id_order` as an int64 array."""
    c = r.columns
    out = np.empty(len(c.alive), dtype=np.int64)
    out[id_of[c.alive]] = c.scores
    return out


def pruning_in_id_order(rounds: Sequence[UnigramRound], id_of: np.ndarray) -> tuple[list[int], list[int]]:
    """Per piece in id order: the round that pruned it (-1: kept to the last round) and its
    score then (or in the last round); `id_of` as for `scores_in_id_order`."""
    n = int((id_of >= 0).sum())
    round_of = np.full(n, -1, dtype=np.int64)
    score = np.zeros(n, dtype=np.int64)
    last = rounds[-1].columns
    score[id_of[last.alive]] = last.scores
    for r in rounds:
        ids = id_of[r.columns.pruned]
        round_of[ids] = r.index
        score[ids] = r.columns.pruned_scores
    return round_of.tolist(), score.tolist()


def positions(order: np.ndarray, size: int) -> np.ndarray:
    """``id_of`` for `id_order`'s answer: ``id_of[order[i]] == i`` (-1 for indices not in it)."""
    id_of = np.full(size, -1, dtype=np.int64)
    id_of[order] = np.arange(len(order))
    return id_of
