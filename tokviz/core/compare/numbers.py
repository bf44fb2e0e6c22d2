"""How a tokenizer splits numbers: three-digit boundary F1, tokens per digit, split-pattern entropy.

A number is a run of ``\\d`` characters (Unicode digits, as the source's ``re`` pattern). Its
*boundaries* are the digit positions k (1 .. L-1) where the token changes between digit k-1 and
digit k; a digit belongs to the last token covering it (the source's
``keep_later_token_on_overlap``). The definitions follow swiss-ai/tokenizer-intrinsic-evals
(``metrics/math.py``, ``DigitBoundaryMetrics``), after Singh & Strouse 2024 ("Tokenization
counts: the impact of tokenization on arithmetic in frontier LLMs"):

- ideal boundaries are right-aligned place-value groups: positions L-3, L-6, ... above 0
  ("1234567" -> {1, 4}, "1|234|567"), the number lens's `right_aligned_boundaries`;
- each number's F1 of its boundaries against the ideal ones, with the source's vacuous cases (no
  boundaries and none ideal: 1; boundaries where none are ideal: 0; none where some are: 0);
  ``digit_boundary_f1`` is the mean over numbers;
- tokens per digit: the number's tokens (boundaries + 1) over its digits, by length and overall
  (tokviz: total tokens over total digits, the source averages per number);
- split entropy: the Shannon entropy in bits of the boundary patterns of the numbers of one length
  (lengths 10 and above form one group, "10+").

What this leaves out: counting over documents (`tallies`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from tokviz.core.explain.numbers import right_aligned_boundaries
from tokviz.core.text.digits import decimal_mask

from .text import RunFinder, TextFacts, runs


def digit_runs(facts: TextFacts) -> tuple[np.ndarray, np.ndarray]:
    """``\\d+``'s matches in ``facts.text``: the runs of decimal digits, from its code points.

    >>> from tokviz.core.compare.text import text_facts
    >>> [a.tolist() for a in digit_runs(text_facts("a 12 b\u0663\u0664 3"))]
    [[2, 6, 9], [4, 8, 10]]
    """
    return runs(decimal_mask(facts.codes))


NUMBER = RunFinder(re.compile(r"\d+"), digit_runs)
LONG_GROUP = 10  # numbers of this many digits or more share one length group ("10+")


def boundary_f1(actual: frozenset[int], ideal: frozenset[int]) -> Fraction:
    """F1 of `actual` boundaries against `ideal` ones, exact, with the source's vacuous cases.

    >>> boundary_f1(frozenset({4}), frozenset({1, 4})), boundary_f1(frozenset(), frozenset())
    (Fraction(2, 3), Fraction(1, 1))
    >>> boundary_f1(frozenset({1}), frozenset()), boundary_f1(frozenset(), frozenset({1, 4}))
    (Fraction(0, 1), Fraction(0, 1))
    """
    if not actual and not ideal:
        return Fraction(1)
    if not actual or not ideal:
        return Fraction(0)
    tp = len(actual & ideal)
    # 2PR / (P + R) = 2 TP / (2 TP + FP + FN)
    return Fraction(2 * tp, len(actual) + len(ideal))


def length_group(length: int) -> str:
    """The group a number's length falls in: ``"1"`` .. ``"9"``, or ``"10+"``."""
    return str(length) if length < LONG_GROUP else f"{LONG_GROUP}+"


@dataclass(frozen=True)
class NumberSplit:
    """One number of a text: where it starts (char), its digits and its boundary pattern."""

    start: int
    digits: int
    pattern: tuple[int, ...]  # boundary positions, ascending

    @property
    def tokens(self) -> int:
        return len(self.pattern) + 1

    @property
    def f1(self) -> Fraction:
        return pattern_f1(self.digits, self.pattern)


@lru_cache(maxsize=1 << 14)
def pattern_f1(digits: int, pattern: tuple[int, ...]) -> Fraction:
    """The boundary F1 of a number of `digits` digits split at `pattern` (kept: a text's numbers
    repeat a few patterns, and its documents' tallies ask for each number's again).

    >>> pattern_f1(7, (4,)), pattern_f1(3, ())
    (Fraction(2, 3), Fraction(1, 1))
    """
    return boundary_f1(frozenset(pattern), right_aligned_boundaries(digits))


def number_splits(facts: TextFacts, starts: np.ndarray, ends: np.ndarray, in_bytes: bool) -> list[NumberSplit]:
    """The numbers of ``facts.text`` and how the tokens ``[start, end)`` (bytes, or chars when not
    `in_bytes`; starts non-decreasing) split them; a number with a digit no token covers is left
    out (as in the source).

    >>> from tokviz.core.compare.text import text_facts
    >>> f = text_facts("x 1234567")  # tokens: "x", " ", "1234", "567"
    >>> [(n.start, n.digits, n.pattern, n.f1) for n in number_splits(f, np.array([0, 1, 2, 6]), np.array([1, 2, 6, 9]), True)]
    [(2, 7, (4,), Fraction(2, 3))]
    """
    lo, hi = facts.matches(NUMBER)
    if not len(lo):
        return []
    lengths = hi - lo
    firsts = np.concatenate(([0], np.cumsum(lengths)[:-1]))  # each number's first digit, in (digits,)
    # every digit's char offset, all numbers at once: (digits,)
    chars = np.repeat(lo - firsts, lengths) + np.arange(lengths.sum())
    at = facts.char_bytes[chars + 1] - 1 if in_bytes else chars  # each digit's last position
    tok = np.searchsorted(starts, at, "right") - 1  # the last token starting at or before it
    covered = (tok >= 0) & (ends[np.maximum(tok, 0)] > at)
    whole = np.logical_and.reduceat(covered, firsts)  # every digit of the number covered
    # boundaries: digits (not a number's first) where the token changes, as (digit index)
    change = np.flatnonzero(np.diff(tok) != 0) + 1
    change = change[~np.isin(change, firsts)]
    owner = np.searchsorted(firsts, change, "right") - 1  # the number each boundary is in
    cut = np.searchsorted(owner, np.arange(len(lo) + 1), "left").tolist()
    inner = (change - firsts[owner]).tolist()  # the boundary's position in its number
    return [NumberSplit(start, n, tuple(inner[cut[k]:cut[k + 1]]))
            for k, (start, n, ok) in enumerate(zip(lo.tolist(), lengths.tolist(), whole.tolist())) if ok]
