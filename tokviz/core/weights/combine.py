"""Putting the weights' evidence beside the vocabulary-only glitch score, and one ranking of both.

The two numbers are on scales nobody calibrated against each other (a score built from merge ranks
and corpus counts; a norm or a cosine), so they are combined by ranks, not values: a token's
combined value is the geometric mean of its rank by the glitch score (highest first) and its rank
by Magikarp's indicator (lowest first), among the tokens ranked (the rank product of Breitling et
al., 2004). 1 means first on both; a token first by the weights but 1,000th by the vocabulary gets
about 32, one 30th on both gets 30. Ties share their average rank. Lower combined values come first.

What this leaves out: computing either piece of evidence.

    >>> combined_ranks(np.array([3.0, 2.0, 1.0]), np.array([0.5, 0.1, 0.9])).round(2).tolist()
    [1.41, 1.41, 3.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .indicators import WeightEvidence


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of `values` from the smallest, ties sharing their average rank.

    >>> average_ranks(np.array([0.3, 0.1, 0.3])).tolist()
    [2.5, 1.0, 2.5]
    """
    v = np.asarray(values, np.float64)
    order = np.argsort(v, kind="stable")
    sorted_v = v[order]
    starts = np.flatnonzero(np.r_[True, sorted_v[1:] != sorted_v[:-1]])
    ends = np.r_[starts[1:], len(v)]
    mean_rank = (starts + ends + 1) / 2.0  # ranks starts+1 .. ends, averaged
    ranks = np.empty(len(v))
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def combined_ranks(scores: np.ndarray, indicator: np.ndarray) -> np.ndarray:
    """The geometric mean of the rank by `scores` (highest first) and by `indicator` (lowest first)."""
    return np.sqrt(average_ranks(-np.asarray(scores, np.float64)) * average_ranks(indicator))


@dataclass(frozen=True)
class WeightColumns:
    """The weights' columns for a list of token ids (arrays aligned with `ids`)."""

    ids: np.ndarray
    indicator: np.ndarray
    cosine: np.ndarray | None
    cosine_no_pc: np.ndarray | None
    unembedding_norm: np.ndarray
    embedding_norm: np.ndarray | None
    weight_rank: np.ndarray  # rank by the indicator among `ids` (1 = most likely under-trained)
    combined: np.ndarray  # see the module doc
    reference: np.ndarray  # bool: one of the known-unused tokens the cosine compares with

    @classmethod
    def of(cls, evidence: WeightEvidence, ids: np.ndarray, scores: np.ndarray) -> WeightColumns:
        """The columns of tokens `ids` whose glitch scores are `scores`."""
        ids = np.asarray(ids, np.int64)
        indicator = evidence.indicator[ids].astype(np.float64)

        def pick(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[ids]

        return cls(ids, indicator, pick(evidence.cosine), pick(evidence.cosine_no_pc),
                   evidence.unembedding_norm[ids], pick(evidence.embedding_norm), average_ranks(indicator),
                   combined_ranks(scores, indicator), np.isin(ids, evidence.reference))

    def row(self, k: int) -> dict:
        """Row `k`'s values for JSON (None where a column does not apply)."""
        def val(a: np.ndarray | None) -> float | None:
            return None if a is None else round(float(a[k]), 6)

        return {"weight_indicator": val(self.indicator), "cos_unused": val(self.cosine),
                "cos_unused_no_pc": val(self.cosine_no_pc), "unembedding_norm": val(self.unembedding_norm),
                "embedding_norm": val(self.embedding_norm), "weight_rank": float(self.weight_rank[k]),
                "combined": round(float(self.combined[k]), 3), "reference": bool(self.reference[k])}

    def order(self) -> np.ndarray:
        """Positions in `ids` by combined value, lowest first; ties by id."""
        return np.lexsort((self.ids, self.combined))
