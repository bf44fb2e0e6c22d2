"""`PositionalEncoding`: the protocol every kind of positional encoding in tokviz follows.

Sinusoidal, learned (random init), RoPE, ALiBi and a table trained with the embeddings are one
concept seen five ways. Each kind is an object that says what the positional-encodings view can
show of it and how: its key (stored in lesson files and requests) and menu label, the views it
offers (`VIEWS`), which controls it reads (base, dimension, seed, heads, similarity measure),
the numbers of each view (matrix, positions x positions, curves by distance), axis titles,
colour scale, and the hover text of a cell. The engine and the panel ask the object; they never
switch on its name. The one place that maps a key to its object is
`tokviz.core.embeddings.positional_kinds`.

A kind class subclasses `PositionalEncoding` explicitly and inherits the defaults written here
(what most kinds share); what is particular to a kind it writes itself. What this leaves out:
the maths of each kind (`sinusoidal`, `learned`, `rope`, `alibi` in this package) and drawing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from tokviz.core.errors import SettingsError

from .positional_params import PositionalParams

VIEW_MATRIX, VIEW_SIMILARITY, VIEW_DISTANCE, VIEW_DIMS = "matrix", "similarity", "distance", "dims"
VIEWS = (VIEW_MATRIX, VIEW_SIMILARITY, VIEW_DISTANCE, VIEW_DIMS)
VIEW_LABELS = {
    VIEW_MATRIX: "Positions × dimensions",
    VIEW_SIMILARITY: "Positions × positions",
    VIEW_DISTANCE: "By distance",
    VIEW_DIMS: "Dimensions over positions",
}

Curve = tuple[str, np.ndarray, np.ndarray]  # (legend name, x, y)
Empty = Callable[[tuple[int, int]], np.ndarray]  # shape -> an uninitialised C-contiguous float32 array


@dataclass(frozen=True)
class ColourScale:
    """How a heatmap colours its values.

    >>> ColourScale().levels is None, ColourScale(signed=False).signed
    (True, False)
    """

    levels: tuple[float, float] | None = None  # fixed colour range; None: from the data
    signed: bool = True  # centred on 0 (a diverging map); False: most negative .. most positive
    cyclic: bool = False  # angles: a cyclic map, -pi and pi the same colour


@runtime_checkable
class PositionalEncoding(Protocol):
    """One kind of positional encoding: what it shows and how (defaults: a positions x dimensions
    table of vectors added to the tokens, with dot/cosine similarity)."""

    key: str  # "sinusoidal": lesson files, requests, the kind box's data
    label: str  # "Sinusoidal": menus and captions
    views: tuple[str, ...] = (VIEW_MATRIX, VIEW_SIMILARITY, VIEW_DIMS)  # in menu order; the first is the default
    uses_dim: bool = True  # reads the model dimension d (a trained table brings its own)
    uses_base: bool = False  # reads the wavelength base
    uses_seed: bool = False  # reads the seed for its values
    uses_heads: bool = False  # reads the number of heads and the head shown
    uses_measure: bool = True  # its positions x positions view offers dot product or cosine
    qk_views: tuple[str, ...] = ()  # views scoring a query against a key (random q, k: the seed)
    square_matrix: bool = False  # its matrix view is positions x positions (rows: queries, not tokens)
    similarity_by_product: bool = False  # similarity multiplies table rows (costly: show fewer rows)
    needs_table: bool = False  # shows a table given to it (`with_table`); offered once there is one

    def view_label(self, view: str) -> str:
        """The view box's text for `view` ("Positions × dimensions")."""
        return VIEW_LABELS[view]

    def axis_titles(self, view: str) -> tuple[str, str]:
        """``(x, y)`` axis titles of `view`."""
        if view == VIEW_DIMS:
            return "position", "value"
        if view == VIEW_SIMILARITY:
            return "position", "position"
        return "dimension", "position"

    def colour_scale(self, view: str, measure: str = "dot") -> ColourScale:
        """Colour range and map of a heatmap view (cosine similarities span exactly [-1, 1])."""
        if view == VIEW_SIMILARITY and self.uses_measure and measure == "cosine":
            return ColourScale(levels=(-1.0, 1.0))
        return ColourScale()

    def note(self, view: str) -> str:
        """A sentence saying what a view's cells are, when the title does not ("" if none)."""
        return ""

    def source_note(self) -> str:
        """Where a given table came from, for the status line ("" for computed encodings)."""
        return ""

    def column_name(self, col: int) -> str:
        """Legend name of column `col` of the matrix (the "dims" view's curves)."""
        return f"dimension {col}"

    def with_table(self, table: np.ndarray | None) -> PositionalEncoding:
        """The encoding showing `table` (``needs_table`` kinds); other kinds ignore it: self."""
        return self

    def table_key(self, p: PositionalParams) -> tuple | None:
        """The parameters its matrix depends on besides the number of positions (row p depends
        only on p, so a longer matrix's first rows are a shorter one: worth caching), or None
        when the matrix is not worth keeping."""
        return None

    def matrix(self, p: PositionalParams, *, positions: np.ndarray | None = None,
               empty: Empty | None = None) -> np.ndarray:
        """The main heatmap, float32, rows at `positions` (default ``0..n_pos-1``): positions x
        columns, or positions x positions for a `square_matrix`. `empty(shape)` gives memory to
        compute it into (a recycled buffer) instead of a new array."""
        ...

    def similarity(self, p: PositionalParams, measure: str = "dot", *,
                   positions: np.ndarray | None = None) -> np.ndarray:
        """Positions x positions similarity (`measure`: "dot" or "cosine") of the vectors the
        encoding adds to the tokens, rows at `positions` (default ``0..n_pos-1``), float32;
        `SettingsError` (`no_vector_error`) for kinds that add none."""
        ...

    def pair_matrix(self, p: PositionalParams, measure: str = "dot", *,
                    positions: np.ndarray | None = None, random_qk: bool = False) -> np.ndarray:
        """The positions x positions view, float32: the `similarity` (RoPE: query-key scores,
        `random_qk` scoring seeded random q, k instead of all ones)."""
        return self.similarity(p, measure, positions=positions)

    def distance_curves(self, p: PositionalParams, *, random_qk: bool = False) -> list[Curve]:
        """The "distance" view: score or bias against the distance ``-(n_pos-1)..n_pos-1``."""
        return []

    def formula(self, pos: int, col: int, p: PositionalParams | None = None, *, value: float | None = None,
                causal: bool = False, digits: int = 4) -> str:
        """The formula of matrix cell (`pos`, `col`) with the numbers filled in (hover readout);
        `col` is a dimension, a pair index or a key position (`square_matrix`), `value` the
        number shown, `causal` masks keys after the query. `SettingsError` for a cell outside."""
        ...

    def pair_text(self, pos: int, other: int, value: float, *, measure: str = "dot") -> str:
        """Hover text of cell (`pos`, `other`) of the positions x positions view."""
        name = "cosine" if measure == "cosine" else "dot product"
        return f"positions {pos} and {other} (distance {other - pos}): {name} {value:.6g}"


def no_vector_error(key: str, instead: str) -> SettingsError:
    """The error for asking a kind that adds no vector to the tokens for a similarity.

    >>> str(no_vector_error("alibi", "alibi_bias"))
    'alibi adds no vector to the tokens, so there is no encoding similarity; show alibi_bias instead'
    """
    return SettingsError(
        f"{key} adds no vector to the tokens, so there is no encoding similarity; show {instead} instead"
    )
