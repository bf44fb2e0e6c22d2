"""Counts behind the metrics that need token positions, per piece of text and per part of one.

`PieceTallies` looks at one encoded piece once: each word's token count (STRR), each token's
UTF-8 class, each multi-byte character's split, each number's split, each code identifier's and
indentation's tokens, all placed by char offset. `tally(c0, c1, t0, t1)` adds up what lies in chars
``[c0, c1)`` and tokens ``[t0, t1)`` into a `Tally`: whole counts (and one exact fraction), so
the tallies of a text's parts add up to the whole text's and the figures (`finish`) do not depend
on where the parts were cut. What this leaves out: the definitions (`utf8_integrity`, `numbers`,
`code_metrics`), the figures of the id counts (`distribution`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .code_metrics import IDENTIFIER, INDENT, span_tokens
from .numbers import length_group, number_splits, pattern_f1
from .text import Overlaps, TextFacts, ratio
from .utf8_integrity import Utf8Tables, multibyte_splits


@dataclass(frozen=True)
class Tally:
    """Whole counts of a text or a part of it; `+` adds two parts."""

    single_words: int = 0  # words exactly one token overlaps
    whole_tokens: int = 0  # tokens whose bytes are whole UTF-8
    crossing_tokens: int = 0  # tokens holding pieces of two characters, one incomplete
    multibyte_chars: int = 0
    split_chars: int = 0  # multi-byte characters two or more tokens share
    numbers: int = 0
    f1_sum: Fraction = Fraction(0)  # of the numbers' boundary F1s, exact
    digits: int = 0
    number_tokens: int = 0
    patterns: Counter = field(default_factory=Counter)  # (digits, boundary pattern) -> numbers
    identifiers: int = 0
    identifier_tokens: int = 0
    indents: int = 0
    indent_tokens: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(**{f: getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__})


@dataclass(frozen=True)
class NumberLength:
    """The numbers of one length group: how many, tokens per digit, split entropy (bits)."""

    group: str
    numbers: int
    tokens_per_digit: float
    split_entropy: float


def _entropy_bits(counts: list[int]) -> float:
    total = sum(counts)
    return -sum(c / total * math.log2(c / total) for c in counts) + 0.0 if len(counts) > 1 else 0.0


def number_lengths(t: Tally) -> tuple[NumberLength, ...]:
    """Per length group (shortest first): numbers, tokens per digit, entropy of their splits."""
    groups: dict[str, Counter] = {}  # length group -> boundary pattern -> numbers
    digits: Counter = Counter()  # length group -> digits
    tokens: Counter = Counter()  # length group -> tokens
    for (length, pattern), n in t.patterns.items():
        group = length_group(length)
        groups.setdefault(group, Counter())[pattern] += n
        digits[group] += length * n
        tokens[group] += (len(pattern) + 1) * n
    return tuple(NumberLength(g, sum(groups[g].values()), tokens[g] / digits[g], _entropy_bits(sorted(groups[g].values())))
                 for g in sorted(groups, key=lambda g: int(g.rstrip("+"))))


def finish(t: Tally, *, tokens: int, words: int) -> dict:
    """The figures of a tally of a text of `tokens` tokens and `words` words (None: no
    denominator; see the modules of each definition).

    >>> f = finish(Tally(single_words=3, whole_tokens=9, numbers=2, f1_sum=Fraction(5, 3),
    ...                  patterns=Counter({(4, (1,)): 1, (4, (2,)): 1})), tokens=10, words=4)
    >>> f["strr"], f["utf8_whole_token_rate"], round(f["digit_boundary_f1"], 4), f["digit_split_entropy"]
    (0.75, 0.9, 0.8333, 1.0)
    """
    lengths = number_lengths(t)
    return {
        "strr": ratio(t.single_words, words),
        "utf8_whole_token_rate": ratio(t.whole_tokens, tokens),
        "utf8_boundary_crossing_rate": ratio(t.crossing_tokens, tokens),
        "utf8_split_char_rate": ratio(t.split_chars, t.multibyte_chars),
        "digit_boundary_f1": float(t.f1_sum / t.numbers) if t.numbers else None,
        "tokens_per_digit": ratio(t.number_tokens, t.digits),
        # weighted by numbers: each number counts once whatever its length
        "digit_split_entropy": (sum(g.split_entropy * g.numbers for g in lengths) / t.numbers
                                if t.numbers else None),
        "identifier_fragmentation": ratio(t.identifier_tokens, t.identifiers),
        "indentation_tokens": ratio(t.indent_tokens, t.indents),
    }


def _sum_in(starts: np.ndarray, values: np.ndarray, c0: int, c1: int) -> int:
    """Sum of `values` whose `starts` (sorted) lie in ``[c0, c1)``."""
    i, j = np.searchsorted(starts, c0, "left"), np.searchsorted(starts, c1, "left")
    return int(values[i:j].sum())


class PieceTallies:
    """What one encoded piece holds for the tallies, placed by char offset (module doc)."""

    def __init__(self, facts: TextFacts, positions, word_tokens: np.ndarray, utf8: Utf8Tables,
                 overlaps: Overlaps | None = None) -> None:
        """`positions`: the piece's `TokenPositions`; `word_tokens`: tokens overlapping each word;
        `overlaps`: the positions' `Overlaps` when the caller has made it."""
        s, e, in_bytes = positions.starts, positions.ends, positions.in_bytes
        overlaps = Overlaps(s, e) if overlaps is None else overlaps
        ids = positions.ids
        self.n_chars = len(facts.text)
        self.word_starts, self.single = facts.word_starts, (word_tokens == 1).astype(np.int64)
        known = ids < len(utf8.whole)
        self.whole = np.where(known, utf8.whole[np.where(known, ids, 0)], True).astype(np.int64)
        self.crossing = np.where(known, utf8.crossing[np.where(known, ids, 0)], False).astype(np.int64)
        self.mb_chars, split = multibyte_splits(facts, overlaps, in_bytes)
        self.mb_split = split.astype(np.int64)
        self.numbers = number_splits(facts, s, e, in_bytes)
        self.number_starts = np.array([n.start for n in self.numbers], dtype=np.int64)
        self.ident_starts, self.ident_tokens = span_tokens(facts, IDENTIFIER, overlaps, in_bytes)
        self.indent_starts, self.indent_tokens = span_tokens(facts, INDENT, overlaps, in_bytes)

    def tally(self, c0: int = 0, c1: int | None = None, t0: int = 0, t1: int | None = None) -> Tally:
        """The counts of chars ``[c0, c1)`` and tokens ``[t0, t1)`` (default: all of the piece)."""
        c1 = self.n_chars if c1 is None else c1
        i, j = np.searchsorted(self.number_starts, c0, "left"), np.searchsorted(self.number_starts, c1, "left")
        numbers = self.numbers[i:j]
        patterns = Counter((n.digits, n.pattern) for n in numbers)
        return Tally(
            single_words=_sum_in(self.word_starts, self.single, c0, c1),
            whole_tokens=int(self.whole[t0:t1].sum()),
            crossing_tokens=int(self.crossing[t0:t1].sum()),
            multibyte_chars=int(np.searchsorted(self.mb_chars, c1) - np.searchsorted(self.mb_chars, c0)),
            split_chars=_sum_in(self.mb_chars, self.mb_split, c0, c1),
            numbers=len(numbers),
            f1_sum=sum((pattern_f1(*key) * k for key, k in patterns.items()), Fraction(0)),  # exact: any order
            digits=sum(n.digits for n in numbers),
            number_tokens=sum(n.tokens for n in numbers),
            patterns=patterns,
            identifiers=int(np.searchsorted(self.ident_starts, c1) - np.searchsorted(self.ident_starts, c0)),
            identifier_tokens=_sum_in(self.ident_starts, self.ident_tokens, c0, c1),
            indents=int(np.searchsorted(self.indent_starts, c1) - np.searchsorted(self.indent_starts, c0)),
            indent_tokens=_sum_in(self.indent_starts, self.indent_tokens, c0, c1),
        )
