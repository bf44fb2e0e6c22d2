"""What a parity-aware run did to each language: tokens per document at every step, premiums, Gini.

A `ParityStep` records only what its merge saved in each document; the costs at step k are the
documents' first token counts minus everything saved in the first k steps. `CostTable` keeps
that as a dense (steps + 1, documents) array, extended as steps arrive, so a view scrubbing the
timeline reads a row. Premiums and the Gini coefficient are `tokviz.core.compare`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tokviz.core.compare.documents import gini, premiums


@dataclass(frozen=True)
class Parity:
    """The documents' figures at one step."""

    step: int
    tokens: tuple[int, ...]  # per document
    premiums: tuple[float | None, ...]  # tokens over the reference document's
    gini: float | None  # of the tokens (the same as of the premiums)
    served: int | None  # the document step `step` served (-1: a global step; None at step 0)


class CostTable:
    """Tokens of every document after each step: ``table.at(k)`` is a row of ints.

    >>> class S:  # a step that saved 3 tokens in document 1
    ...     saved = ((1, 3),)
    >>> t = CostTable((10, 20)); t.extend([S(), S()]); t.at(0).tolist(), t.at(2).tolist()
    ([10, 20], [10, 14])
    """

    def __init__(self, initial: Sequence[int]) -> None:
        self._rows = np.array([list(initial)], dtype=np.int64)
        self._n = 1  # rows filled

    @property
    def n_steps(self) -> int:
        return self._n - 1

    def extend(self, steps: Sequence) -> None:
        """Add a row for each of `steps` (the steps after the last one added)."""
        if not steps:
            return
        need = self._n + len(steps)
        if need > len(self._rows):
            grown = np.empty((max(need, 2 * len(self._rows)), self._rows.shape[1]), dtype=np.int64)
            grown[: self._n] = self._rows[: self._n]
            self._rows = grown
        row = self._rows[self._n - 1].copy()
        for s in steps:
            for doc, n in s.saved:
                row[doc] -= n
            self._rows[self._n] = row
            self._n += 1

    def at(self, k: int) -> np.ndarray:
        """Tokens per document after the first `k` steps (clamped to the steps added)."""
        return self._rows[max(0, min(int(k), self._n - 1))]

    def rows(self, ks: Sequence[int]) -> np.ndarray:
        """The rows of steps `ks` as one (len(ks), documents) array."""
        return self._rows[np.clip(np.asarray(ks, dtype=np.int64), 0, self._n - 1)]


def parity_at(tokens: np.ndarray, reference: int, *, step: int = 0, served: int | None = None) -> Parity:
    """`Parity` of one row of token counts, premiums against document `reference`."""
    values = [int(t) for t in tokens]
    return Parity(step, tuple(values), tuple(premiums(values, reference)), gini(values), served)


def gini_curve(table: CostTable, ks: Sequence[int]) -> list[float | None]:
    """The Gini coefficient of the documents' tokens at each step of `ks` (`compare.gini` of each
    row, computed for all rows at once).

    >>> t = CostTable((1, 1, 4)); gini_curve(t, [0]) == [gini([1, 1, 4])]
    True
    """
    x = np.sort(table.rows(ks).astype(np.float64), axis=1)
    n = x.shape[1]
    total = x.sum(axis=1)
    weights = 2 * np.arange(1, n + 1) - n - 1  # the double sum over sorted values, as compare.gini
    with np.errstate(invalid="ignore", divide="ignore"):
        values = (x @ weights) / (n * total)
    return [float(v) + 0.0 if t > 0 else None for v, t in zip(values.tolist(), total.tolist())]
