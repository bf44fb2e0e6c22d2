"""Positional encodings as matrices for heatmaps: one import for the panel, engine and tests.

A transformer adds position information to the token vectors. The kinds the positional-encodings
view shows are objects of one protocol (`PositionalEncoding`, listed in `ENCODINGS`, looked up by
key with `encoding`); their maths lives in one module per kind and is re-exported here:

- the positions x dimensions matrix of each kind (`positional_matrix`, or `sinusoidal`,
  `learned_random`, `rope_angles`; ALiBi's bias is positions x positions: `alibi_bias`);
- the positions x positions similarity (`positional_similarity`, `similarity`), where the
  sinusoidal case uses its closed form (dot products depend only on the distance) and so stays
  fast for 8192 positions;
- RoPE's query-key score by distance (`tokviz.core.embeddings.rope`);
- the hover formula of a cell (`formula_text`) and CSV export (`csv_text`).

Everything is float32 unless said otherwise (what pyqtgraph draws), computed vectorised.
Matrices of positions x positions grow as n^2 (8192 positions: 256 MB); choose rows with
`display_positions` to draw a subsample. What this leaves out: token embeddings and training
(`tokviz.core.embeddings`), drawing and colour maps (the panel).
"""

from __future__ import annotations

import math

import numpy as np

from tokviz.core.errors import SettingsError

from .alibi import alibi_bias
from .learned import LEARNED_BLOCK_ROWS, PARALLEL_MIN_ENTRIES, learned_random
from .positional_encoding import (
    VIEW_DIMS,
    VIEW_DISTANCE,
    VIEW_MATRIX,
    VIEW_SIMILARITY,
    VIEWS,
    ColourScale,
    PositionalEncoding,
)
from .positional_kinds import ENCODINGS, KINDS, TRAINED, encoding
from .positional_params import (
    DEFAULT_BASE,
    MAX_DIM,
    MAX_HEADS,
    MAX_POSITIONS,
    MIN_DIM,
    MIN_POSITIONS,
    SIMILARITIES,
    PositionalParams,
    alibi_slopes,
    as_positions,
    check_base,
    check_dim,
    check_n_pos,
    check_seed,
    frequencies,
    similarity,
)
from .positional_text import csv_text
from .rope import (
    LAYOUTS,
    rope_angles,
    rope_demo_vectors,
    rope_rotate,
    rope_score,
    rope_score_by_distance,
    rope_score_matrix,
)
from .sinusoidal import sinusoidal, sinusoidal_similarity

__all__ = [
    "DEFAULT_BASE", "ENCODINGS", "KINDS", "LAYOUTS", "LEARNED_BLOCK_ROWS", "MAX_DIM", "MAX_HEADS",
    "MAX_POSITIONS", "MIN_DIM", "MIN_POSITIONS", "PARALLEL_MIN_ENTRIES", "SIMILARITIES", "TRAINED",
    "VIEWS", "VIEW_DIMS", "VIEW_DISTANCE", "VIEW_MATRIX", "VIEW_SIMILARITY", "ColourScale",
    "PositionalEncoding", "PositionalParams", "alibi_bias", "alibi_slopes", "as_positions", "check_base",
    "check_dim", "check_n_pos", "check_seed", "csv_text", "display_positions", "encoding", "formula_text",
    "frequencies", "learned_random", "positional_matrix", "positional_similarity", "rope_angles",
    "rope_demo_vectors", "rope_rotate", "rope_score", "rope_score_by_distance", "rope_score_matrix",
    "shift_invariance_error", "similarity", "sinusoidal", "sinusoidal_similarity",
]


def formula_text(kind: str, pos: int, dim: int, params: PositionalParams | None = None, *,
                 value: float | None = None, causal: bool = False, digits: int = 4) -> str:
    """The formula of one heatmap cell with the numbers filled in (the hover readout), computed
    in float64 from the formula, so it also checks the float32 matrix.

    `pos` is the row's position; `dim` is the column: a dimension (sinusoidal, learned), a pair
    index (RoPE: the columns of `rope_angles`) or the key position (ALiBi, where `pos` is the
    query). `params` gives d, base, seed, scale and heads (defaults if None). A learned cell's
    value, when not given, is drawn again (row p depends only on the seed and d).

    >>> p = PositionalParams(d=64)
    >>> formula_text("sinusoidal", 5, 6, p)
    'PE(5, 2·3) = sin(5 / 10000^(6/64)) = 0.8589'
    >>> formula_text("sinusoidal", 0, 1, p)
    'PE(0, 2·0+1) = cos(0 / 10000^(0/64)) = 1.0000'
    >>> formula_text("rope", 5, 3, p)
    'θ(5, 3) = 5 · 10000^(-6/64) = 2.1085 rad (rotates dimensions 6, 7)'
    >>> formula_text("alibi", 5, 3, p)
    'bias(5, 3) = -m·|5 - 3| = -0.5·2 = -1.0000 (head 0 of 8, m = 0.5)'
    >>> formula_text("learned", 1, 0, PositionalParams(d=4, seed=1)).startswith("P[1, 0] = ")
    True
    """
    return encoding(kind).formula(pos, dim, params, value=value, causal=causal, digits=digits)


def positional_matrix(kind: str, params: PositionalParams) -> np.ndarray:
    """The main heatmap of a kind, float32, rows = positions ``0..n_pos-1``:

    - ``"sinusoidal"``, ``"learned"``: ``(n_pos, d)`` encodings;
    - ``"rope"``: ``(n_pos, d // 2)`` rotation angles of each pair, wrapped to ``[-pi, pi]``;
    - ``"alibi"``: ``(n_pos, n_pos)`` bias of head ``params.head`` (queries x keys).

    >>> positional_matrix("rope", PositionalParams(d=8, n_pos=5)).shape
    (5, 4)
    """
    enc = encoding(kind)
    return enc.matrix(params.validate())


def positional_similarity(
    kind: str, params: PositionalParams, measure: str = "dot", *, positions: np.ndarray | None = None
) -> np.ndarray:
    """Positions x positions similarity of the encodings of a kind (default rows ``0..n_pos-1``).

    Sinusoidal uses the closed form (`sinusoidal_similarity`); learned multiplies the table
    (pass a subsample as `positions` for thousands of rows). RoPE and ALiBi add no vector to
    the tokens: their positions x positions views are `rope_score_matrix` and `alibi_bias`.

    >>> positional_similarity("sinusoidal", PositionalParams(d=4, n_pos=3), "cosine").diagonal().tolist()
    [1.0, 1.0, 1.0]
    """
    enc = encoding(kind)
    p = params.validate()
    return enc.similarity(p, measure, positions=as_positions(p.n_pos if positions is None else positions))


def shift_invariance_error(matrix: np.ndarray) -> float:
    """Largest ``|M[i, j] - M[i+1, j+1]|``: 0 exactly when ``M[i, j]`` depends only on ``j - i``.

    For consecutive positions this is how far a positions x positions matrix is from depending
    on the distance only: ~0 for RoPE scores and sinusoidal dot products, large for a random
    learned table.

    >>> shift_invariance_error(np.array([[1, 2], [3, 1]])), shift_invariance_error(np.array([[1, 2], [3, 4]]))
    (0.0, 3.0)
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] < 2 or m.shape[1] < 2:
        return 0.0
    return float(np.max(np.abs(m[:-1, :-1] - m[1:, 1:])))


def display_positions(n_pos: int, max_rows: int = 2048) -> np.ndarray:
    """At most `max_rows` evenly spaced positions of ``0..n_pos-1`` (always starting at 0).

    Positions x positions matrices grow as ``n^2``; drawing 2048 x 2048 (16 MB) instead of
    8192 x 8192 (256 MB) keeps a heatmap responsive, and a screen shows no more anyway. The step
    is constant, so `sinusoidal_similarity` keeps its fast path.

    >>> display_positions(10, 4).tolist()
    [0, 3, 6, 9]
    """
    n_pos = check_n_pos(n_pos)
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise SettingsError(f"max_rows must be a whole number >= 1, got {max_rows!r}")
    step = max(1, math.ceil(n_pos / max_rows))
    return np.arange(0, n_pos, step, dtype=np.int64)
