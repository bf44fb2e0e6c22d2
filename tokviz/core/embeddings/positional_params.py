"""Limits, validated parameters and scalar building blocks shared by the positional modules.

`PositionalParams` holds the controls of the positional-encodings view (model dimension, number
of positions, base, seed, ALiBi heads) and checks them, raising `SettingsError` with a message that
says what to choose. The small pieces of maths used by more than one module live here too:
the sinusoid/RoPE frequencies ``base^(-2i/d)``, the ALiBi slopes, a fast, accurate float32
sine/cosine for large angles, and the row-by-row `similarity` of a table. The matrices of each kind
are built in `sinusoidal`, `learned`, `rope` and `alibi` (this package); this module leaves them out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from tokviz.core.errors import SettingsError

MIN_DIM, MAX_DIM = 2, 2048
MIN_POSITIONS, MAX_POSITIONS = 1, 8192
DEFAULT_BASE = 10000.0
MAX_HEADS = 1024
SIMILARITIES = ("dot", "cosine")
TWO_PI = 2.0 * math.pi
_CHUNK_ROWS = 256  # rows per chunk in `cos_sin_into`: keeps the float64 temporaries in cache


@dataclass(frozen=True, slots=True)
class PositionalParams:
    """The controls of the positional-encodings view; `validate()` checks them all.

    >>> PositionalParams(d=64, n_pos=128).validate().base
    10000.0
    >>> PositionalParams(d=1).validate()
    Traceback (most recent call last):
    ...
    tokviz.core.errors.SettingsError: model dimension d must be between 2 and 2048, got 1
    """

    d: int = 64  # model dimension
    n_pos: int = 128  # number of positions (rows)
    base: float = DEFAULT_BASE  # wavelength base of sinusoidal and RoPE encodings
    seed: int = 0  # seed of random ("learned") tables
    scale: float = 0.02  # standard deviation of random tables (GPT-2 uses 0.02)
    n_heads: int = 8  # ALiBi heads (the slopes depend on it)
    head: int = 0  # ALiBi head shown (0-based; head 0 has the steepest slope)

    def validate(self) -> "PositionalParams":
        """Raise `SettingsError` for any control out of range; return self."""
        check_dim(self.d)
        check_n_pos(self.n_pos)
        check_base(self.base)
        check_seed(self.seed)
        check_scale(self.scale)
        check_heads(self.n_heads, self.head)
        return self


def _is_int(value: object) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def check_dim(d: object) -> int:
    """The model dimension as an int in ``[2, 2048]``, or `SettingsError`."""
    if not _is_int(d) or not MIN_DIM <= d <= MAX_DIM:  # type: ignore[operator]
        raise SettingsError(f"model dimension d must be between {MIN_DIM} and {MAX_DIM}, got {d!r}")
    return int(d)  # type: ignore[arg-type]


def check_n_pos(n_pos: object) -> int:
    """The number of positions as an int in ``[1, 8192]``, or `SettingsError`."""
    if not _is_int(n_pos) or not MIN_POSITIONS <= n_pos <= MAX_POSITIONS:  # type: ignore[operator]
        raise SettingsError(
            f"number of positions must be between {MIN_POSITIONS} and {MAX_POSITIONS}, got {n_pos!r}"
        )
    return int(n_pos)  # type: ignore[arg-type]


def check_base(base: object) -> float:
    """The base as a finite float > 1, or `SettingsError` (base 1 would make every frequency 1)."""
    if not isinstance(base, Real) or isinstance(base, bool) or not math.isfinite(base) or base <= 1:
        raise SettingsError(f"base must be a finite number greater than 1 (default 10000), got {base!r}")
    return float(base)


def check_seed(seed: object) -> int:
    """The seed as a non-negative int, or `SettingsError`."""
    if not _is_int(seed) or seed < 0:  # type: ignore[operator]
        raise SettingsError(f"seed must be a whole number >= 0, got {seed!r}")
    return int(seed)  # type: ignore[arg-type]


def check_scale(scale: object) -> float:
    """The standard deviation of a random table as a finite float > 0, or `SettingsError`."""
    if not isinstance(scale, Real) or isinstance(scale, bool) or not math.isfinite(scale) or scale <= 0:
        raise SettingsError(f"scale (standard deviation) must be a positive number, got {scale!r}")
    return float(scale)


def check_heads(n_heads: object, head: object = 0) -> tuple[int, int]:
    """``(n_heads, head)`` with ``1 <= n_heads <= 1024`` and ``0 <= head < n_heads``."""
    if not _is_int(n_heads) or not 1 <= n_heads <= MAX_HEADS:  # type: ignore[operator]
        raise SettingsError(f"number of heads must be between 1 and {MAX_HEADS}, got {n_heads!r}")
    if not _is_int(head) or not 0 <= head < n_heads:  # type: ignore[operator]
        last = int(n_heads) - 1  # type: ignore[call-overload]
        raise SettingsError(f"head must be between 0 and {last} (0-based), got {head!r}")
    return int(n_heads), int(head)  # type: ignore[call-overload]


def check_measure(measure: object) -> str:
    """One of `SIMILARITIES`, or `SettingsError`."""
    if measure not in SIMILARITIES:
        raise SettingsError(f"unknown similarity {measure!r}; choose one of {', '.join(SIMILARITIES)}")
    return str(measure)


def as_positions(positions: object) -> np.ndarray:
    """Positions as a 1-D int64 array: an int ``n`` means ``0..n-1``; an array is checked.

    >>> as_positions(3).tolist(), as_positions([0, 4, 8]).tolist()
    ([0, 1, 2], [0, 4, 8])
    """
    if _is_int(positions):
        return np.arange(check_n_pos(positions), dtype=np.int64)
    arr = np.asarray(positions)
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
        raise SettingsError("positions must be a number of positions or a non-empty 1-D array of whole numbers")
    if arr.size > MAX_POSITIONS or arr.min() < 0 or arr.max() >= MAX_POSITIONS:
        raise SettingsError(
            f"positions must lie in 0..{MAX_POSITIONS - 1}, at most {MAX_POSITIONS} of them"
        )
    return arr.astype(np.int64, copy=False)


def frequencies(d: int, base: float, n: int | None = None) -> np.ndarray:
    """Angular frequencies ``base^(-2i/d)`` for ``i = 0..n-1`` (default ``n = ceil(d/2)``), float64.

    Column ``2i`` and ``2i+1`` of a sinusoidal encoding use frequency ``i``; RoPE rotates pair
    ``i`` by ``pos * frequencies[i]``.

    >>> frequencies(4, 10000.0).tolist()
    [1.0, 0.01]
    """
    n = (d + 1) // 2 if n is None else n
    return np.power(float(base), -2.0 * np.arange(n, dtype=np.float64) / d)


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi head slopes (Press et al. 2022), float64 of shape ``(n_heads,)``.

    For a power of two ``h`` they are the geometric sequence ``2^(-8/h * i)``, ``i = 1..h``; other
    head counts take the slopes of the next lower power of two and fill up with every other slope
    of the next higher one (the reference implementation's rule).

    >>> alibi_slopes(8).tolist()
    [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]
    >>> alibi_slopes(3).round(4).tolist()
    [0.0625, 0.0039, 0.25]
    """
    n_heads, _ = check_heads(n_heads)

    def pow2(h: int) -> list[float]:
        return [2.0 ** (-8.0 * i / h) for i in range(1, h + 1)]

    low = 1 << (n_heads.bit_length() - 1)
    slopes = pow2(low)
    if low < n_heads:
        slopes += pow2(2 * low)[0::2][: n_heads - low]
    return np.array(slopes, dtype=np.float64)


def cos_sin_into(
    positions: np.ndarray, freqs: np.ndarray, cos_out: np.ndarray | None, sin_out: np.ndarray | None
) -> None:
    """Write ``cos`` / ``sin`` of ``positions[:, None] * freqs[None, :]`` into the outputs.

    Large angles (position 8191 at frequency 1) lose ~1e-3 if formed in float32, and float64
    ``sin`` is ~10x slower than numpy's SIMD float32 one. So the angle is formed and reduced to
    ``[-pi, pi]`` in float64 (as turns: fractional part of ``pos * f / 2pi``), then the sine and
    cosine run in the outputs' dtype: for float32 the error is ~2e-7 and 8192 x 512 angles take
    about 20 ms. Outputs (same dtype) may be strided views such as ``out[:, 0::2]``; pass None to
    skip one of them.
    """
    turns = freqs / TWO_PI
    n, m = len(positions), len(freqs)
    rows = min(n, _CHUNK_ROWS)
    a64 = np.empty((rows, m), dtype=np.float64)
    dtype = (cos_out if cos_out is not None else sin_out).dtype  # type: ignore[union-attr]
    a32 = a64 if dtype == np.float64 else np.empty((rows, m), dtype=dtype)
    pos = positions.astype(np.float64)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        a, b = a64[: stop - start], a32[: stop - start]
        np.multiply.outer(pos[start:stop], turns, out=a)  # (rows, m) turns
        a -= np.rint(a)
        a *= TWO_PI
        if a32 is not a64:
            b[...] = a
        if cos_out is not None:
            np.cos(b, out=cos_out[start:stop])
        if sin_out is not None:
            np.sin(b, out=sin_out[start:stop])


def output_array(out: np.ndarray | None, shape: tuple[int, int], dtype: type) -> np.ndarray:
    """`out` (recycled memory for a result) checked against `shape` and `dtype`, or a new array."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    if out.shape != shape or out.dtype != np.dtype(dtype) or not out.flags.c_contiguous:
        raise SettingsError(f"out must be a C-contiguous {np.dtype(dtype)} array of shape {shape}, "
                            f"got {out.dtype} {out.shape}")
    return out


def phase_sums(coeffs: np.ndarray, freqs: np.ndarray, n: int) -> np.ndarray:
    """``S[t] = Re sum_i coeffs[i] * exp(-1j * t * freqs[i])`` for ``t = 0..n-1``, float64 ``(n,)``.

    That is ``sum_i Re(c_i) cos(t w_i) + Im(c_i) sin(t w_i)``: dot products of sinusoids and
    RoPE scores are such sums over the distance t. `coeffs` of shape ``(m, h)`` gives ``m`` sums
    at once, shape ``(m, n)``. Splitting ``t = a*B + b`` with ``B ~ sqrt(n)`` gives
    ``S = Re((c * e^(-i a B w)) @ e^(-i b w)^T)``: one small matrix product and only
    ``2 sqrt(n)`` exponentials per frequency, exact to ~1e-12 (8192 distances x 512
    frequencies: a few ms instead of 4M float64 cosines).

    >>> phase_sums(np.array([1.0]), np.array([np.pi / 2]), 3).round(12).tolist()
    [1.0, 0.0, -1.0]
    """
    c = np.atleast_2d(coeffs)  # (m, h)
    block = max(1, math.isqrt(max(n - 1, 0)) + 1)
    n_high = -(-n // block)
    low = np.exp(-1j * np.multiply.outer(np.arange(block, dtype=np.float64), freqs))  # (B, h)
    high = np.exp(-1j * np.multiply.outer(np.arange(n_high, dtype=np.float64) * block, freqs))  # (A, h)
    high = (c[:, None, :] * high[None]).reshape(-1, len(freqs))  # (m*A, h)
    # Re(H @ L^T) = Hr @ Lr^T - Hi @ Li^T as one real product. einsum, not BLAS: the product is
    # small (~1e7 multiply-adds), and waking BLAS threads on a busy machine (or while a training
    # worker holds them) can cost tens of milliseconds.
    left = np.concatenate([high.real, -high.imag], axis=1)  # (m*A, 2h)
    right = np.concatenate([low.real, low.imag], axis=1)  # (B, 2h)
    out = np.einsum("ak,bk->ab", left, right).reshape(len(c), -1)[:, :n] + 0.0  # t = a*B + b; -0 -> 0
    return out if np.ndim(coeffs) == 2 else out[0]


def toeplitz_rows(by_distance, positions: np.ndarray, dtype: type) -> np.ndarray:
    """``M[i, j] = f(positions[j] - positions[i])``, built from values of f per distance.

    ``by_distance(m, unit)`` must return f at the distances ``(-m..m) * unit`` as an array of
    length ``2m + 1``. Evenly spaced positions (step s) need one call with ``m = n - 1,
    unit = s`` and each row is a contiguous slice; other positions use ``unit = 1`` and a gather.

    >>> toeplitz_rows(lambda m, u: np.arange(-m, m + 1) * u, np.array([0, 2, 4]), np.int64).tolist()
    [[0, 2, 4], [-2, 0, 2], [-4, -2, 0]]
    """
    n = len(positions)
    out = np.empty((n, n), dtype=dtype)
    steps = np.diff(positions)
    if n < 3 or bool(np.all(steps == steps[0])):
        unit = int(steps[0]) if n > 1 and steps[0] != 0 else 1
        g = np.asarray(by_distance(n - 1, unit)).astype(dtype, copy=False)  # (2n-1,)
        for i in range(n):  # row i: distances -i..n-1-i, a contiguous slice of g
            out[i] = g[n - 1 - i : 2 * n - 1 - i]
        if n > 1 and steps[0] == 0:
            out[...] = g[n - 1]  # all positions equal: distance 0 everywhere
    else:
        m = int(positions.max() - positions.min())
        g = np.asarray(by_distance(m, 1)).astype(dtype, copy=False)  # (2m+1,)
        for i in range(n):
            out[i] = g[m + positions - positions[i]]
    return out


def similarity(matrix: np.ndarray, kind: str = "dot") -> np.ndarray:
    """Row-by-row similarity of a ``(n, d)`` matrix: ``"dot"`` products or ``"cosine"``, ``(n, n)``.

    The result is float32 and exactly symmetric; cosine has a unit diagonal (also for an all-zero
    row, whose similarity to every other row is 0) and values clipped to ``[-1, 1]``. Cost is an
    ``(n, d) @ (d, n)`` product: for thousands of rows pass a subsample (`display_positions`).

    >>> similarity(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]), "cosine").astype(float).round(4).tolist()
    [[1.0, 0.7071, 0.0], [0.7071, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    kind = check_measure(kind)
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
