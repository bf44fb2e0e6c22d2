"""Learned position tables: a randomly initialised one (`learned_random`, `LearnedEncoding`) and the
table trained with the token embeddings (`TrainedEncoding`), as the positional-encodings view shows them.

A learned encoding is a ``(positions, d)`` table of parameters, one row added to the token at each
position. Before training it is random normal(0, scale) (GPT-2 initialises with 0.02); the
embedding trainer (`tokviz.core.embeddings.training`) can learn one beside the token vectors.
What this leaves out: training (that module) and the other kinds (`sinusoidal`, `rope`, `alibi`).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tokviz.core.errors import SettingsError

from .positional_encoding import Empty, PositionalEncoding
from .positional_params import (
    MAX_POSITIONS,
    PositionalParams,
    as_positions,
    check_dim,
    check_scale,
    check_seed,
    output_array,
    similarity,
)
from .positional_text import check_index, number_text, value_text

LEARNED_BLOCK_ROWS = 256  # rows of a learned random table drawn from one stream
PARALLEL_MIN_ENTRIES = 1 << 20  # tables at least this big are drawn on several threads


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


class LearnedEncoding(PositionalEncoding):
    """A learned table before training: random normal(0, scale) rows, drawn again from the seed.

    >>> enc, p = LearnedEncoding(), PositionalParams(d=4, n_pos=3, seed=1)
    >>> bool(np.array_equal(enc.matrix(p), learned_random(3, 4, seed=1)))
    True
    >>> enc.formula(1, 0, PositionalParams(d=4, seed=1)).startswith("P[1, 0] = ")  # the value drawn again
    True
    """

    key = "learned"
    label = "Learned (random init)"
    uses_seed = True
    similarity_by_product = True

    def table_key(self, p: PositionalParams) -> tuple:
        return p.seed, p.d, p.scale

    def matrix(self, p: PositionalParams, *, positions: np.ndarray | None = None,
               empty: Empty | None = None) -> np.ndarray:
        if positions is not None:  # (out= fills positions 0..n-1 only)
            return learned_random(positions, p.d, p.seed, p.scale)
        return learned_random(p.n_pos, p.d, p.seed, p.scale, out=empty((p.n_pos, p.d)) if empty else None)

    def similarity(self, p: PositionalParams, measure: str = "dot", *,
                   positions: np.ndarray | None = None) -> np.ndarray:
        pos = as_positions(p.n_pos if positions is None else positions)
        return similarity(learned_random(pos, p.d, p.seed, p.scale), measure)

    def formula(self, pos: int, col: int, p: PositionalParams | None = None, *, value: float | None = None,
                causal: bool = False, digits: int = 4) -> str:
        """A random cell has no formula: its value (drawn again when not given) and where it came from."""
        p = (p or PositionalParams()).validate()
        pos = check_index("position", pos, MAX_POSITIONS)
        dim = check_index("dimension", col, p.d)
        if value is None:  # row p depends only on the seed and d
            value = float(learned_random(pos + 1, p.d, p.seed, p.scale)[pos, dim])
        return (
            f"P[{pos}, {dim}] = {value_text(float(value), digits)} "
            f"(learned table: random normal(0, {number_text(p.scale)}²), seed {p.seed})"
        )


class TrainedEncoding(PositionalEncoding):
    """The position table trained with the token embeddings, ``(rows, D)``: its D replaces d, and
    it is offered once a table exists (`with_table`).

    >>> enc = TrainedEncoding().with_table(np.arange(6.0).reshape(3, 2))
    >>> enc.matrix(PositionalParams(n_pos=2)).tolist(), enc.source_note()
    ([[0.0, 1.0], [2.0, 3.0]], 'trained with the embeddings; the table has 3 positions')
    """

    key = "trained"
    label = "Learned (trained)"
    uses_dim = False
    similarity_by_product = True
    needs_table = True

    def __init__(self, table: np.ndarray | None = None) -> None:
        self.table = table  # (rows, D), or None until a table was trained

    def with_table(self, table: np.ndarray | None) -> TrainedEncoding:
        return TrainedEncoding(table)

    def source_note(self) -> str:
        if self.table is None:
            return ""
        return f"trained with the embeddings; the table has {len(self.table):,} positions"

    def matrix(self, p: PositionalParams, *, positions: np.ndarray | None = None,
               empty: Empty | None = None) -> np.ndarray:
        """The first `n_pos` rows of the table (no more than it has), ``(rows, D)``."""
        if self.table is None:
            raise SettingsError("no trained position table yet: train embeddings with Positions > 0 first")
        rows = np.asarray(self.table, dtype=np.float32)[: p.n_pos]
        if positions is None:
            return rows
        pos = as_positions(positions)
        if pos.max() >= len(rows):
            raise SettingsError(f"the trained table has {len(rows)} positions, asked for position {int(pos.max())}")
        return rows[pos]

    def similarity(self, p: PositionalParams, measure: str = "dot", *,
                   positions: np.ndarray | None = None) -> np.ndarray:
        return similarity(self.matrix(p, positions=positions), measure)

    def formula(self, pos: int, col: int, p: PositionalParams | None = None, *, value: float | None = None,
                causal: bool = False, digits: int = 4) -> str:
        """A trained cell: its value and how the embedding model uses the row."""
        rows = 0 if self.table is None else len(self.table)
        if value is None:
            table = self.matrix(p or PositionalParams(n_pos=MAX_POSITIONS))
            value = float(table[check_index("position", pos, len(table)),
                                check_index("dimension", col, table.shape[1])])
        return (f"P[{pos}, {col}] = {value:.{digits}f} (learned by the embedding model: a token at "
                f"index t of its paragraph adds row t mod {rows})")
