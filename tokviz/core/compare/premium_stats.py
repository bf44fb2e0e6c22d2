"""Premiums as the fairness papers chart them: each model's premiums sorted, and per-script spreads.

Petrov et al. 2023 ("Language Model Tokenizers Introduce Unfairness Between Languages") plot each
tokenizer's premiums over the languages sorted from cheapest to dearest, one curve per tokenizer,
and group the languages by script. `premium_order` gives that sorted order for one model;
`script_premiums` the median and quartiles of each model's premiums over the documents of each
dominant script. Both accept a comparison still arriving: a model with fewer premiums than there
are documents, or with None (no reference count yet), counts what it has.

What this leaves out: measuring (`run`), the per-script means of the tables (`report.script_summary`),
drawing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .documents import Document
from .run import ModelResult


def premium_order(premiums: Sequence[float | None]) -> list[int]:
    """Indices of the defined premiums, cheapest first (ties in document order).

    >>> premium_order([2.0, None, 0.5, 2.0, 1.0])
    [2, 4, 0, 3]
    """
    return sorted((i for i, p in enumerate(premiums) if p is not None), key=lambda i: (premiums[i], i))


@dataclass(frozen=True)
class Spread:
    """Median, quartiles and extremes of `n` premiums (numpy's linear-interpolation percentiles)."""

    n: int
    median: float
    q1: float
    q3: float
    low: float
    high: float


def spread(values: Sequence[float]) -> Spread | None:
    """The `Spread` of `values`, None when there are none.

    >>> s = spread([4.0, 1.0, 2.0, 3.0])
    >>> s.n, s.median, s.q1, s.q3, s.low, s.high
    (4, 2.5, 1.75, 3.25, 1.0, 4.0)
    """
    if not len(values):
        return None
    q = np.percentile(np.asarray(values, dtype=np.float64), [0, 25, 50, 75, 100])
    low, q1, median, q3, high = (float(v) for v in q)
    return Spread(len(values), median, q1, q3, low, high)


@dataclass(frozen=True)
class ScriptPremiums:
    """The documents whose dominant script is `script` and each model's premiums over them."""

    script: str
    documents: tuple[int, ...]  # document indices, in order
    spreads: tuple[Spread | None, ...]  # one per model; None: no premium of that model yet


def script_premiums(results: Sequence[ModelResult], docs: Sequence[Document]) -> list[ScriptPremiums]:
    """One row per dominant script, cheapest first by the first model's median (scripts it has
    no premium for last), then by name.

    >>> d = [Document(1, "A", 0, 4, "Latin"), Document(2, "B", 4, 6, "Cyrillic"), Document(3, "C", 6, 9, "Latin")]
    >>> rows = script_premiums([ModelResult("m", premiums=(1.0, 0.5, 3.0))], d)
    >>> [(s.script, s.documents, s.spreads[0].median) for s in rows]
    [('Cyrillic', (1,), 0.5), ('Latin', (0, 2), 2.0)]
    """
    groups: dict[str, list[int]] = {}
    for i, d in enumerate(docs):
        groups.setdefault(d.script, []).append(i)
    rows = []
    for script, idx in groups.items():
        spreads = []
        for r in results:
            p = r.premiums
            spreads.append(spread([p[i] for i in idx if i < len(p) and p[i] is not None]))
        rows.append(ScriptPremiums(script, tuple(idx), tuple(spreads)))

    def key(row: ScriptPremiums) -> tuple:
        first = row.spreads[0] if row.spreads else None
        return (first is None, first.median if first is not None else 0.0, row.script)

    rows.sort(key=key)
    return rows
