"""ALiBi (Press et al. 2022): attention with linear biases, and `ALiBiEncoding`, the kind the
positional-encodings view shows.

ALiBi adds no vector to the tokens. Each head adds ``-m * |i - j|`` to the attention score of query
position i and key position j, with a fixed slope ``m`` per head (`alibi_slopes`): nearby keys
are preferred, more strongly in the steep heads. So its heatmap is queries x keys, and its curve
is the bias against the distance. What this leaves out: attention itself and the other kinds.
"""

from __future__ import annotations

import math

import numpy as np

from tokviz.core.errors import SettingsError

from .positional_encoding import (
    VIEW_DISTANCE,
    VIEW_MATRIX,
    ColourScale,
    Curve,
    Empty,
    PositionalEncoding,
    no_vector_error,
)
from .positional_params import MAX_POSITIONS, PositionalParams, alibi_slopes, as_positions, check_heads
from .positional_text import check_index, number_text, value_text


def alibi_bias(
    positions: int | np.ndarray,
    *,
    n_heads: int = 8,
    head: int = 0,
    slope: float | None = None,
    causal: bool = False,
    dtype: type = np.float32,
) -> np.ndarray:
    """ALiBi's attention bias ``-m * |i - j|`` for query position i and key position j, ``(n, n)``.

    The slope ``m`` is `slope` if given, else head `head` of `alibi_slopes(n_heads)`. In a causal
    model keys after the query are masked: with ``causal=True`` those entries are NaN (a heatmap
    leaves them blank; use ``-inf`` when adding the bias to attention scores).

    >>> alibi_bias(3, slope=0.5).tolist()
    [[0.0, -0.5, -1.0], [-0.5, 0.0, -0.5], [-1.0, -0.5, 0.0]]
    >>> alibi_bias(2, n_heads=8, head=1, causal=True).tolist()  # slope 1/4
    [[0.0, nan], [-0.25, 0.0]]
    """
    pos = as_positions(positions)
    if slope is None:
        n_heads, head = check_heads(n_heads, head)
        m = float(alibi_slopes(n_heads)[head])
    else:
        if isinstance(slope, bool) or not isinstance(slope, (int, float)) or not math.isfinite(slope) or slope < 0:
            raise SettingsError(f"ALiBi slope must be a number >= 0, got {slope!r}")
        m = float(slope)
    p = pos.astype(dtype)
    out = np.subtract.outer(p, p)  # (n, n) i - j
    np.abs(out, out=out)
    out *= -m
    out += 0.0  # -0.0 -> 0.0 on the diagonal
    if causal:
        out[np.greater.outer(pos, pos).T] = np.nan  # key j after query i
    return out


class ALiBiEncoding(PositionalEncoding):
    """A bias on attention scores by distance, one slope per head: queries x keys, all <= 0.

    >>> enc = ALiBiEncoding()
    >>> enc.views, enc.view_label("matrix"), enc.axis_titles("matrix")
    (('matrix', 'distance'), 'Query × key bias', ('key position', 'query position'))
    >>> enc.formula(5, 3, PositionalParams())
    'bias(5, 3) = -m·|5 - 3| = -0.5·2 = -1.0000 (head 0 of 8, m = 0.5)'
    """

    key = "alibi"
    label = "ALiBi"
    views = (VIEW_MATRIX, VIEW_DISTANCE)
    uses_dim = False
    uses_heads = True
    uses_measure = False
    square_matrix = True

    def view_label(self, view: str) -> str:
        labels = {VIEW_MATRIX: "Query × key bias", VIEW_DISTANCE: "Bias by distance"}
        return labels.get(view) or super().view_label(view)

    def axis_titles(self, view: str) -> tuple[str, str]:
        if view == VIEW_MATRIX:
            return "key position", "query position"
        if view == VIEW_DISTANCE:
            return "distance (key − query)", "bias"
        return super().axis_titles(view)

    def colour_scale(self, view: str, measure: str = "dot") -> ColourScale:
        if view == VIEW_MATRIX:
            return ColourScale(signed=False)  # all <= 0: a sequential map from the most negative to 0
        return super().colour_scale(view, measure)

    def matrix(self, p: PositionalParams, *, positions: np.ndarray | None = None,
               empty: Empty | None = None) -> np.ndarray:
        """Bias of head ``p.head``, queries x keys at `positions`."""
        return alibi_bias(p.n_pos if positions is None else positions, n_heads=p.n_heads, head=p.head)

    def similarity(self, p: PositionalParams, measure: str = "dot", *,
                   positions: np.ndarray | None = None) -> np.ndarray:
        raise no_vector_error(self.key, "alibi_bias")

    def distance_curves(self, p: PositionalParams, *, random_qk: bool = False) -> list[Curve]:
        m = min(p.n_pos - 1, MAX_POSITIONS - 1)
        slope = float(alibi_slopes(p.n_heads)[p.head])
        dist = np.arange(-m, m + 1, dtype=np.float64)
        return [(f"head {p.head}: −{slope:g}·|distance|", dist, -slope * np.abs(dist))]

    def formula(self, pos: int, col: int, p: PositionalParams | None = None, *, value: float | None = None,
                causal: bool = False, digits: int = 4) -> str:
        """Cell (query `pos`, key `col`): ``-m·|pos - col|``; with `causal`, a later key is masked."""
        p = (p or PositionalParams()).validate()
        pos = check_index("position", pos, MAX_POSITIONS)
        key = check_index("key position", col, MAX_POSITIONS)
        if causal and key > pos:
            return f"bias({pos}, {key}): masked (key {key} comes after query {pos})"
        m = float(alibi_slopes(p.n_heads)[p.head])
        dist = abs(pos - key)
        return (
            f"bias({pos}, {key}) = -m·|{pos} - {key}| = -{number_text(m)}·{dist} = "
            f"{value_text(-m * dist + 0.0, digits)} (head {p.head} of {p.n_heads}, m = {number_text(m)})"
        )
