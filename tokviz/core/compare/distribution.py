"""Figures of a text's unigram token distribution: entropies, efficiencies, type-token ratio, rank.

Each function takes the occurrences of each distinct token (`counts`, zeros ignored), so a text
measured in parts gives the same figures as measured whole. The definitions are those of
``tokenization-scorer`` (Zouhar et al. 2023, "Tokenization and the Noiseless Channel";
zouharvi/tokenization-scorer ``metrics.py``), which the tests check to 1e-9:

- `shannon_entropy`, `renyi_entropy`: in bits; ``H_a = log2(sum p_i^a) / (1 - a)``;
- `efficiency`: entropy over ``log2(V)``, V the vocabulary size given, or by default the number of
  types observed (the package's default; tokviz's ``renyi_efficiency`` divides by the full
  vocabulary, as the package does with ``vocab=V``);
- `percentile_frequency`: the probability mass between two percentiles of the types sorted by
  frequency (Gowda and May 2020), `bits` (minus tokens times ``log2`` of the observed types),
  `sequence_length` (minus tokens per line, the package's line average).

Beyond the package: `type_token_ratio` (types / tokens) and `average_rank`, the mean frequency
rank of a token (types ranked 1, 2, ... from the most frequent; TokEval's ``avg_token_rank``,
swiss-ai/tokenizer-intrinsic-evals). What this leaves out: counting (`metrics`).
"""

from __future__ import annotations

import numpy as np


def _probabilities(counts: np.ndarray) -> np.ndarray:
    """The distribution of the non-zero `counts`, most frequent first (empty without tokens)."""
    c = np.asarray(counts, dtype=np.float64)
    c = -np.sort(-c[c > 0])
    total = c.sum()
    return c / total if total > 0 else c


def shannon_entropy(counts: np.ndarray) -> float | None:
    """``-sum p log2 p`` in bits; None without tokens.

    >>> shannon_entropy(np.array([1, 1, 2]))
    1.5
    """
    p = _probabilities(counts)
    if not len(p):
        return None
    return float(-(p * np.log2(p)).sum()) + 0.0


def renyi_entropy(counts: np.ndarray, alpha: float) -> float | None:
    """Rényi entropy of order `alpha` in bits (Shannon's at ``alpha == 1``); None without tokens.

    >>> renyi_entropy(np.array([1, 1, 1, 1]), 2.5)
    2.0
    """
    p = _probabilities(counts)
    if not len(p):
        return None
    if alpha == 1.0:
        return shannon_entropy(counts)
    return float(np.log2((p**alpha).sum()) / (1.0 - alpha)) + 0.0


def efficiency(counts: np.ndarray, alpha: float = 1.0, vocab_size: int | None = None) -> float | None:
    """Entropy of order `alpha` (1: Shannon) over ``log2`` of `vocab_size`, by default of the
    number of types observed; None without tokens or with fewer than 2 (types or ids).

    >>> efficiency(np.array([3, 1]), 1.0), round(efficiency(np.array([3, 1]), 1.0, 4), 4)
    (0.8112781244591328, 0.4056)
    """
    types = int((np.asarray(counts) > 0).sum())
    v = types if vocab_size is None else vocab_size
    h = renyi_entropy(counts, alpha)
    if h is None or v < 2:
        return None
    return h / float(np.log2(v))


def type_token_ratio(counts: np.ndarray) -> float | None:
    """Distinct tokens over tokens; None without tokens.

    >>> type_token_ratio(np.array([3, 1]))
    0.5
    """
    c = np.asarray(counts)
    total = int(c.sum())
    return int((c > 0).sum()) / total if total else None


def average_rank(counts: np.ndarray) -> float | None:
    """Mean frequency rank of a token: ``sum_r r * p_r`` with the types ranked 1, 2, ... from the
    most frequent (ties do not change the sum); None without tokens.

    >>> average_rank(np.array([1, 3]))  # 3/4 of the tokens have rank 1, 1/4 rank 2
    1.25
    """
    p = _probabilities(counts)
    if not len(p):
        return None
    return float((np.arange(1, len(p) + 1) * p).sum())


def percentile_frequency(counts: np.ndarray, start: float = 0.03, end: float = 0.83) -> float | None:
    """Probability mass of the types between the `start` and `end` percentiles of the types
    sorted by frequency (the package's index arithmetic, ties in any order); None without tokens.

    >>> round(percentile_frequency(np.array([4, 2, 1, 1])), 6)  # types 0..2 of 4: 4/8 + 2/8 + 1/8
    0.875
    """
    p = _probabilities(counts)
    n = len(p)
    if not n:
        return None
    i = min(int(n * start), n - 1)
    j = min(int(n * end), n - 1)
    if i == j:
        i = max(0, i - 1)
    if i == j:
        j = min(n - 1, j + 1)
    return float(np.sum([p[k] for k in range(i, j)])) + 0.0


def bits(counts: np.ndarray) -> float | None:
    """Minus tokens times ``log2`` of the observed types (higher is better); None without tokens.

    >>> bits(np.array([2, 2]))
    -4.0
    """
    c = np.asarray(counts)
    types = int((c > 0).sum())
    return -float(c.sum()) * float(np.log2(types)) + 0.0 if types else None


def sequence_length(tokens: int, lines: int) -> float | None:
    """Minus tokens per line, the package's length figure; None without lines.

    >>> sequence_length(12, 4)
    -3.0
    """
    return -tokens / lines if lines else None
