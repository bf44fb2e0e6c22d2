"""Text for the positional-encodings view: the hover formula with numbers filled in, and CSV.

`formula_text` explains one cell of a heatmap the way a reader would check it by hand
("PE(5, 2·3) = sin(5 / 10000^(6/64)) = 0.8589"); its value is computed in float64 from the
formula, so it also checks the float32 matrix. `csv_text` turns any matrix (with optional row
labels, e.g. the tokens of the current text) into CSV. What this leaves out: images (PNG export
is the panel's, through pyqtgraph) and writing files.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence

import numpy as np

from tokviz.core.errors import SettingsError

from .positional_params import MAX_POSITIONS, TWO_PI, PositionalParams, alibi_slopes, check_kind


def _num(x: float) -> str:
    """A parameter without noise: 10000.0 -> "10000", 0.5 -> "0.5"."""
    return format(float(x), ".10g")


def _value(v: float, digits: int) -> str:
    if v == 0 or abs(v) >= 10.0 ** (1 - digits) or not math.isfinite(v):
        return f"{v:.{digits}f}"
    return f"{v:.{digits}e}"


def _index(name: str, value: object, stop: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < stop:
        raise SettingsError(f"{name} must be between 0 and {stop - 1}, got {value!r}")
    return int(value)


def formula_text(
    kind: str,
    pos: int,
    dim: int,
    params: PositionalParams | None = None,
    *,
    value: float | None = None,
    causal: bool = False,
    digits: int = 4,
) -> str:
    """The formula of one heatmap cell with the numbers filled in (the hover readout).

    `pos` is the row's position; `dim` is the column: a dimension (sinusoidal, learned), a pair
    index (RoPE: the columns of `rope_angles`) or the key position (ALiBi, where `pos` is the
    query). `params` gives d, base, seed, scale and heads (defaults if None). A learned cell's
    value is random, so pass the `value` shown (`positional.formula_text` draws it when missing).

    >>> p = PositionalParams(d=64)
    >>> formula_text("sinusoidal", 5, 6, p)
    'PE(5, 2·3) = sin(5 / 10000^(6/64)) = 0.8589'
    >>> formula_text("sinusoidal", 0, 1, p)
    'PE(0, 2·0+1) = cos(0 / 10000^(0/64)) = 1.0000'
    >>> formula_text("rope", 5, 3, p)
    'θ(5, 3) = 5 · 10000^(-6/64) = 2.1085 rad (rotates dimensions 6, 7)'
    >>> formula_text("alibi", 5, 3, p)
    'bias(5, 3) = -m·|5 - 3| = -0.5·2 = -1.0000 (head 0 of 8, m = 0.5)'
    """
    kind = check_kind(kind)
    p = (params or PositionalParams()).validate()
    pos = _index("position", pos, MAX_POSITIONS)
    if kind == "sinusoidal":
        dim = _index("dimension", dim, p.d)
        i, odd = divmod(dim, 2)
        v = (math.cos if odd else math.sin)(pos / p.base ** (2 * i / p.d))
        col = f"2·{i}+1" if odd else f"2·{i}"
        fn = "cos" if odd else "sin"
        return f"PE({pos}, {col}) = {fn}({pos} / {_num(p.base)}^({2 * i}/{p.d})) = {_value(v, digits)}"
    if kind == "learned":
        dim = _index("dimension", dim, p.d)
        if value is None:
            raise SettingsError("a learned cell's value is random: pass the value shown "
                                "(tokviz.core.embeddings.positional.formula_text draws it again)")
        return (
            f"P[{pos}, {dim}] = {_value(float(value), digits)} "
            f"(learned table: random normal(0, {_num(p.scale)}²), seed {p.seed})"
        )
    if kind == "rope":
        dim = _index("pair", dim, p.d // 2)
        theta = pos * p.base ** (-2 * dim / p.d)
        text = f"θ({pos}, {dim}) = {pos} · {_num(p.base)}^(-{2 * dim}/{p.d}) = {_value(theta, digits)} rad"
        wrapped = theta - TWO_PI * round(theta / TWO_PI)
        if abs(wrapped - theta) > 1e-12:
            text += f" ≡ {_value(wrapped, digits)} rad (mod 2π)"
        return text + f" (rotates dimensions {2 * dim}, {2 * dim + 1})"
    key = _index("key position", dim, MAX_POSITIONS)
    if causal and key > pos:
        return f"bias({pos}, {key}): masked (key {key} comes after query {pos})"
    m = float(alibi_slopes(p.n_heads)[p.head])
    dist = abs(pos - key)
    return (
        f"bias({pos}, {key}) = -m·|{pos} - {key}| = -{_num(m)}·{dist} = {_value(-m * dist + 0.0, digits)} "
        f"(head {p.head} of {p.n_heads}, m = {_num(m)})"
    )


def _quote(label: object) -> str:
    if str(label) == "":
        return ""  # csv.writer would write a lone empty field as ""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow([str(label)])
    return buf.getvalue()


def csv_text(
    matrix: np.ndarray,
    *,
    row_labels: Sequence[object] | None = None,
    col_labels: Sequence[object] | None = None,
    corner: str = "",
    fmt: str = "%.7g",
) -> str:
    """A 2-D matrix as CSV text: a header row of column labels, then one labelled row each.

    Labels default to the indices; they are quoted as CSV requires (tokens may hold commas,
    quotes or newlines). Numbers use the printf-style `fmt` (``%.7g`` round-trips float32
    values); NaN is written ``nan``. Lines end with ``\\n``. An 8192 x 1024 matrix is about
    80 MB of text and takes ~2 s: run it off the GUI thread.

    >>> print(csv_text(np.array([[0.5, 1.0], [2.0, -3.25]]), row_labels=["a,b", "c"], corner="token"), end="")
    token,0,1
    "a,b",0.5,1
    c,2,-3.25
    """
    m = np.asarray(matrix)
    if m.ndim != 2:
        raise SettingsError(f"CSV export needs a 2-D matrix, got shape {m.shape}")
    n_rows, n_cols = m.shape
    rows = list(range(n_rows)) if row_labels is None else list(row_labels)
    cols = list(range(n_cols)) if col_labels is None else list(col_labels)
    if len(rows) != n_rows or len(cols) != n_cols:
        raise SettingsError(
            f"labels do not fit the matrix: {len(rows)} row labels for {n_rows} rows, "
            f"{len(cols)} column labels for {n_cols} columns"
        )
    row_fmt = ",".join([fmt] * n_cols)
    lines = [",".join(_quote(x) for x in [corner, *cols])]
    for label, values in zip(rows, m.tolist()):
        lines.append(f"{_quote(label)},{row_fmt % tuple(values)}" if n_cols else _quote(label))
    return "\n".join(lines) + "\n"
