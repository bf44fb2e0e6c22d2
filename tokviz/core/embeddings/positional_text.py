"""Text for the positional-encodings view: numbers in hover formulas, and CSV.

Each kind's hover formula (its `formula` method, e.g. "PE(5, 2·3) = sin(5 / 10000^(6/64)) = 0.8589")
writes its numbers with `number_text` and `value_text` and checks the cell with `check_index`.
`csv_text` turns any matrix (with optional row labels, e.g. the tokens of the current text) into
CSV; `parse_dims` reads the dimensions typed for the dimensions-over-positions view. What this
leaves out: the formulas themselves (each kind's module), images (PNG export is the panel's,
through pyqtgraph) and writing files.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence

import numpy as np

from tokviz.core.errors import SettingsError


def number_text(x: float) -> str:
    """A parameter without noise.

    >>> number_text(10000.0), number_text(0.5)
    ('10000', '0.5')
    """
    return format(float(x), ".10g")


def value_text(v: float, digits: int) -> str:
    """A computed value with `digits` decimals, or in scientific notation when that would show 0.

    >>> value_text(0.8589, 4), value_text(-1.0, 4), value_text(1.5e-7, 4)
    ('0.8589', '-1.0000', '1.5000e-07')
    """
    if v == 0 or abs(v) >= 10.0 ** (1 - digits) or not math.isfinite(v):
        return f"{v:.{digits}f}"
    return f"{v:.{digits}e}"


def check_index(name: str, value: object, stop: int) -> int:
    """`value` as an int in ``0..stop-1``, or `SettingsError` naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < stop:
        raise SettingsError(f"{name} must be between 0 and {stop - 1}, got {value!r}")
    return int(value)


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


def parse_dims(text: str, d: int) -> tuple[int, ...]:
    """Dimensions typed as ``"0, 1, 8-10"`` (ranges allowed), valid ones only, at most 8.

    >>> parse_dims("0, 3-5, x, 99", 8)
    (0, 3, 4, 5)
    """
    out: list[int] = []
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        try:
            if "-" in part:
                a, b = (int(x) for x in part.split("-", 1))
                out.extend(range(a, b + 1))
            elif part:
                out.append(int(part))
        except ValueError:
            continue
    return tuple(dict.fromkeys(x for x in out if 0 <= x < d))[:8]
