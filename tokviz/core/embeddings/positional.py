"""Positional encodings as matrices for heatmaps: sinusoidal, learned (random), RoPE, ALiBi.

A transformer adds position information to the token vectors. This module computes what the
positional-encodings view shows, as numpy arrays the panel only displays:

- the positions x dimensions matrix of each kind (`positional_matrix`, or `sinusoidal`,
  `learned_random`, `rope_angles`; ALiBi's bias is positions x positions: `alibi_bias`);
- the positions x positions similarity (`positional_similarity`, `similarity`), where the
  sinusoidal case uses its closed form (dot products depend only on the distance) and so stays
  fast for 8192 positions;
- RoPE's query-key score by distance (re-exported from `tokviz.core.embeddings.rope`);
- the hover text and CSV export (re-exported from `tokviz.core.embeddings.positional_text`).

Everything is float32 unless said otherwise (what pyqtgraph draws), computed vectorised.
Matrices of positions x positions grow as n^2 (8192 positions: 256 MB); choose rows with
`display_positions` to draw a subsample. What this leaves out: token embeddings and training
(`tokviz.core.embeddings`), drawing and colour maps (the panel).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tokviz.core.errors import SettingsError

from .positional_params import (
    DEFAULT_BASE,
    KINDS,
    MAX_DIM,
    MAX_HEADS,
    MAX_POSITIONS,
    MIN_DIM,
    MIN_POSITIONS,
    PositionalParams,
    alibi_slopes,
    as_positions,
    check_base,
    check_dim,
    check_heads,
    check_kind,
    check_n_pos,
    check_scale,
    check_seed,
    cos_sin_into,
    frequencies,
    output_array,
    phase_sums,
    toeplitz_rows,
)
from .positional_text import csv_text
from .positional_text import formula_text as _cell_formula
from .rope import (
    LAYOUTS,
    rope_angles,
    rope_demo_vectors,
    rope_rotate,
    rope_score,
    rope_score_by_distance,
    rope_score_matrix,
)

SIMILARITIES = ("dot", "cosine")
LEARNED_BLOCK_ROWS = 256  # rows of a learned random table drawn from one stream
PARALLEL_MIN_ENTRIES = 1 << 20  # tables at least this big are drawn on several threads

__all__ = [
    "DEFAULT_BASE", "KINDS", "LAYOUTS", "MAX_DIM", "MAX_HEADS", "MAX_POSITIONS", "MIN_DIM",
    "MIN_POSITIONS", "SIMILARITIES", "PositionalParams", "alibi_bias", "alibi_slopes",
    "as_positions", "check_base", "check_dim", "check_n_pos", "check_seed", "csv_text",
    "display_positions", "formula_text", "frequencies", "learned_random", "positional_matrix",
    "positional_similarity", "rope_angles", "rope_demo_vectors", "rope_rotate", "rope_score",
    "rope_score_by_distance", "rope_score_matrix", "shift_invariance_error", "similarity",
    "sinusoidal", "sinusoidal_similarity",
]


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


def formula_text(kind: str, pos: int, dim: int, params: PositionalParams | None = None, *,
                 value: float | None = None, causal: bool = False, digits: int = 4) -> str:
    """The hover formula of one heatmap cell (`positional_text.formula_text`); a learned cell's
    value, when not given, is drawn again (row p depends only on the seed and d).

    >>> formula_text("learned", 1, 0, PositionalParams(d=4, seed=1)).startswith("P[1, 0] = ")
    True
    """
    if kind == "learned" and value is None:
        p = params or PositionalParams()
        value = float(learned_random(pos + 1, p.d, p.seed, p.scale)[pos, dim])
    return _cell_formula(kind, pos, dim, params, value=value, causal=causal, digits=digits)


def learned_random(
    positions: int | np.ndarray, d: int, seed: int = 0, scale: float = 0.02, *, dtype: type = np.float32,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """A randomly initialised learned position table: normal(0, scale), shape ``(n_pos, d)``.

    Row ``p`` depends only on `seed`, `d` and `p` (blocks of `LEARNED_BLOCK_ROWS` rows, each drawn
    row by row from its own stream ``(seed, block)``), so growing the number of positions keeps
    the rows already shown, and big tables are drawn on all cores (numpy releases the GIL). The
    normal values come from uniform ones by the Box-Muller transform (`_normal_into`), twice as
    fast as numpy's float32 ziggurat: a new 8192 x 1024 table in ~20 ms on two cores. GPT-2
    initialises its table with scale 0.02. `out`: a C-contiguous float32 ``(n_pos, d)`` array to
    fill instead of a new one (positions ``0..n_pos-1`` only).

    >>> t = learned_random(3, 4, seed=1)
    >>> t.shape, bool(np.array_equal(t[:2], learned_random(2, 4, seed=1)))
    ((3, 4), True)
    """
    pos = as_positions(positions)
    d, seed, scale = check_dim(d), check_seed(seed), check_scale(scale)
    rows = int(pos.max()) + 1
    if out is not None and len(pos) != rows:
        raise SettingsError("learned_random(out=...) needs positions 0..n_pos-1")
    table = output_array(out, (rows, d), np.float32)

    def fill(block: int) -> None:
        part = table[block * LEARNED_BLOCK_ROWS : (block + 1) * LEARNED_BLOCK_ROWS]
        _normal_into(np.random.default_rng([seed, block]), part, scale)

    blocks = range(-(-rows // LEARNED_BLOCK_ROWS))
    if rows * d >= PARALLEL_MIN_ENTRIES and (os.cpu_count() or 1) > 1:
        with ThreadPoolExecutor(min(len(blocks), os.cpu_count() or 1)) as pool:
            list(pool.map(fill, blocks))
    else:
        for block in blocks:
            fill(block)
    if not np.array_equal(pos, np.arange(rows)):
        table = table[pos]
    return table.astype(dtype, copy=False)


def _normal_into(rng: np.random.Generator, out: np.ndarray, scale: float) -> None:
    """Fill a C-contiguous float32 `out` with normal(0, scale) values by the Box-Muller transform:
    uniforms ``u[2k], u[2k+1]`` give ``out[2k], out[2k+1] = sqrt(-2 ln(1 - u[2k])) * (cos, sin)(2 pi
    u[2k+1])``, two independent standard normals (times `scale`). Value ``i`` depends only on
    the stream and ``i``, so a shorter array is a prefix of a longer one. Float32 uniforms cap
    ``|z|`` at about 5.8."""
    flat = out.reshape(-1)
    n = flat.size
    half = (n + 1) // 2
    u = rng.random(2 * half, dtype=np.float32).reshape(half, 2)
    r = np.subtract(np.float32(1), u[:, 0])  # (0, 1]: no log(0); contiguous (SIMD from here on)
    np.log(r, out=r)
    r *= np.float32(-2 * scale * scale)
    np.sqrt(r, out=r)  # radius, times scale
    t = np.multiply(u[:, 1], np.float32(2 * math.pi))
    pairs = flat.reshape(half, 2) if n % 2 == 0 else np.empty((half, 2), dtype=np.float32)
    pairs[:, 0] = r * np.cos(t)
    np.sin(t, out=t)
    t *= r
    pairs[:, 1] = t
    if n % 2:
        flat[:] = pairs.reshape(-1)[:n]


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


def similarity(matrix: np.ndarray, kind: str = "dot") -> np.ndarray:
    """Row-by-row similarity of a ``(n, d)`` matrix: ``"dot"`` products or ``"cosine"``, ``(n, n)``.

    The result is float32 and exactly symmetric; cosine has a unit diagonal (also for an all-zero
    row, whose similarity to every other row is 0) and values clipped to ``[-1, 1]``. Cost is an
    ``(n, d) @ (d, n)`` product: for thousands of rows pass a subsample (`display_positions`).

    >>> similarity(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]), "cosine").astype(float).round(4).tolist()
    [[1.0, 0.7071, 0.0], [0.7071, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    if kind not in SIMILARITIES:
        raise SettingsError(f"unknown similarity {kind!r}; choose one of {', '.join(SIMILARITIES)}")
    x = np.asarray(matrix)
    if x.ndim != 2 or x.dtype.kind not in "fiu":
        raise SettingsError(f"similarity needs a 2-D numeric matrix, got shape {x.shape} of {x.dtype}")
    x = x.astype(np.float32)
    if kind == "cosine":
        norms = np.linalg.norm(x, axis=1)
        x /= np.where(norms > 0, norms, 1)[:, None]
    out = x @ x.T  # (n, n)
    out += out.T  # symmetric to the last bit, whatever the BLAS did
    out *= 0.5
    if kind == "cosine":
        np.clip(out, -1.0, 1.0, out=out)
        np.fill_diagonal(out, 1.0)
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

    >>> s = sinusoidal_similarity(3, 4, kind="dot")
    >>> bool(np.allclose(s, similarity(sinusoidal(3, 4), "dot"), atol=1e-6))
    True
    """
    if kind not in SIMILARITIES:
        raise SettingsError(f"unknown similarity {kind!r}; choose one of {', '.join(SIMILARITIES)}")
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


def positional_matrix(kind: str, params: PositionalParams) -> np.ndarray:
    """The main heatmap of a kind, float32, rows = positions ``0..n_pos-1``:

    - ``"sinusoidal"``, ``"learned"``: ``(n_pos, d)`` encodings;
    - ``"rope"``: ``(n_pos, d // 2)`` rotation angles of each pair, wrapped to ``[-pi, pi]``;
    - ``"alibi"``: ``(n_pos, n_pos)`` bias of head ``params.head`` (queries x keys).

    >>> positional_matrix("rope", PositionalParams(d=8, n_pos=5)).shape
    (5, 4)
    """
    kind = check_kind(kind)
    p = params.validate()
    if kind == "sinusoidal":
        return sinusoidal(p.n_pos, p.d, p.base)
    if kind == "learned":
        return learned_random(p.n_pos, p.d, p.seed, p.scale)
    if kind == "rope":
        return rope_angles(p.n_pos, p.d, p.base, wrap=True)
    return alibi_bias(p.n_pos, n_heads=p.n_heads, head=p.head)


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
    kind = check_kind(kind)
    p = params.validate()
    pos = as_positions(p.n_pos if positions is None else positions)
    if kind == "sinusoidal":
        return sinusoidal_similarity(pos, p.d, p.base, measure)
    if kind == "learned":
        return similarity(learned_random(pos, p.d, p.seed, p.scale), measure)
    raise SettingsError(
        f"{kind} adds no vector to the tokens, so there is no encoding similarity; "
        f"show {'rope_score_matrix' if kind == 'rope' else 'alibi_bias'} instead"
    )


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
