"""Heatmaps computed off the GUI thread: `HeatmapEngine` (`tokviz.engine.tasks.DebouncedTaskEngine`:
debounced, newest request wins) and the positional-encoding views it computes (`PositionalRequest`
-> `PositionalView`).

A control change calls ``engine.request(fn, *args)``; after `debounce_ms` of quiet the function
runs on a `TaskEngine` worker and ``computed(result)`` arrives on the GUI thread. A newer request
cancels the one still running, so a stale matrix never replaces a newer one.

`compute_positional_view` turns the panel's controls into the matrix (or curves) to draw by asking
the request's `PositionalEncoding` (`tokviz.core.embeddings.positional`) for it, never switching on
its kind; positions x positions views use `display_positions` (at most `MAX_SQUARE` rows). Tables
whose rows depend only on the position (an encoding's `table_key`: learned per (seed, d, scale),
sinusoidal per (d, base)) are cached and sliced when only the number of positions changes.
Positions x dimensions tables are computed into recycled memory (`MATRIX_POOL`): fresh 32 MB
page-faults in slowly.

What this leaves out: drawing (``tokviz.panels.heatmaps.heatmap_view``) and the maths (``tokviz.core``).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

import numpy as np

from tokviz.core.embeddings import positional as P
from tokviz.core.embeddings.positional import (
    VIEW_DIMS,
    VIEW_DISTANCE,
    VIEW_MATRIX,
    VIEW_SIMILARITY,
    PositionalEncoding,
    PositionalParams,
)
from tokviz.engine.tasks import DebouncedTaskEngine

from .matrix_pool import MATRIX_POOL

MAX_SQUARE = 2048  # rows of a positions x positions view (display_positions)
MAX_LEARNED_SIMILARITY = 1024  # rows of a learned table's similarity (an (n, d) @ (d, n) product)


@dataclass(frozen=True)
class PositionalRequest:
    kind: str  # an encoding's key (`tokviz.core.embeddings.positional.encoding`)
    view: str
    params: PositionalParams
    measure: str = "dot"  # similarity: "dot" or "cosine"
    dims: tuple[int, ...] = (0, 1, 2, 3)  # columns plotted by the "dims" view
    rope_random: bool = False  # views scoring a query against a key: random q, k instead of all ones
    table: np.ndarray | None = field(default=None, compare=False, repr=False)  # a `needs_table` kind's (rows, D)

    @property
    def encoding(self) -> PositionalEncoding:
        """The encoding asked for, showing `table` if it needs one."""
        return P.encoding(self.kind).with_table(self.table)


@dataclass
class PositionalView:
    """What to draw: a heatmap (`matrix`) or curves (`curves`: (name, x, y))."""

    request: PositionalRequest
    matrix: np.ndarray | None = None
    rows: np.ndarray | None = None  # positions of the rows (subsampled views)
    cols: np.ndarray | None = None  # positions of the columns (positions x positions views)
    signed: bool = True
    cyclic: bool = False
    levels: tuple[float, float] | None = None  # colour range, computed here (not on the GUI thread)
    curves: list[tuple[str, np.ndarray, np.ndarray]] = field(default_factory=list)
    x_title: str = ""
    y_title: str = ""
    note: str = ""


class _TableCache:
    """The last table of one encoding, grown as needed and sliced for fewer rows (rows depend only
    on the position, so the first n rows of a longer table are the n-row table)."""

    def __init__(self, enc: PositionalEncoding):
        self._enc = enc
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self._table: np.ndarray | None = None

    def get(self, p: PositionalParams) -> np.ndarray:  # (n_pos, columns), read-only view
        key = self._enc.table_key(p)
        with self._lock:
            if self._key == key and self._table is not None and len(self._table) >= p.n_pos:
                return self._table[: p.n_pos]
        table = self._enc.matrix(p, empty=MATRIX_POOL.empty)
        table.flags.writeable = False
        with self._lock:
            self._key, self._table = key, table
        return table


_CACHES = {enc.key: _TableCache(enc) for enc in P.ENCODINGS}


def positional_table(enc: PositionalEncoding, p: PositionalParams) -> np.ndarray:
    """The positions x columns matrix of a (not `square_matrix`) encoding: from the cache when its
    `table_key` allows, else computed into recycled memory."""
    if enc.table_key(p) is not None:
        return _CACHES[enc.key].get(p)
    return enc.matrix(p, empty=MATRIX_POOL.empty)


def compute_positional_view(req: PositionalRequest) -> PositionalView:
    """The matrix or curves for one set of controls, with its colour range (worker thread)."""
    out = _compute(req)
    m = out.matrix
    if m is not None and out.levels is None:
        lo, hi = (float(m.min()), float(m.max())) if m.size else (0.0, 1.0)
        if math.isnan(lo) or math.isnan(hi):  # (a NaN wins min/max: levels of the finite cells)
            finite = m[np.isfinite(m)]
            lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if out.signed:
            r = max(abs(lo), abs(hi)) or 1.0
            out.levels = (-r, r)
        else:
            out.levels = (lo, hi if hi > lo else lo + 1.0)
    return out


def _compute(req: PositionalRequest) -> PositionalView:
    p = req.params.validate()
    enc = req.encoding
    view = req.view if req.view in enc.views else VIEW_MATRIX
    out = PositionalView(req)
    scale = enc.colour_scale(view, req.measure)
    out.levels, out.signed, out.cyclic = scale.levels, scale.signed, scale.cyclic
    out.x_title, out.y_title = enc.axis_titles(view)
    out.note = enc.note(view)
    if view == VIEW_DISTANCE:
        out.curves = enc.distance_curves(p, random_qk=req.rope_random)
    elif view == VIEW_DIMS:
        mat = positional_table(enc, p)
        x = np.arange(len(mat), dtype=np.float64)
        out.curves = [(enc.column_name(d), x, mat[:, d].astype(np.float64))
                      for d in req.dims if 0 <= d < mat.shape[1]]
    elif view == VIEW_MATRIX and not enc.square_matrix:
        out.matrix = positional_table(enc, p)
        out.rows = np.arange(len(out.matrix))
    else:  # positions x positions
        if view == VIEW_SIMILARITY and enc.similarity_by_product:  # rows of the (cached) table multiplied
            table = positional_table(enc, p)
            pos = P.display_positions(len(table), MAX_LEARNED_SIMILARITY)
            out.matrix = P.similarity(table[pos], req.measure)
        else:
            pos = P.display_positions(p.n_pos, MAX_SQUARE)
            out.matrix = (enc.matrix(p, positions=pos) if view == VIEW_MATRIX else
                          enc.pair_matrix(p, req.measure, positions=pos, random_qk=req.rope_random))
        out.rows = out.cols = pos
    return out


HeatmapEngine = DebouncedTaskEngine  # debounced, newest request wins (shared with the Chat view)
