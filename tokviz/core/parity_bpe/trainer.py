"""Fast parity-aware BPE: all documents in one incremental state, merges chosen for the costliest one.

The documents (languages) share one `DocumentPairs` state (`pairs`): their deduplicated chunks
laid end to end, each pair's positions across all documents, its count per document, and a heap
per document. A parity step takes the document with the most tokens (the first on a tie), asks
its heap for its best pairs, and merges the winner everywhere in one pass over the pair's
positions. Each document's token count is kept as it goes, so choosing the costliest is an
argmax over one small array. The hybrid's global steps come from one more `BpeTrainer` over all
documents together (plain BPE, the same records), applied to the documents the same way; it is
let go once the global merges are done.

The rule (costs, ties, when to stop) is `tokviz.core.parity_bpe.reference`'s.
What this leaves out: reading and splitting the corpus into documents (`tokviz.core.parity_bpe.timeline`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from tokviz.core.bpe.trainer import BpeTrainer
from tokviz.core.bpe.trainer_records import MergeStep

from .pairs import DocumentPairs
from .reference import GLOBAL

_SHIFT = 32  # a pair's key is left << 32 | right, as in `BpeTrainer`
N_CANDIDATES = 5


@dataclass(frozen=True, slots=True)
class ParityStep(MergeStep):
    """A merge with the document it was chosen for and what it saved in each document.

    `count` is the pair's count in the served document (a global step: in all documents) and its
    candidates' chunks are numbered in that document; `length` counts all documents."""

    served: int = GLOBAL  # index of the document the merge served, or GLOBAL (the hybrid's first merges)
    saved: tuple[tuple[int, int], ...] = ()  # (document, tokens the merge saved there), where it saved any

    @property
    def kind(self) -> str:
        """``"global"`` or ``"document N"`` (numbered from 1, as ``tokviz compare --by-document`` does)."""
        return "global" if self.served == GLOBAL else f"document {self.served + 1}"


class ParityTrainer:
    """Parity-aware BPE over documents; iterate `steps()`.

    >>> docs = [[list(b"aaab")], [list(b"cdcdcd")]]
    >>> t = ParityTrainer(docs, [[2], [2]], [bytes([i]) for i in range(256)])
    >>> [(s.token, s.served, s.saved) for s in t.steps(max_merges=4)]  # (served, tokens saved there)
    [(b'cd', 1, ((1, 6),)), (b'aa', 0, ((0, 2),)), (b'aaa', 0, ((0, 2),)), (b'cdcd', 1, ((1, 2),))]
    """

    def __init__(self, documents: Sequence[Sequence[Sequence[int]]], weights: Sequence[Sequence[int]],
                 token_bytes: Sequence[bytes], *, min_count: int = 2, hybrid: int = 0,
                 everything: tuple[Sequence[Sequence[int]], Sequence[int]] | None = None,
                 n_candidates: int = N_CANDIDATES) -> None:
        """`documents[d]`: the base-id sequences of document d's distinct chunks (or a tuple of
        their ids laid end to end and their lengths), `weights[d]` their counts; `everything`: (sequences, counts) of all documents' chunks together, for
        the hybrid's global steps (built from the documents when not given)."""
        if not documents:
            raise ValueError("no documents")
        if len(documents) != len(weights):
            raise ValueError("documents and weights differ in length")
        self.token_bytes = list(token_bytes)
        self.min_count = max(1, min_count)
        self.hybrid = max(0, hybrid)
        self.pairs = DocumentPairs([_flat(d) for d in documents], weights, min_count=self.min_count,
                                   keep_all=self.hybrid > 0)
        self.cost = self.pairs.cost  # each document's tokens, kept up to date
        self.initial = tuple(self.cost.tolist())
        self.n_candidates = max(1, n_candidates)
        self.rank = 0
        self._global: BpeTrainer | None = None
        if self.hybrid:
            seqs, counts = everything if everything is not None else _together(documents, weights)
            kw = {"min_count": self.min_count, "n_candidates": self.n_candidates}
            self._global = (BpeTrainer.from_flat(seqs[0], seqs[1], counts, token_bytes, **kw) if isinstance(seqs, tuple)
                            else BpeTrainer(seqs, counts, token_bytes, **kw))

    @property
    def length(self) -> int:
        """Tokens of all documents with the merges so far."""
        return int(self.cost.sum())

    def _apply(self, key: int, new: int) -> tuple[tuple[int, int], ...]:
        """Merge `key` in every document that has it; (document, tokens saved) where it saved any."""
        return tuple((d, n) for d, n in self.pairs.merge(key, new).items() if n)

    def _global_steps(self, limit: int) -> Iterator[ParityStep]:
        trainer = self._global
        assert trainer is not None
        for s in trainer.steps(max_merges=limit):
            saved = self._apply((s.pair[0] << _SHIFT) | s.pair[1], s.id)
            self.token_bytes.append(s.token)
            self.rank += 1
            yield ParityStep(s.rank, s.pair, s.id, s.token, s.count, self.length, s.candidates, GLOBAL, saved)
        self._global = None  # its state is not needed again
        self.pairs.keep_all = False

    def steps(self, *, max_merges: int | None = None) -> Iterator[ParityStep]:
        """Yield merges until `max_merges` are done or the served document has no pair occurring
        `min_count` times."""
        if self._global is not None:
            limit = self.hybrid if max_merges is None else min(self.hybrid, max_merges)
            yield from self._global_steps(limit)
            if self.rank < limit:  # plain BPE ran out of pairs
                return
        while max_merges is None or self.rank < max_merges:
            served = int(np.argmax(self.cost))  # the first of equal costs
            best = self.pairs.best(served, self.n_candidates)
            if not best:
                return
            key, win = best[0]
            new = len(self.token_bytes)
            token = self.token_bytes[key >> _SHIFT] + self.token_bytes[key & ((1 << _SHIFT) - 1)]
            self.token_bytes.append(token)
            saved = self._apply(key, new)
            step = ParityStep(self.rank, win.pair, new, token, win.count, self.length,
                              tuple(c for _, c in best), served, saved)
            self.rank += 1
            yield step


def _together(documents, weights) -> tuple[list[Sequence[int]], list[int]]:
    """The distinct chunks of all documents (by their base ids) in order of first appearance, and
    their summed counts."""
    total: dict[tuple[int, ...], int] = {}
    for seqs, ws in zip(documents, weights):
        for s, w in zip(seqs, ws):
            k = tuple(s)
            total[k] = total.get(k, 0) + w
    return [list(k) for k in total], list(total.values())


def _flat(seqs) -> tuple[np.ndarray, Sequence[int]]:
    """A document's chunks as (base ids laid end to end, lengths): as given, or from sequences."""
    if isinstance(seqs, tuple):
        return seqs
    lengths = [len(x) for x in seqs]
    return np.fromiter(chain.from_iterable(seqs), dtype=np.int64, count=sum(lengths)), lengths
