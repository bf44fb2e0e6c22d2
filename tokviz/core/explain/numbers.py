"""The number lens: how a tokenizer cuts numbers, beside the cut that follows place value.

Writing 1234567 as 1,234,567 groups the digits in threes from the right; a tokenizer that cuts
digit runs into groups of three from the left (cl100k, o200k: ``123|456|7``) or by what was common
in its corpus (GPT-2: ``123|45|67``) gives a model pieces that do not line up with place value
(Singh & Strouse 2024, "Tokenization counts: the impact of tokenization on arithmetic in frontier
LLMs"). `split_number` cuts one number; `number_grid` cuts 1-1000 and lays them out for a heatmap
(row: the hundreds, column: the last two digits), each cell's pattern the lengths of its pieces.

What this leaves out: metrics over a whole text (`tokviz.core.compare`) and drawing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tokviz.core.errors import Cancelled

GRID_COLUMNS = 100  # the last two digits
# the piece-length patterns of 1-1000, most whole first; the heatmap's colour order
PATTERNS = ("1", "2", "3", "4", "1+1", "1+2", "2+1", "1+3", "3+1", "2+2", "1+1+1")
OTHER = len(PATTERNS)  # any other pattern (a tokenizer that cuts digits one by one past 3, ...)


def right_aligned_boundaries(n_digits: int) -> frozenset[int]:
    """Cut positions (characters before the cut) of place-value groups of three from the right:
    the number lens's aligned cuts and the ideal boundaries of `tokviz.core.compare`'s digit F1.

    >>> sorted(right_aligned_boundaries(7)), sorted(right_aligned_boundaries(3)), sorted(right_aligned_boundaries(6))
    ([1, 4], [], [3])
    """
    return frozenset(range(n_digits - 3, 0, -3))


@dataclass(frozen=True)
class NumberSplit:
    """One number as a tokenizer cuts it."""

    text: str
    pieces: tuple[str, ...]
    ids: tuple[int, ...]

    @property
    def cuts(self) -> frozenset[int]:
        """Positions between pieces (characters before each cut)."""
        out, at = set(), 0
        for p in self.pieces[:-1]:
            at += len(p)
            out.add(at)
        return frozenset(out)

    @property
    def pattern(self) -> str:
        """The pieces' lengths: ``"3+3+1"`` for ``123|456|7``."""
        return "+".join(str(len(p)) for p in self.pieces)

    @property
    def place_value_cuts(self) -> frozenset[int]:
        """Where groups of three digits from the right begin (`right_aligned_boundaries`), for a
        number of digits only; empty otherwise."""
        return right_aligned_boundaries(len(self.text)) if self.text.isdigit() else frozenset()

    @property
    def aligned(self) -> bool:
        """Whether every cut is a place-value cut (a number left whole counts as aligned)."""
        return self.cuts <= self.place_value_cuts


def split_number(tok, text: str, *, step: int | None = None) -> NumberSplit:
    """`text` (a number) as `tok` cuts it at `step` (None: all its merges), as ordinary text:
    GPT-2 cuts ``"1234567"`` into ``("123", "45", "67")``, cl100k into ``("123", "456", "7")``."""
    enc = tok.encode_ordinary(text, step=step) if step is not None else tok.encode_ordinary(text)
    # pieces from where tokens start: a lone "▁" (SentencePiece) shares the first digit's span
    starts = sorted({s for s, e in enc.spans if e > s} | ({0} if text else set()))
    pieces = tuple(text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True))
    return NumberSplit(text, pieces, tuple(enc.ids))


@dataclass(frozen=True)
class NumberGrid:
    """1-`last` cut by one tokenizer, laid out as rows of `GRID_COLUMNS` (cell ``(r, c)`` is the
    number ``100 r + c``; 0 and numbers past `last` are blank)."""

    splits: tuple[NumberSplit, ...]  # splits[n - 1] is the number n

    @property
    def last(self) -> int:
        return len(self.splits)

    def split_of(self, n: int) -> NumberSplit | None:
        return self.splits[n - 1] if 1 <= n <= self.last else None

    def _cells(self, value: Callable[[NumberSplit], float]) -> np.ndarray:
        rows = self.last // GRID_COLUMNS + 1
        out = np.full(rows * GRID_COLUMNS, np.nan)
        out[1:self.last + 1] = [value(s) for s in self.splits]
        return out.reshape(rows, GRID_COLUMNS)

    def token_counts(self) -> np.ndarray:
        """Tokens per number, as the grid (NaN where blank)."""
        return self._cells(lambda s: len(s.pieces))

    def pattern_codes(self) -> np.ndarray:
        """Each number's pattern as its index in `PATTERNS` (`OTHER` for the rest; NaN where blank)."""
        return self._cells(lambda s: PATTERNS.index(s.pattern) if s.pattern in PATTERNS else OTHER)

    def summary(self) -> dict[str, float]:
        """``one_token``: share of the numbers that are one token; ``tokens_per_number``: the mean;
        ``aligned``: share whose cuts are all place-value cuts."""
        n = max(1, self.last)
        return {"one_token": sum(len(s.pieces) == 1 for s in self.splits) / n,
                "tokens_per_number": sum(len(s.pieces) for s in self.splits) / n,
                "aligned": sum(s.aligned for s in self.splits) / n}


def number_grid(tok, *, last: int = 1000, step: int | None = None,
                should_stop: Callable[[], bool] = lambda: False, **_progress) -> NumberGrid:
    """The numbers 1-`last` as `tok` cuts them (see `NumberGrid`); `should_stop` is checked every
    100 numbers (raising `Cancelled`), so a worker can give up between them."""
    splits = []
    for n in range(1, last + 1):
        if n % 100 == 0 and should_stop():
            raise Cancelled()
        splits.append(split_number(tok, str(n), step=step))
    return NumberGrid(tuple(splits))
