"""The sinusoidal positional encoding (Vaswani et al. 2017): its table, its similarity in closed
form, and `SinusoidalEncoding`, the kind the positional-encodings view shows.

``PE(pos, 2i) = sin(pos / base^(2i/d))``, ``PE(pos, 2i+1) = cos(pos / base^(2i/d))``. Dot products of
two rows depend only on the distance of the positions, so the positions x positions similarity
is laid out along the diagonals from one value per distance (fast for 8192 positions). What this
leaves out: the other kinds (`learned`, `rope`, `alibi`) and the registry of kinds
(`tokviz.core.embeddings.positional_kinds`).
"""

from __future__ import annotations

import math

import numpy as np

from .positional_encoding import VIEW_MATRIX, ColourScale, Empty, PositionalEncoding
from .positional_params import (
    DEFAULT_BASE,
    MAX_POSITIONS,
    PositionalParams,
    as_positions,
    check_base,
    check_dim,
    check_measure,
    cos_sin_into,
    frequencies,
    output_array,
    phase_sums,
    toeplitz_rows,
)
from .positional_text import check_index, number_text, value_text


def sinusoidal(
    positions: int | np.ndarray, d: int, base: float = DEFAULT_BASE, *, dtype: type = np.float32,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """The sinusoidal encoding of Vaswani et al. (2017), shape ``(n_pos, d)``.

    ``PE(pos, 2i) = sin(pos / base^(2i/d))`` and ``PE(pos, 2i+1) = cos(pos / base^(2i/d))``.
    An odd `d` follows the same per-column rule: the last column ``d-1 = 2i`` is a sine (exponent
    ``(d-1)/d``) without its cosine partner, so rows then differ slightly in norm. Angles are
    reduced in float64 before a float32 sine/cosine, so values are within ~2e-7 of the exact ones
    at every position (8192 x 1024 takes ~20 ms). `out`: a C-contiguous ``(n_pos, d)`` array to
    fill (recycled memory) instead of a new one.

    >>> pe = sinusoidal(2, 4, dtype=np.float64)
    >>> pe.round(4).tolist()  # row 0: sin 0 = 0, cos 0 = 1; row 1: sin 1, cos 1, sin .01, cos .01
    [[0.0, 1.0, 0.0, 1.0], [0.8415, 0.5403, 0.01, 1.0]]
    """
    pos = as_positions(positions)
    d = check_dim(d)
    freqs = frequencies(d, check_base(base))  # (ceil(d/2),)
    out = output_array(out, (len(pos), d), dtype)
    sin_out = out[:, 0::2]  # (n, ceil(d/2))
    cos_out = out[:, 1::2]  # (n, floor(d/2))
    if d % 2:
        cos_sin_into(pos, freqs[:-1], cos_out, None)
        cos_sin_into(pos, freqs, None, sin_out)
    else:
        cos_sin_into(pos, freqs, cos_out, sin_out)
    return out


def sinusoidal_similarity(
    positions: int | np.ndarray, d: int, base: float = DEFAULT_BASE, kind: str = "dot"
) -> np.ndarray:
    """`similarity` of `sinusoidal` rows, from the closed form, float32 ``(n, n)``.

    ``PE(p) . PE(q) = sum_i cos((p - q) w_i)`` over the sine/cosine pairs: a function of the
    distance only, computed once per distance (`phase_sums`) and laid out along the diagonals:
    no ``n x d x n`` product, so the cost is writing the result (2048 positions: ~5 ms; 8192:
    256 MB, ~0.1 s). An odd `d` adds the unpaired sine column's rank-one term
    ``sin(p w) sin(q w)``. Every row of an even `d` has norm ``sqrt(d/2)``, so cosine is the dot
    product divided by ``d/2``.

    >>> s, pe = sinusoidal_similarity(3, 4, kind="dot"), sinusoidal(3, 4)
    >>> bool(np.allclose(s, pe @ pe.T, atol=1e-6))  # the dot products of the rows
    True
    """
    kind = check_measure(kind)
    pos = as_positions(positions)
    d = check_dim(d)
    freqs = frequencies(d, check_base(base))
    paired = freqs[: d // 2]

    def dot_by_distance(m: int, unit: int) -> np.ndarray:  # (2m+1,) at distances (-m..m) * unit
        half = phase_sums(np.ones(len(paired)), paired * unit, m + 1)  # sum_i cos(t unit w_i)
        return np.concatenate([half[:0:-1], half])

    out = toeplitz_rows(dot_by_distance, pos, np.float32)
    if d % 2:
        s = np.empty((len(pos), 1), dtype=np.float32)
        cos_sin_into(pos, freqs[-1:], None, s)
        out += s * s.T  # (n, 1) * (1, n)
    if kind == "cosine":
        if d % 2:
            norms = np.sqrt(d // 2 + s[:, 0].astype(np.float64) ** 2).astype(np.float32)
            out /= np.outer(norms, norms)  # (n, n), symmetric to the last bit
        else:
            out *= np.float32(2.0 / d)
        np.clip(out, -1.0, 1.0, out=out)
        np.fill_diagonal(out, 1.0)
    return out


class SinusoidalEncoding(PositionalEncoding):
    """Fixed sines and cosines added to the tokens: values in [-1, 1], wavelengths set by the base.

    >>> enc = SinusoidalEncoding()
    >>> enc.matrix(PositionalParams(d=4, n_pos=2)).shape, enc.colour_scale("matrix").levels
    ((2, 4), (-1.0, 1.0))
    >>> enc.formula(5, 6, PositionalParams(d=64))
    'PE(5, 2·3) = sin(5 / 10000^(6/64)) = 0.8589'
    """

    key = "sinusoidal"
    label = "Sinusoidal"
    uses_base = True

    def colour_scale(self, view: str, measure: str = "dot") -> ColourScale:
        if view == VIEW_MATRIX:
            return ColourScale(levels=(-1.0, 1.0))
        return super().colour_scale(view, measure)

    def table_key(self, p: PositionalParams) -> tuple:
        return p.d, p.base

    def matrix(self, p: PositionalParams, *, positions: np.ndarray | None = None,
               empty: Empty | None = None) -> np.ndarray:
        pos = as_positions(p.n_pos if positions is None else positions)
        return sinusoidal(pos, p.d, p.base, out=empty((len(pos), p.d)) if empty else None)

    def similarity(self, p: PositionalParams, measure: str = "dot", *,
                   positions: np.ndarray | None = None) -> np.ndarray:
        return sinusoidal_similarity(p.n_pos if positions is None else positions, p.d, p.base, measure)

    def formula(self, pos: int, col: int, p: PositionalParams | None = None, *, value: float | None = None,
                causal: bool = False, digits: int = 4) -> str:
        p = (p or PositionalParams()).validate()
        pos = check_index("position", pos, MAX_POSITIONS)
        dim = check_index("dimension", col, p.d)
        i, odd = divmod(dim, 2)
        v = (math.cos if odd else math.sin)(pos / p.base ** (2 * i / p.d))
        column = f"2·{i}+1" if odd else f"2·{i}"
        fn = "cos" if odd else "sin"
        return f"PE({pos}, {column}) = {fn}({pos} / {number_text(p.base)}^({2 * i}/{p.d})) = {value_text(v, digits)}"
