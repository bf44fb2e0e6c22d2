"""Tokenizer efficiency metrics of one text: what `tokviz compare` prints for each model.

A `Metrics` record holds the twelve figures of one tokenizer on one text (or one document of it):

- ``tokens``, ``chars`` (code points), ``bytes`` (UTF-8), ``words`` (``len(text.split())``);
- ``chars_per_token``, ``bytes_per_token`` (compression);
- ``fertility``: tokens per word (Rust et al. 2021, "How Good is Your Tokenizer?");
- ``continued_words``: share of words whose characters two or more tokens cover (same paper);
- ``vocab_used``: distinct ids used / vocabulary size at the step, special tokens included;
- ``renyi_efficiency``: Rényi entropy of order 2.5 of the unigram distribution of the ids, over
  ``log(vocabulary size)`` (Zouhar et al. 2023, "Tokenization and the Noiseless Channel");
- ``unk_rate``: share of ``[UNK]``/``<unk>`` tokens;
- ``byte_fallback_rate``: share of ``<0xNN>`` byte tokens, only for vocabularies that write all 256
  bytes that way (SentencePiece-style byte fallback); None for every other tokenizer.

Zero denominators: a ratio whose denominator is zero (no tokens, no words, a vocabulary of one
token) is None (JSON null), never 0 or NaN, so an empty text has ``tokens == 0`` and None ratios,
except ``vocab_used`` (0 of V ids used: 0.0).

`TextFacts` holds what does not depend on the tokenizer (byte offsets of characters, word spans),
computed once per text. What this leaves out: encoding (`tokens`), documents (`documents`),
running many models (`run`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cache

import numpy as np

METRIC_KEYS = (
    "tokens", "chars", "bytes", "words", "chars_per_token", "bytes_per_token", "fertility",
    "continued_words", "vocab_used", "renyi_efficiency", "unk_rate", "byte_fallback_rate",
)
RENYI_ALPHA = 2.5  # Zouhar et al.'s best-correlating order


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

    def as_dict(self) -> dict:
        """The figures under `METRIC_KEYS`, in that order."""
        return asdict(self)


def ratio(num: float, den: float) -> float | None:
    """``num / den``, or None when `den` is zero.

    >>> ratio(3, 2), ratio(1, 0)
    (1.5, None)
    """
    return num / den if den else None


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


@cache
def space_codes() -> np.ndarray:
    """Code points `str.isspace` accepts (all below U+3001), sorted: the separators of
    `str.split()`.

    >>> [hex(c) for c in space_codes()[:6]]
    ['0x9', '0xa', '0xb', '0xc', '0xd', '0x1c']
    """
    return np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)


@dataclass(frozen=True, eq=False)
class TextFacts:
    """What the metrics need of a text whatever the tokenizer.

    `char_bytes[i]` is the UTF-8 offset of character i (one more entry: the total); words are
    the runs of non-space characters `str.split()` returns, as char offsets ``[start, end)``.
    """

    text: str
    data: bytes  # the text as UTF-8
    char_bytes: np.ndarray  # (chars + 1,) int64
    word_starts: np.ndarray  # (words,) int64
    word_ends: np.ndarray  # (words,) int64

    @property
    def n_words(self) -> int:
        return len(self.word_starts)

    def word_range(self, start: int, end: int) -> tuple[int, int]:
        """Indices ``[first, last)`` of the words starting in chars ``[start, end)``."""
        ws = self.word_starts
        return int(np.searchsorted(ws, start, "left")), int(np.searchsorted(ws, end, "left"))

    def n_bytes(self, start: int = 0, end: int | None = None) -> int:
        """UTF-8 bytes of chars ``[start, end)``."""
        cb = self.char_bytes
        return int(cb[len(cb) - 1 if end is None else end] - cb[start])


def text_facts(text: str) -> TextFacts:
    """Byte offsets and word spans of `text`, vectorized (a 5 MB text in well under a second).

    >>> f = text_facts("ab  é\\tcd ")
    >>> f.word_starts.tolist(), f.word_ends.tolist(), f.n_bytes(), f.char_bytes.tolist()
    ([0, 4, 6], [2, 5, 8], 10, [0, 1, 2, 3, 4, 6, 7, 8, 9, 10])
    """
    data = text.encode("utf-8", errors="surrogatepass")
    cps = np.frombuffer(text.encode("utf-32-le", errors="surrogatepass"), dtype=np.uint32)
    lengths = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)
    char_bytes = np.zeros(len(cps) + 1, dtype=np.int64)
    np.cumsum(lengths, out=char_bytes[1:])
    word = ~np.isin(cps, space_codes())  # (chars,) bool: part of a word
    edges = np.diff(word.astype(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return TextFacts(text, data, char_bytes, starts, ends)


def token_counts_per_word(tok_starts: np.ndarray, tok_ends: np.ndarray,
                          word_starts: np.ndarray, word_ends: np.ndarray) -> np.ndarray:
    """How many tokens overlap each word ``[ws, we)`` (positions in one unit, chars or bytes).

    A token ``[s, e)`` overlaps a word when ``s < we`` and ``e > ws``. Every token with
    ``e <= ws`` also has ``s < we``, so the count is ``#(s < we) - #(e <= ws)``: two binary
    searches per word on the sorted ends and starts, whatever the tokens' order.

    >>> token_counts_per_word(np.array([0, 2, 3, 5]), np.array([2, 3, 5, 7]),
    ...                       np.array([0, 3]), np.array([3, 7])).tolist()
    [2, 2]
    """
    starts = np.sort(tok_starts)
    ends = np.sort(tok_ends)
    return np.searchsorted(starts, word_ends, "left") - np.searchsorted(ends, word_starts, "right")


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
) -> Metrics:
    """The metrics of one text from its ids and the counts `TextFacts` gives.

    `continued` is the number of its words two or more tokens overlap; `byte_ids` the ids of the
    ``<0xNN>`` tokens (None: the tokenizer has no byte fallback). "ab ab" in characters:

    >>> m = compute_metrics(np.array([0, 1, 2, 0, 1]), chars=5, n_bytes=5, words=2, continued=2,
    ...                     vocab_size=4, unk_ids=np.array([], dtype=np.int64), byte_ids=None)
    >>> m.fertility, m.chars_per_token, m.vocab_used, m.unk_rate, m.byte_fallback_rate
    (2.5, 1.0, 0.75, 0.0, None)
    """
    n = len(ids)
    unk = int(np.isin(ids, unk_ids).sum()) if len(unk_ids) and n else 0
    byte_hits = int(np.isin(ids, byte_ids).sum()) if byte_ids is not None and n else 0
    return _finish(n, id_counts(ids), unk, byte_hits if byte_ids is not None else None, chars=chars,
                   n_bytes=n_bytes, words=words, continued=continued, vocab_size=vocab_size)


def _finish(n: int, counts: np.ndarray, unk: int, byte_hits: int | None, *, chars: int, n_bytes: int,
            words: int, continued: int, vocab_size: int) -> Metrics:
    """The metrics of `n` tokens whose distinct ids occur `counts` times (by id, no zeros)."""
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
        renyi_efficiency=renyi_efficiency(counts, vocab_size),
        unk_rate=ratio(unk, n),
        byte_fallback_rate=None if byte_hits is None else ratio(byte_hits, n),
    )


class MetricsSum:
    """`compute_metrics` of a text measured in parts: add each part's ids and counts, then
    `metrics()` gives what `compute_metrics` gives for the whole (the same id counts, in id
    order, so the same floats). Memory: one count per id, not one entry per token.

    >>> s = MetricsSum(vocab_size=4, unk_ids=np.array([], dtype=np.int64), byte_ids=None)
    >>> s.add(np.array([0, 1, 2]), chars=3, n_bytes=3, words=1, continued=1)
    >>> s.add(np.array([0, 1]), chars=2, n_bytes=2, words=1, continued=1)
    >>> s.metrics().fertility, s.metrics().vocab_used
    (2.5, 0.75)
    """

    def __init__(self, *, vocab_size: int, unk_ids: np.ndarray, byte_ids: np.ndarray | None) -> None:
        self.vocab_size, self.unk_ids, self.byte_ids = vocab_size, unk_ids, byte_ids
        self.counts = np.zeros(0, dtype=np.int64)  # (max id + 1,) occurrences of each id
        self.tokens = self.chars = self.bytes = self.words = self.continued = self.unk = self.byte_hits = 0

    def add(self, ids: np.ndarray, *, chars: int, n_bytes: int, words: int, continued: int) -> None:
        """Count one part: its tokens' `ids` and the counts `TextFacts` gives for its text."""
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
        self.tokens += n
        self.chars += chars
        self.bytes += n_bytes
        self.words += words
        self.continued += continued

    def metrics(self) -> Metrics:
        return _finish(self.tokens, self.counts[self.counts > 0], self.unk,
                       None if self.byte_ids is None else self.byte_hits, chars=self.chars, n_bytes=self.bytes,
                       words=self.words, continued=self.continued, vocab_size=self.vocab_size)
