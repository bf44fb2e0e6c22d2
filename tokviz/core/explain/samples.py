"""The distribution of a word's segmentations over N samples: BPE-dropout for a BPE that joins
pairs (`Tokenizer.encode_dropout`), subword regularization for a Unigram model (its ``sample``
with alpha), as ``segmentation · share`` rows, most frequent first.

    >>> from tokviz.core.bpe.tokenizer import BpeTokenizer
    >>> from tokviz.core.bpe.units import BaseVocab
    >>> from tokviz.core.text.split import parse_split
    >>> tok = BpeTokenizer(BaseVocab("bytes", ()), [(97, 98)], parse_split("none"))
    >>> rows = sample_shares("ab", tok, "ab", n=4, dropout=1.0).rows
    >>> [(r.pieces, r.count, r.share) for r in rows]
    [(('a', 'b'), 4, 1.0)]

What this leaves out: the sampling loops (`tokviz.core.bpe.dropout`, `tokviz.core.unigram`).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from tokviz.core.display.tokens import visible_token
from tokviz.core.errors import Cancelled
from tokviz.core.explain.unigram import UnigramExplainer, is_unigram

N_SAMPLES = 200  # samples a distribution is drawn from by default


@dataclass(frozen=True)
class Share:
    """One segmentation of the word and how often it was drawn."""

    pieces: tuple[str, ...]
    count: int
    share: float


@dataclass(frozen=True)
class SampledShares:
    """A tokenizer's segmentations of `word` over `n` samples, most frequent first."""

    title: str
    how: str  # "BPE-dropout 0.1" or "Unigram alpha 0.1"
    word: str
    n: int
    rows: tuple[Share, ...]


def sampler_of(tok):
    """What samples `tok`'s segmentations: "dropout" (a BPE), a Unigram sampler (with
    ``sample(word, alpha=, step=, rng=)``), or None (nothing to sample: WordPiece, baselines)."""
    if tok.drops_merges:
        return "dropout"
    if is_unigram(tok):
        return UnigramExplainer(tok)  # a loaded Unigram model
    if tok.scores_pieces:
        return tok  # a Unigram model trained here samples itself
    return None


def sample_shares(title: str, tok, word: str, *, n: int = N_SAMPLES, dropout: float = 0.1, alpha: float = 0.1,
                  step: int | None = None, seed: int = 0, should_stop=None) -> SampledShares | None:
    """`word`'s segmentations by `tok` over `n` samples, or None when `tok` cannot sample."""
    sampler = sampler_of(tok)
    if sampler is None or not word:
        return None
    rng = random.Random(seed)
    counts: Counter[tuple[str, ...]] = Counter()
    for k in range(n):
        if should_stop is not None and k % 50 == 0 and should_stop():
            raise Cancelled()
        if sampler == "dropout":
            enc = tok.encode_dropout(word, dropout=dropout, seed=rng, step=step)
            counts[tuple(visible_token(t) for t in enc.tokens)] += 1
        else:
            counts[tuple(sampler.sample(word, alpha=alpha, step=step, rng=rng).pieces)] += 1
    how = f"BPE-dropout {dropout:g}" if sampler == "dropout" else f"Unigram alpha {alpha:g}"
    rows = tuple(Share(p, c, c / n) for p, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return SampledShares(title, how, word, n, rows)
