"""BPE-dropout for SentencePiece BPE models: `SpDropout`, a base of `SentencePieceTokenizer`.

sentencepiece samples a BPE model (``encode(text, enable_sampling=True, alpha=p)``) in its
``bpe::Model::SampleEncode``: the usual score-ordered loop (`SpBpe`) where each pair popped off the
agenda that is still there is skipped with probability p, for good (its two symbols may still
join other neighbours), after which the loop goes on. That is not Hugging Face's rule, where a
skipped candidate comes back after the next one kept (`tokviz.core.bpe.dropout`): the same p
gives other segmentations, so a `.model` file samples by its own library's rule. Draws come from
a seeded ``random.Random`` (sentencepiece's own generator is a C++ ``mt19937``: the same seed does
not give that library's sample); with p = 1 nothing joins and no draw is made, as there.

Normalization, byte fallback, unknown runs and spans are the deterministic encode's
(`encode_ordinary`, which p = 0 returns). A Unigram model refuses: it samples by alpha
(`tokviz.core.explain.unigram`).
"""

from __future__ import annotations

import random

from tokviz.core.bpe.dropout.rate import check_rate, make_rng
from tokviz.core.encoding import Encoding


class SpDropout:
    """`encode_dropout` of `SentencePieceTokenizer` (BPE models only)."""

    @property
    def drops_merges(self) -> bool:
        """The Tokenizer protocol's capability: a BPE model joins pairs, a Unigram model does not."""
        return self.bpe is not None

    def encode_dropout(self, text: str, *, dropout: float, seed: int | random.Random | None = None,
                       step: int | None = None) -> Encoding:
        """`encode_ordinary` with each merge skipped with probability `dropout`, as sentencepiece's
        ``SampleEncode`` skips them, the draws from `seed` (a seed or a ``random.Random``)."""
        p = check_rate(dropout)
        if not self.drops_merges:
            return super().encode_dropout(text, dropout=p, seed=seed, step=step)  # the refusal
        if p == 0.0:
            return self.encode_ordinary(text, step=step)
        if p >= 1.0:
            skip = _always
        else:
            draw = make_rng(seed).random

            def skip() -> bool:
                return draw() < p

        out = Encoding([], [], [], [], [], [])
        self._encode_text(text, 0, out, step, skip=skip)
        return out


def _always() -> bool:
    return True
