"""Heatmaps computed off the GUI thread: `HeatmapEngine` (`tokviz.engine.tasks.DebouncedTaskEngine`:
debounced, newest request wins) and the positional-encoding views it computes (`PositionalRequest`
-> `PositionalView`).

A control change calls ``engine.request(fn, *args)``; after `debounce_ms` of quiet the function
runs on a `TaskEngine` worker and ``computed(result)`` arrives on the GUI thread. A newer request
cancels the one still running, so a stale matrix never replaces a newer one.

`compute_positional_view` turns the panel's controls into the matrix (or curves) to draw, using
`tokviz.core.embeddings.positional` only; positions x positions views use `display_positions` (at most
`MAX_SQUARE` rows) and learned tables are cached per (seed, d, scale) and sliced when only the
number of positions changes (sinusoidal tables per (d, base) too). Positions x dimensions tables
are computed into recycled memory (`MATRIX_POOL`): fresh 32 MB page-faults in slowly.

What this leaves out: drawing (``tokviz.panels.heatmaps.heatmap_view``) and the maths (``tokviz.core``).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tokviz.core import SettingsError
from tokviz.core.embeddings import positional as P
from tokviz.core.embeddings.positional import PositionalParams
from tokviz.engine.tasks import DebouncedTaskEngine

from .matrix_pool import MATRIX_POOL

VIEW_MATRIX, VIEW_SIMILARITY, VIEW_DISTANCE, VIEW_DIMS = "matrix", "similarity", "distance", "dims"
VIEWS_BY_KIND = {
    "sinusoidal": (VIEW_MATRIX, VIEW_SIMILARITY, VIEW_DIMS),
    "learned": (VIEW_MATRIX, VIEW_SIMILARITY, VIEW_DIMS),
    "trained": (VIEW_MATRIX, VIEW_SIMILARITY, VIEW_DIMS),  # the table trained with the embeddings
    "rope": (VIEW_MATRIX, VIEW_SIMILARITY, VIEW_DISTANCE, VIEW_DIMS),
    "alibi": (VIEW_MATRIX, VIEW_DISTANCE),
}
MAX_SQUARE = 2048  # rows of a positions x positions view (display_positions)
MAX_LEARNED_SIMILARITY = 1024  # rows of a learned table's similarity (an (n, d) @ (d, n) product)


@dataclass(frozen=True)
class PositionalRequest:
    kind: str
    view: str
    params: PositionalParams
    measure: str = "dot"  # similarity: "dot" or "cosine"
    dims: tuple[int, ...] = (0, 1, 2, 3)  # columns plotted by the "dims" view
    rope_random: bool = False  # distance view: random q, k instead of all ones
    table: np.ndarray | None = field(default=None, compare=False, repr=False)  # kind "trained": (rows, D)


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
    """The last table per key, grown as needed and sliced for fewer rows (rows depend only on
    the position, so the first n rows of a longer table are the n-row table)."""

    def __init__(self, make: Callable[[PositionalParams], np.ndarray], key: Callable[[PositionalParams], tuple]):
        self._make, self._key_of = make, key
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self._table: np.ndarray | None = None

    def get(self, p: PositionalParams) -> np.ndarray:  # (n_pos, d), read-only view
        key = self._key_of(p)
        with self._lock:
            if self._key == key and self._table is not None and len(self._table) >= p.n_pos:
                return self._table[: p.n_pos]
        table = self._make(p)
        table.flags.writeable = False
        with self._lock:
            self._key, self._table = key, table
        return table


def _pooled(p: PositionalParams, cols: int) -> np.ndarray:  # (n_pos, cols) float32 in recycled memory
    return MATRIX_POOL.empty((p.n_pos, cols))


LEARNED_CACHE = _TableCache(lambda p: P.learned_random(p.n_pos, p.d, p.seed, p.scale, out=_pooled(p, p.d)),
                            lambda p: (p.seed, p.d, p.scale))
SINUSOIDAL_CACHE = _TableCache(lambda p: P.sinusoidal(p.n_pos, p.d, p.base, out=_pooled(p, p.d)),
                               lambda p: (p.d, p.base))


def trained_table(req: PositionalRequest) -> np.ndarray:
    """The first `n_pos` rows of the position table trained with the embeddings, ``(rows, D)``."""
    if req.table is None:
        raise SettingsError("no trained position table yet: train embeddings with Positions > 0 first")
    return np.asarray(req.table, dtype=np.float32)[: req.params.n_pos]


def _table(kind: str, p: PositionalParams, req: PositionalRequest | None = None) -> np.ndarray:
    if kind == "trained":
        return trained_table(req)
    if kind == "learned":
        return LEARNED_CACHE.get(p)
    if kind == "sinusoidal":
        return SINUSOIDAL_CACHE.get(p)
    if kind == "rope":
        return P.rope_angles(p.n_pos, p.d, p.base, wrap=True, out=_pooled(p, p.d // 2))
    return P.positional_matrix(kind, p)


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
    kind, view = req.kind, req.view
    if view not in VIEWS_BY_KIND[kind]:
        view = VIEW_MATRIX
    out = PositionalView(req)
    if view == VIEW_MATRIX:
        if kind == "alibi":
            pos = P.display_positions(p.n_pos, MAX_SQUARE)
            out.matrix = P.alibi_bias(pos, n_heads=p.n_heads, head=p.head)
            out.rows = out.cols = pos
            out.signed = False  # all <= 0: a sequential map from the most negative to 0
            out.x_title, out.y_title = "key position", "query position"
        else:
            out.matrix = _table(kind, p, req)
            out.rows = np.arange(len(out.matrix))
            out.cyclic = kind == "rope"
            if kind in ("sinusoidal", "rope"):
                out.levels = (-np.pi, np.pi) if kind == "rope" else (-1.0, 1.0)
            out.x_title = "pair i (angle θ, wrapped to ±π)" if kind == "rope" else "dimension"
            out.y_title = "position"
        return out
    if view == VIEW_SIMILARITY:
        if kind == "rope":
            pos = P.display_positions(p.n_pos, MAX_SQUARE)
            q, k = P.rope_demo_vectors(p.d, seed=p.seed if req.rope_random else None)
            out.matrix = P.rope_score_matrix(q, k, pos, p.base).astype(np.float32)
            out.note = "score <R_i q, R_j k> of a query at row i and a key at column j"
        else:
            limit = MAX_LEARNED_SIMILARITY if kind in ("learned", "trained") else MAX_SQUARE
            if kind == "trained":
                table = trained_table(req)
                pos = P.display_positions(len(table), limit)
                out.matrix = P.similarity(table[pos], req.measure)
            elif kind == "learned":
                pos = P.display_positions(p.n_pos, limit)
                out.matrix = P.similarity(LEARNED_CACHE.get(p)[pos], req.measure)
            else:
                pos = P.display_positions(p.n_pos, limit)
                out.matrix = P.positional_similarity(kind, p, req.measure, positions=pos)
            if req.measure == "cosine":
                out.levels = (-1.0, 1.0)
        out.rows = out.cols = pos
        out.x_title = out.y_title = "position"
        return out
    if view == VIEW_DISTANCE:
        m = min(p.n_pos - 1, P.MAX_POSITIONS - 1)
        if kind == "rope":
            q, k = P.rope_demo_vectors(p.d, seed=p.seed if req.rope_random else None)
            dist, score = P.rope_score_by_distance(q, k, m, p.base)
            out.curves = [("score <R_m q, R_n k>", dist.astype(np.float64), score)]
            out.x_title, out.y_title = "distance n − m", "score"
        else:
            slope = float(P.alibi_slopes(p.n_heads)[p.head])
            dist = np.arange(-m, m + 1, dtype=np.float64)
            out.curves = [(f"head {p.head}: −{slope:g}·|distance|", dist, -slope * np.abs(dist))]
            out.x_title, out.y_title = "distance (key − query)", "bias"
        return out
    # VIEW_DIMS
    mat = _table(kind, p, req)
    x = np.arange(len(mat), dtype=np.float64)
    for d in req.dims:
        if 0 <= d < mat.shape[1]:
            name = f"pair {d}" if kind == "rope" else f"dimension {d}"
            out.curves.append((name, x, mat[:, d].astype(np.float64)))
    out.x_title, out.y_title = "position", "angle (rad)" if kind == "rope" else "value"
    return out


HeatmapEngine = DebouncedTaskEngine  # debounced, newest request wins (shared with the Chat view)
