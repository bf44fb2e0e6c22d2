"""Tokenizer efficiency metrics of one text: what `tokviz compare` prints for each model.

A `Metrics` record holds the figures of one tokenizer on one text (or one document of it):

- ``tokens``, ``chars`` (code points), ``bytes`` (UTF-8), ``words`` (``len(text.split())``);
- ``chars_per_token``, ``bytes_per_token`` (compression);
- ``fertility``: tokens per word (Rust et al. 2021, "How Good is Your Tokenizer?");
- ``continued_words``: share of words whose characters two or more tokens cover (same paper);
- ``vocab_used``: distinct ids used / vocabulary size at the step, special tokens included
  (vocabulary utilisation);
- ``renyi_efficiency``: Rényi entropy of order α (default 2.5) of the unigram distribution of the
  ids over ``log(vocabulary size)`` (Zouhar et al. 2023, "Tokenization and the Noiseless Channel");
  ``renyi_efficiency_observed`` over ``log(types observed)``, ``tokenization-scorer``'s default;
  ``shannon_efficiency`` and ``shannon_efficiency_observed`` the same for Shannon entropy;
  more orders at once: `Metrics.renyi_more`, keyed ``renyi_efficiency@3`` (`metric_keys`);
- ``type_token_ratio`` (types / tokens), ``avg_token_rank`` (mean frequency rank; `distribution`);
- ``unk_rate``: share of ``[UNK]``/``<unk>`` tokens;
- ``byte_fallback_rate``: share of ``<0xNN>`` byte tokens, only for vocabularies that write all 256
  bytes that way (SentencePiece-style byte fallback); None for every other tokenizer;
- ``strr``: share of words exactly one token covers (Nayeem et al. 2025, "Beyond Fertility");
- ``utf8_whole_token_rate``, ``utf8_boundary_crossing_rate``, ``utf8_split_char_rate``
  (`utf8_integrity`); ``digit_boundary_f1``, ``tokens_per_digit``, ``digit_split_entropy``
  (`numbers`); ``identifier_fragmentation``, ``indentation_tokens`` (`code_metrics`).

Zero denominators: a ratio whose denominator is zero (no tokens, no words, a vocabulary of one
token, no numbers) is None (JSON null), never 0 or NaN, so an empty text has ``tokens == 0`` and
None ratios, except ``vocab_used`` (0 of V ids used: 0.0).

What this leaves out: the text's facts (`text`), encoding (`tokens`), documents (`documents`),
running many models (`run`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tokviz.core.text.spaces import space_codes

from . import distribution
from .tallies import NumberLength, Tally, finish, number_lengths
from .text import TextFacts, ratio, text_facts, token_counts_per_word

__all__ = ["METRIC_KEYS", "RENYI_ALPHA", "Metrics", "MetricsSum", "TextFacts", "compute_metrics", "id_counts",
           "metric_keys", "ratio", "renyi_efficiency", "space_codes", "text_facts", "token_counts_per_word"]

METRIC_KEYS = (
    "tokens", "chars", "bytes", "words", "chars_per_token", "bytes_per_token", "fertility",
    "continued_words", "vocab_used", "renyi_efficiency", "unk_rate", "byte_fallback_rate",
    "renyi_efficiency_observed", "shannon_efficiency", "shannon_efficiency_observed", "type_token_ratio",
    "avg_token_rank", "strr", "utf8_whole_token_rate", "utf8_boundary_crossing_rate", "utf8_split_char_rate",
    "digit_boundary_f1", "tokens_per_digit", "digit_split_entropy", "identifier_fragmentation",
    "indentation_tokens",
)
RENYI_ALPHA = 2.5  # Zouhar et al.'s best-correlating order


def alpha_label(alpha: float) -> str:
    """How an order is written in a key: ``renyi_efficiency@`` + this.

    >>> alpha_label(3.0), alpha_label(2.5)
    ('3', '2.5')
    """
    return f"{alpha:g}"


def metric_keys(alphas: Sequence[float] = (RENYI_ALPHA,)) -> tuple[str, ...]:
    """`METRIC_KEYS` and, for each Rényi order after the first, its two efficiency keys.

    >>> metric_keys((2.5, 3.0))[-2:]
    ('renyi_efficiency@3', 'renyi_efficiency_observed@3')
    """
    more = [f"{k}@{alpha_label(a)}" for a in alphas[1:] for k in ("renyi_efficiency", "renyi_efficiency_observed")]
    return (*METRIC_KEYS, *more)


@dataclass(frozen=True)
class Metrics:
    """The efficiency figures of one tokenizer on one text; None = not defined (see module doc)."""

    tokens: int
    chars: int
    bytes: int
    words: int
    chars_per_token: float | None
    bytes_per_token: float | None
    fertility: float | None
    continued_words: float | None
    vocab_used: float | None
    renyi_efficiency: float | None
    unk_rate: float | None
    byte_fallback_rate: float | None
    renyi_efficiency_observed: float | None = None
    shannon_efficiency: float | None = None
    shannon_efficiency_observed: float | None = None
    type_token_ratio: float | None = None
    avg_token_rank: float | None = None
    strr: float | None = None
    utf8_whole_token_rate: float | None = None
    utf8_boundary_crossing_rate: float | None = None
    utf8_split_char_rate: float | None = None
    digit_boundary_f1: float | None = None
    tokens_per_digit: float | None = None
    digit_split_entropy: float | None = None
    identifier_fragmentation: float | None = None
    indentation_tokens: float | None = None
    renyi_alpha: float = RENYI_ALPHA  # the order of renyi_efficiency
    # (alpha, efficiency over log V, over log types) for each further order asked for
    renyi_more: tuple[tuple[float, float | None, float | None], ...] = ()
    number_lengths: tuple[NumberLength, ...] = ()  # numbers by length group (`numbers`)

    def as_dict(self) -> dict:
        """The figures under `metric_keys` of its orders, in that order (flat: one CSV cell each)."""
        out = {k: getattr(self, k) for k in METRIC_KEYS}
        for alpha, by_vocab, observed in self.renyi_more:
            out[f"renyi_efficiency@{alpha_label(alpha)}"] = by_vocab
            out[f"renyi_efficiency_observed@{alpha_label(alpha)}"] = observed
        return out


def renyi_efficiency(counts: np.ndarray, vocab_size: int, alpha: float = RENYI_ALPHA) -> float | None:
    """Rényi efficiency: ``H_a(p) / log(V)`` with ``H_a = log(sum p_i^a) / (1 - a)``, p the unigram
    distribution of the token `counts` (zeros ignored). None without tokens or with ``V < 2``.

    Four tokens used equally often out of a vocabulary of 4 use it fully; one token of 4 not at all:

    >>> renyi_efficiency(np.array([5, 5, 5, 5]), 4)
    1.0
    >>> renyi_efficiency(np.array([7, 0, 0]), 4)
    0.0
    >>> round(renyi_efficiency(np.array([3, 1]), 2), 4)  # log(.75**2.5 + .25**2.5) / -1.5 / log 2
    0.6319
    """
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum()
    if total <= 0 or vocab_size < 2:
        return None
    p = counts[counts > 0] / total
    if alpha == 1.0:  # the Shannon limit
        h = float(-(p * np.log(p)).sum())
    else:
        h = float(np.log((p**alpha).sum()) / (1.0 - alpha))
    return max(0.0, h / float(np.log(vocab_size))) + 0.0  # + 0.0: no -0.0


def id_counts(ids: np.ndarray) -> np.ndarray:
    """Occurrences of each distinct id (order unspecified; zeros never included).

    >>> sorted(id_counts(np.array([3, 1, 3, 3])).tolist())
    [1, 3]
    """
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64)
    counts = np.bincount(ids) if len(ids) * 4 > int(ids.max()) else np.unique(ids, return_counts=True)[1]
    return counts[counts > 0]


def compute_metrics(
    ids: np.ndarray,
    *,
    chars: int,
    n_bytes: int,
    words: int,
    continued: int,
    vocab_size: int,
    unk_ids: np.ndarray,
    byte_ids: np.ndarray | None,
    tally: Tally | None = None,
    alphas: Sequence[float] = (RENYI_ALPHA,),
) -> Metrics:
    """The metrics of one text from its ids and the counts `TextFacts` gives.

    `continued` is the number of its words two or more tokens overlap; `byte_ids` the ids of the
    ``<0xNN>`` tokens (None: the tokenizer has no byte fallback); `tally` the counts that need
    positions (`tallies.PieceTallies`; None: those figures are None); `alphas` the Rényi orders
    (the first is ``renyi_efficiency``'s). "ab ab" in characters:

    >>> m = compute_metrics(np.array([0, 1, 2, 0, 1]), chars=5, n_bytes=5, words=2, continued=2,
    ...                     vocab_size=4, unk_ids=np.array([], dtype=np.int64), byte_ids=None)
    >>> m.fertility, m.chars_per_token, m.vocab_used, m.unk_rate, m.byte_fallback_rate, m.type_token_ratio
    (2.5, 1.0, 0.75, 0.0, None, 0.6)
    """
    n = len(ids)
    unk = int(np.isin(ids, unk_ids).sum()) if len(unk_ids) and n else 0
    byte_hits = int(np.isin(ids, byte_ids).sum()) if byte_ids is not None and n else 0
    return _finish(n, id_counts(ids), unk, byte_hits if byte_ids is not None else None, chars=chars,
                   n_bytes=n_bytes, words=words, continued=continued, vocab_size=vocab_size, tally=tally,
                   alphas=alphas)


def _finish(n: int, counts: np.ndarray, unk: int, byte_hits: int | None, *, chars: int, n_bytes: int,
            words: int, continued: int, vocab_size: int, tally: Tally | None, alphas: Sequence[float]) -> Metrics:
    """The metrics of `n` tokens whose distinct ids occur `counts` times (by id, no zeros)."""
    counts = np.sort(counts)  # one order whatever the parts: the same floats
    first, *more = alphas or (RENYI_ALPHA,)
    positional = finish(tally, tokens=n, words=words) if tally is not None else {}
    return Metrics(
        tokens=n,
        chars=chars,
        bytes=n_bytes,
        words=words,
        chars_per_token=ratio(chars, n),
        bytes_per_token=ratio(n_bytes, n),
        fertility=ratio(n, words),
        continued_words=ratio(continued, words),
        vocab_used=ratio(len(counts), vocab_size),
        renyi_efficiency=renyi_efficiency(counts, vocab_size, first),
        unk_rate=ratio(unk, n),
        byte_fallback_rate=None if byte_hits is None else ratio(byte_hits, n),
        renyi_efficiency_observed=distribution.efficiency(counts, first),
        shannon_efficiency=distribution.efficiency(counts, 1.0, vocab_size),
        shannon_efficiency_observed=distribution.efficiency(counts, 1.0),
        type_token_ratio=distribution.type_token_ratio(counts),
        avg_token_rank=distribution.average_rank(counts),
        renyi_alpha=first,
        renyi_more=tuple((a, renyi_efficiency(counts, vocab_size, a), distribution.efficiency(counts, a))
                         for a in more),
        number_lengths=number_lengths(tally) if tally is not None else (),
        **positional,
    )


class MetricsSum:
    """`compute_metrics` of a text measured in parts: add each part's ids and counts, then
    `metrics()` gives what `compute_metrics` gives for the whole (the same id counts, in one
    order, so the same floats; tallies add up exactly). Memory: one count per id, not one entry
    per token.

    >>> s = MetricsSum(vocab_size=4, unk_ids=np.array([], dtype=np.int64), byte_ids=None)
    >>> s.add(np.array([0, 1, 2]), chars=3, n_bytes=3, words=1, continued=1)
    >>> s.add(np.array([0, 1]), chars=2, n_bytes=2, words=1, continued=1)
    >>> s.metrics().fertility, s.metrics().vocab_used
    (2.5, 0.75)
    """

    def __init__(self, *, vocab_size: int, unk_ids: np.ndarray, byte_ids: np.ndarray | None,
                 alphas: Sequence[float] = (RENYI_ALPHA,)) -> None:
        self.vocab_size, self.unk_ids, self.byte_ids, self.alphas = vocab_size, unk_ids, byte_ids, tuple(alphas)
        self.counts = np.zeros(0, dtype=np.int64)  # (max id + 1,) occurrences of each id
        self.tokens = self.chars = self.bytes = self.words = self.continued = self.unk = self.byte_hits = 0
        self.tally: Tally | None = None

    def add(self, ids: np.ndarray, *, chars: int, n_bytes: int, words: int, continued: int,
            tally: Tally | None = None) -> None:
        """Count one part: its tokens' `ids`, the counts `TextFacts` gives for its text, and its
        `tally` (`tallies.PieceTallies.tally`; a sum with a part without one has none)."""
        n = len(ids)
        if n:
            found = np.bincount(ids)
            if len(found) > len(self.counts):
                found[: len(self.counts)] += self.counts
                self.counts = found
            else:
                self.counts[: len(found)] += found
            if len(self.unk_ids):
                self.unk += int(np.isin(ids, self.unk_ids).sum())
            if self.byte_ids is not None:
                self.byte_hits += int(np.isin(ids, self.byte_ids).sum())
        first = self.tokens == 0 and self.chars == 0 and self.tally is None
        self.tally = tally if first else (None if tally is None or self.tally is None else self.tally + tally)
        self.tokens += n
        self.chars += chars
        self.bytes += n_bytes
        self.words += words
        self.continued += continued

    def metrics(self) -> Metrics:
        return _finish(self.tokens, self.counts[self.counts > 0], self.unk,
                       None if self.byte_ids is None else self.byte_hits, chars=self.chars, n_bytes=self.bytes,
                       words=self.words, continued=self.continued, vocab_size=self.vocab_size, tally=self.tally,
                       alphas=self.alphas)
