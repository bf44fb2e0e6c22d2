"""Rotary position embeddings (RoPE, Su et al. 2021): angles, rotation, and the relative property.

RoPE does not add a vector to the token embedding. It rotates each pair of query/key dimensions
by an angle proportional to the position: pair ``i`` of a vector at position ``pos`` turns by
``pos * base^(-2i/d)``. Because a rotation by ``m*theta`` followed by the inverse rotation by
``n*theta`` is a rotation by ``(m - n)*theta``, the score ``<R_m q, R_n k>`` depends only on the
distance ``n - m``. `rope_score` computes it the long way (rotate, then dot) and
`rope_score_by_distance` with the closed form; `rope_score_matrix` shows it as a heatmap that is
constant along every diagonal.

Pairing: ``layout="interleaved"`` pairs dimensions ``(2i, 2i+1)`` (RoFormer, GPT-J, Meta's
LLaMA code); ``layout="half"`` pairs ``(i, i + d//2)`` (GPT-NeoX, Hugging Face LLaMA). With an odd
``d`` the last dimension has no partner and is not rotated. What this leaves out: attention
itself, multiple heads, and scaled/extended variants (NTK, YaRN). `RoPEEncoding` is the kind the
positional-encodings view shows: angles per pair, query x key scores and the score by distance.
"""

from __future__ import annotations

import numpy as np

from tokviz.core.errors import SettingsError

from .positional_encoding import (
    VIEW_DIMS,
    VIEW_DISTANCE,
    VIEW_MATRIX,
    VIEW_SIMILARITY,
    ColourScale,
    Curve,
    Empty,
    PositionalEncoding,
    no_vector_error,
)
from .positional_params import (
    DEFAULT_BASE,
    MAX_POSITIONS,
    TWO_PI,
    PositionalParams,
    as_positions,
    check_base,
    check_dim,
    check_seed,
    frequencies,
    output_array,
    phase_sums,
    toeplitz_rows,
)
from .positional_text import check_index, number_text, value_text

LAYOUTS = ("interleaved", "half")


_ROWS_PER_CHUNK = 256  # rows of float64 angles formed at a time


def rope_angles(
    positions: int | np.ndarray,
    d: int,
    base: float = DEFAULT_BASE,
    *,
    wrap: bool = False,
    dtype: type = np.float32,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Rotation angles ``pos * base^(-2i/d)`` in radians, shape ``(n_pos, d // 2)``.

    `positions` is a count (``0..n-1``) or an array of positions. ``wrap=True`` reduces each
    angle to ``[-pi, pi]`` (what a heatmap should show: the raw angles of pair 0 just grow
    with the position). Angles are formed in float64 and then converted to `dtype`. `out`: a
    C-contiguous ``(n_pos, d // 2)`` array of `dtype` to fill instead of a new one.

    >>> rope_angles(3, 4, 100.0, dtype=np.float64).tolist()
    [[0.0, 0.0], [1.0, 0.1], [2.0, 0.2]]
    """
    pos = as_positions(positions).astype(np.float64)
    d = check_dim(d)
    freqs = frequencies(d, check_base(base), d // 2)
    out = output_array(out, (len(pos), len(freqs)), dtype)
    turns = np.empty(0)
    for lo in range(0, len(pos), _ROWS_PER_CHUNK):  # float64 scratch stays small (cache, no page faults)
        angles = np.multiply.outer(pos[lo : lo + _ROWS_PER_CHUNK], freqs)  # (rows, d//2)
        if wrap:
            turns = np.multiply(angles, 1 / TWO_PI, out=turns if turns.shape == angles.shape else None)
            np.rint(turns, out=turns)
            turns *= TWO_PI
            angles -= turns
        out[lo : lo + len(angles)] = angles
    return out


def _pairs(d: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(a, b)`` of the rotated pairs: pair ``i`` is dimensions ``(a[i], b[i])``."""
    if layout not in LAYOUTS:
        raise SettingsError(f"unknown RoPE layout {layout!r}; choose one of {', '.join(LAYOUTS)}")
    h = d // 2
    if layout == "interleaved":
        return np.arange(0, 2 * h, 2), np.arange(1, 2 * h, 2)
    return np.arange(h), np.arange(h, 2 * h)


def _vector_dim(x: np.ndarray) -> int:
    d = x.shape[-1]
    if d < 2:
        raise SettingsError(f"RoPE needs vectors of at least 2 dimensions, got {d}")
    return d


def rope_rotate(
    x: np.ndarray,
    positions: int | float | np.ndarray,
    base: float = DEFAULT_BASE,
    *,
    layout: str = "interleaved",
) -> np.ndarray:
    """Rotate vectors by their positions: ``x`` is ``(d,)`` with one position, or ``(n, d)`` with n.

    Returns float64 of the same shape. Positions may be any real numbers here (negative too):
    this is the maths, not a view with a position limit.

    >>> rope_rotate(np.array([1.0, 0.0]), 1, 10000.0).round(4).tolist()  # pair 0 turns by 1 rad
    [0.5403, 0.8415]
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim not in (1, 2):
        raise SettingsError(f"rope_rotate takes a vector (d,) or a matrix (n, d), got shape {x.shape}")
    d = _vector_dim(x)
    pos = np.asarray(positions, dtype=np.float64)
    if x.ndim == 1 and pos.ndim != 0:
        raise SettingsError("a single vector takes a single position")
    if x.ndim == 2 and pos.shape not in ((), (x.shape[0],)):
        raise SettingsError(f"{x.shape[0]} vectors need {x.shape[0]} positions, got shape {pos.shape}")
    a, b = _pairs(d, layout)
    angles = pos[..., None] * frequencies(d, check_base(base), d // 2)  # (..., d//2)
    c, s = np.cos(angles), np.sin(angles)
    out = x.copy()
    xa, xb = x[..., a], x[..., b]
    out[..., a] = xa * c - xb * s
    out[..., b] = xa * s + xb * c
    return out


def rope_score(
    q: np.ndarray, k: np.ndarray, m: float, n: float, base: float = DEFAULT_BASE, *, layout: str = "interleaved"
) -> float:
    """``<R_m q, R_n k>``: the attention score of query `q` at position `m` and key `k` at `n`.

    Computed the long way (rotate both, then dot), so comparing it with shifted positions is a
    real check of the relative property:

    >>> q, k = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.5, -1.0, 2.0, 1.0])
    >>> bool(np.isclose(rope_score(q, k, 3, 10), rope_score(q, k, 103, 110)))
    True
    """
    q, k = _check_qk(q, k)
    return float(rope_rotate(q, m, base, layout=layout) @ rope_rotate(k, n, base, layout=layout))


def _check_qk(q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    if q.ndim != 1 or q.shape != k.shape:
        raise SettingsError(f"q and k must be vectors of the same length, got shapes {q.shape} and {k.shape}")
    _vector_dim(q)
    return q, k


def _score_curve(q: np.ndarray, k: np.ndarray, base: float, layout: str):
    """``f(m, unit)`` -> scores at distances ``n - m = (-m..m) * unit`` (for `toeplitz_rows`)."""
    d = len(q)
    a, b = _pairs(d, layout)
    c = (q[a] + 1j * q[b]) * np.conj(k[a] + 1j * k[b])  # (d//2,) pairs as complex numbers
    rest = float(q[2 * (d // 2) :] @ k[2 * (d // 2) :])  # the unrotated last dimension of an odd d
    freqs = frequencies(d, check_base(base), d // 2)

    def curve(m: int, unit: int) -> np.ndarray:  # (2m+1,) float64
        # delta = +t*unit: sum Re(c e^(-i delta theta)); delta = -t*unit: the same with conj(c)
        plus, minus = phase_sums(np.stack([c, np.conj(c)]), freqs * unit, m + 1)
        return np.concatenate([minus[:0:-1], plus]) + rest

    return curve


def rope_score_by_distance(
    q: np.ndarray,
    k: np.ndarray,
    max_distance: int,
    base: float = DEFAULT_BASE,
    *,
    layout: str = "interleaved",
) -> tuple[np.ndarray, np.ndarray]:
    """Score of rotated `q` and `k` as a function of the distance ``n - m``: ``(distances, scores)``.

    `distances` runs over ``-max_distance..max_distance`` (int64) and ``scores[j]`` is
    ``<R_m q, R_n k>`` for any ``m, n`` with ``n - m = distances[j]`` (float64). Closed form: with
    the pairs as complex numbers ``q_i``, ``k_i`` and ``c_i = q_i * conj(k_i)``,
    ``score(delta) = sum_i Re(c_i exp(-1j * delta * theta_i))`` plus ``q[-1] * k[-1]`` for an odd
    ``d`` (the unrotated last dimension); `phase_sums` evaluates it for all distances at once.

    With ``q = k = ones`` the curve shows RoPE's long-term decay (RoFormer, section 3.4.3).

    >>> dist, s = rope_score_by_distance(np.ones(4), np.ones(4), 2, 10000.0)
    >>> dist.tolist(), s.round(4).tolist()
    ([-2, -1, 0, 1, 2], [1.1673, 3.0805, 4.0, 3.0805, 1.1673])
    """
    q, k = _check_qk(q, k)
    whole = isinstance(max_distance, (int, np.integer)) and not isinstance(max_distance, bool)
    if not whole or not 0 <= max_distance < MAX_POSITIONS:
        raise SettingsError(f"max_distance must be between 0 and {MAX_POSITIONS - 1}, got {max_distance!r}")
    m = int(max_distance)
    return np.arange(-m, m + 1, dtype=np.int64), _score_curve(q, k, base, layout)(m, 1)


def rope_score_matrix(
    q: np.ndarray,
    k: np.ndarray,
    positions: int | np.ndarray,
    base: float = DEFAULT_BASE,
    *,
    layout: str = "interleaved",
    explicit: bool = False,
) -> np.ndarray:
    """Scores ``S[i, j] = <R_{p_i} q, R_{p_j} k>`` for every pair of positions, float64 ``(n, n)``.

    By default the closed form of `rope_score_by_distance` is laid along the diagonals (fast:
    2048 positions in a few ms). ``explicit=True`` instead rotates `q` and `k` to every position
    and multiplies, using nothing of the relative property, so ``shift_invariance_error(S)`` (in
    `tokviz.core.embeddings.positional`) being ~0 demonstrates it; that costs an ``(n, d) @ (d, n)`` product.

    >>> S = rope_score_matrix(np.ones(4), np.ones(4), 3, 10000.0, explicit=True)
    >>> bool(np.allclose(np.diag(S), 4.0)), bool(np.isclose(S[0, 1], S[1, 2]))
    (True, True)
    >>> bool(np.allclose(S, rope_score_matrix(np.ones(4), np.ones(4), 3, 10000.0)))
    True
    """
    q, k = _check_qk(q, k)
    pos = as_positions(positions)
    if not explicit:
        return toeplitz_rows(_score_curve(q, k, base, layout), pos, np.float64)
    n = len(pos)
    rq = rope_rotate(np.broadcast_to(q, (n, len(q))), pos, base, layout=layout)
    rk = rope_rotate(np.broadcast_to(k, (n, len(k))), pos, base, layout=layout)
    return rq @ rk.T


def rope_demo_vectors(d: int, *, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A query and key for the distance view: all ones (``seed=None``), or seeded standard normals.

    >>> q, k = rope_demo_vectors(4)
    >>> q.tolist(), k.tolist()
    ([1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0])
    """
    d = check_dim(d)
    if seed is None:
        return np.ones(d), np.ones(d)
    rng = np.random.default_rng(check_seed(seed))
    return rng.standard_normal(d), rng.standard_normal(d)


class RoPEEncoding(PositionalEncoding):
    """Rotations of query/key pairs: angles per pair, and scores that depend only on the distance.

    >>> enc, p = RoPEEncoding(), PositionalParams(d=8, n_pos=5)
    >>> enc.matrix(p).shape, enc.view_label("similarity"), enc.column_name(2)
    ((5, 4), 'Query × key scores', 'pair 2')
    >>> enc.formula(5, 3, PositionalParams(d=64))
    'θ(5, 3) = 5 · 10000^(-6/64) = 2.1085 rad (rotates dimensions 6, 7)'
    """

    key = "rope"
    label = "RoPE"
    views = (VIEW_MATRIX, VIEW_SIMILARITY, VIEW_DISTANCE, VIEW_DIMS)
    uses_base = True
    uses_measure = False
    qk_views = (VIEW_SIMILARITY, VIEW_DISTANCE)

    def view_label(self, view: str) -> str:
        labels = {VIEW_SIMILARITY: "Query × key scores", VIEW_DISTANCE: "Score by distance"}
        return labels.get(view) or super().view_label(view)

    def axis_titles(self, view: str) -> tuple[str, str]:
        if view == VIEW_MATRIX:
            return "pair i (angle θ, wrapped to ±π)", "position"
        if view == VIEW_DISTANCE:
            return "distance n − m", "score"
        if view == VIEW_DIMS:
            return "position", "angle (rad)"
        return super().axis_titles(view)

    def colour_scale(self, view: str, measure: str = "dot") -> ColourScale:
        if view == VIEW_MATRIX:
            return ColourScale(levels=(-np.pi, np.pi), cyclic=True)
        return super().colour_scale(view, measure)

    def note(self, view: str) -> str:
        return "score <R_i q, R_j k> of a query at row i and a key at column j" if view == VIEW_SIMILARITY else ""

    def column_name(self, col: int) -> str:
        return f"pair {col}"

    def matrix(self, p: PositionalParams, *, positions: np.ndarray | None = None,
               empty: Empty | None = None) -> np.ndarray:
        """Angles of every pair, wrapped to ``[-pi, pi]`` (positions x ``d // 2``)."""
        pos = as_positions(p.n_pos if positions is None else positions)
        return rope_angles(pos, p.d, p.base, wrap=True, out=empty((len(pos), p.d // 2)) if empty else None)

    def similarity(self, p: PositionalParams, measure: str = "dot", *,
                   positions: np.ndarray | None = None) -> np.ndarray:
        raise no_vector_error(self.key, "rope_score_matrix")

    def pair_matrix(self, p: PositionalParams, measure: str = "dot", *,
                    positions: np.ndarray | None = None, random_qk: bool = False) -> np.ndarray:
        """Query x key scores ``<R_i q, R_j k>`` (`rope_score_matrix`), float32."""
        q, k = rope_demo_vectors(p.d, seed=p.seed if random_qk else None)
        return rope_score_matrix(q, k, p.n_pos if positions is None else positions, p.base).astype(np.float32)

    def distance_curves(self, p: PositionalParams, *, random_qk: bool = False) -> list[Curve]:
        q, k = rope_demo_vectors(p.d, seed=p.seed if random_qk else None)
        dist, score = rope_score_by_distance(q, k, min(p.n_pos - 1, MAX_POSITIONS - 1), p.base)
        return [("score <R_m q, R_n k>", dist.astype(np.float64), score)]

    def formula(self, pos: int, col: int, p: PositionalParams | None = None, *, value: float | None = None,
                causal: bool = False, digits: int = 4) -> str:
        """Cell (`pos`, pair `col`): the angle ``pos · base^(-2i/d)``, and its wrapped value."""
        p = (p or PositionalParams()).validate()
        pos = check_index("position", pos, MAX_POSITIONS)
        pair = check_index("pair", col, p.d // 2)
        theta = pos * p.base ** (-2 * pair / p.d)
        text = (f"θ({pos}, {pair}) = {pos} · {number_text(p.base)}^(-{2 * pair}/{p.d}) = "
                f"{value_text(theta, digits)} rad")
        wrapped = theta - TWO_PI * round(theta / TWO_PI)
        if abs(wrapped - theta) > 1e-12:
            text += f" ≡ {value_text(wrapped, digits)} rad (mod 2π)"
        return text + f" (rotates dimensions {2 * pair}, {2 * pair + 1})"

    def pair_text(self, pos: int, other: int, value: float, *, measure: str = "dot") -> str:
        return (f"query at {pos}, key at {other} (distance {other - pos}): score {value:.6g}\n"
                f"<R_{pos} q, R_{other} k> depends only on the distance {other - pos}")
