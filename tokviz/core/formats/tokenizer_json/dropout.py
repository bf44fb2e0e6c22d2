"""BPE-dropout through a tokenizer.json pipeline: `HfDropout`, a base of `HfTokenizer`, and
`DroppingBpe`, the model it runs in place of the file's BPE.

As tokenizers does when its BPE has a ``dropout``: each word goes through the dropout loop
(`tokviz.core.bpe.dropout.pair_rank`) from its starting symbols, bypassing the word cache and the
``ignore_merges`` shortcut, and as one queue (not cut at its ``▁`` marks first). Normalizer and
pre-tokenizer run as in `encode_ordinary`, which dropout 0 returns.
"""

from __future__ import annotations

import copy
import random

from tokviz.core.bpe.dropout.pair_rank import dropout_merge
from tokviz.core.bpe.dropout.rate import check_rate, make_rng
from tokviz.core.bpe.pair_merge import INF_RANK
from tokviz.core.encoding import Encoding
from tokviz.core.text.surrogates import surrogate_safe


class DroppingBpe:
    """A BPE model (`HfBpeModel`) whose `tokenize` samples with dropout `p` from `rng`; every other
    member is the model's own."""

    def __init__(self, model, p: float, rng: random.Random) -> None:
        self.inner, self.p, self.rng = model, p, rng

    def __getattr__(self, name: str):
        return getattr(self.inner, name)  # what the pipeline reads of the model stays the model's

    def tokenize(self, word: str, limit: int = INF_RANK) -> tuple[tuple[int, int, int], ...]:
        """``(id, start, end)`` of the tokens of one word, sampled."""
        syms = self.inner.start_tokens(word)
        if not syms:
            return ()
        firsts: list[int] = []
        ids = dropout_merge(self.inner.pair_merges, [t[0] for t in syms], self.p, self.rng, limit, firsts)
        lasts = [k - 1 for k in firsts[1:]] + [len(syms) - 1]
        return tuple((i, syms[f][1], syms[e][2]) for i, f, e in zip(ids, firsts, lasts))

    def tokenize_ids(self, word: str, limit: int = INF_RANK) -> list[int]:
        return [t[0] for t in self.tokenize(word, limit)]


@surrogate_safe
class HfDropout:
    """`encode_dropout` of `HfTokenizer` (BPE models only)."""

    @property
    def drops_merges(self) -> bool:
        """The Tokenizer protocol's capability: a BPE model joins pairs, WordPiece and Unigram do not."""
        return self.model.lists_merges

    def encode_dropout(self, text: str, *, dropout: float, seed: int | random.Random | None = None,
                       step: int | None = None) -> Encoding:
        """`encode_ordinary` with each merge skipped with probability `dropout` (BPE-dropout)."""
        p = check_rate(dropout)
        if not self.drops_merges:
            return super().encode_dropout(text, dropout=p, seed=seed, step=step)  # the refusal
        if p == 0.0:
            return self.encode_ordinary(text, step=step)
        self._bytes_table()  # built once on the tokenizer, not on each sampling copy
        return copy.copy(self).run_sampled(text, DroppingBpe(self.model, p, make_rng(seed)), self._limit(step))

    def run_sampled(self, text: str, model: DroppingBpe, limit: int) -> Encoding:
        """`encode_ordinary` of this copy of a tokenizer with `model` in place of its own."""
        self.model = model
        self._cut_marker = False  # one queue per word, as tokenizers samples it
        return self._run(text, limit=limit, allowed=(), post=False, aligned=True)
