"""BoundlessBPE training: ordinary merges inside pretokens and supermerges of whole pretokens,
one step at a time, as a generator of `BoundlessStep` records.

Two sides share one vocabulary and one id counter. The word side is ordinary BPE
(`tokviz.core.bpe.trainer.BpeTrainer`, on the deduplicated chunks); the superword side is
`SuperTrainer`, on the runs of pretokens. At each step both sides name their best pair; the word
side's wins only with a strictly higher count (the paper's rule: a tie goes to the supermerge).
When a word merge makes a whole pretoken one token, that pretoken is unlocked on the superword
side, and its pairs with unlocked neighbours start to count. A pretoken of one base unit ("I")
is one token from the start.

With no runs (supermerges off, a split that gives one chunk per text, a word table) the word side
wins every step and the result is plain BPE, merge for merge.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from tokviz.core.bpe.trainer import BpeTrainer
from tokviz.core.bpe.trainer_records import MergeStep

from .supertrainer import SuperTrainer

MERGE, SUPERMERGE = "merge", "supermerge"
STEP_KINDS = (MERGE, SUPERMERGE)


@dataclass(frozen=True, slots=True)
class BoundlessStep(MergeStep):
    """One step: a merge inside pretokens or a supermerge of two whole pretokens (`kind`)."""

    kind: str = MERGE
    rival: int = 0  # the best count of the other kind at this step (0: none), what the winner beat


class BoundlessTrainer:
    """Runs both sides in step; iterate `steps()`."""

    def __init__(self, words: BpeTrainer, supers: SuperTrainer | None, base: list[bytes],
                 chunk_of_token: Mapping[bytes, int], *, n_candidates: int = 5) -> None:
        """`base`: the bytes of the base ids; `chunk_of_token`: the bytes of each pretoken the
        superword side holds -> its chunk number (a word merge whose new token spells one of them
        may unlock it)."""
        self.words = words
        self.vocab = list(base)  # bytes of every id so far, in the caller's ids
        self.supers = supers
        self.chunk_of_token = chunk_of_token
        self.n_candidates = max(1, n_candidates)
        self.length = words.length  # corpus length in tokens, both kinds of step counted
        self.rank = 0
        self._word_steps = words.steps()
        if supers is not None:  # pretokens of one base unit are one token already
            supers.unlock((c, ids[0]) for c in chunk_of_token.values() if len(ids := words.segments(c)) == 1)

    def steps(self, *, max_steps: int | None = None) -> Iterator[BoundlessStep]:
        words, supers, n = self.words, self.supers, self.n_candidates
        while max_steps is None or self.rank < max_steps:
            wc = words.candidates(1)
            sc = supers.candidates(n) if supers is not None else []
            if not wc and not sc:
                return
            if wc and (not sc or wc[0][0] > sc[0][0]):
                yield self._word_step(sc[0][0] if sc else 0)
            else:
                yield self._super_step(sc, wc[0][0] if wc else 0)
            self.rank += 1

    def _word_step(self, rival: int) -> BoundlessStep:
        before = self.words.length
        s = next(self._word_steps)
        self.length -= before - self.words.length
        self.vocab.append(s.token)
        if self.supers is not None:
            chunk = self.chunk_of_token.get(s.token)
            if chunk is not None and len(self.words.segments(chunk)) == 1:
                self.supers.unlock([(chunk, s.id)])
        return BoundlessStep(self.rank, s.pair, s.id, s.token, s.count, self.length, s.candidates, MERGE, rival)

    def _super_step(self, best: list[tuple[int, int, int]], rival: int) -> BoundlessStep:
        supers, words = self.supers, self.words
        assert supers is not None
        cands = tuple(supers.candidate(*c) for c in best)
        count, _, key = best[0]
        a, b = cands[0].pair
        new = words.next_id  # one id counter for both sides: the word side skips this id
        token = self.vocab[a] + self.vocab[b]
        self.vocab.append(token)
        words.token_bytes.append(token)  # the word side's list stays indexed by id
        words.next_id += 1
        self.length -= supers.merge(key, new)
        return BoundlessStep(self.rank, (a, b), new, token, count, self.length, cands, SUPERMERGE, rival)

