"""`MatrixPool` recycles the memory of big heatmap matrices once nothing refers to them, and the
positional engine computes its tables into it without changing a value."""

from __future__ import annotations

import numpy as np

from tokviz.core.embeddings import positional as P
from tokviz.core.embeddings.positional import PositionalParams
from tokviz.engine.heatmaps.heatmap_engine import PositionalRequest, compute_positional_view
from tokviz.engine.heatmaps.matrix_pool import MATRIX_POOL, MatrixPool


def test_memory_is_reused_only_when_no_view_is_left():
    pool = MatrixPool(min_bytes=0)
    a = pool.empty((100, 10))
    a[:] = 7
    row = a[3]  # a view keeps the buffer busy
    ptr = a.ctypes.data
    del a
    b = pool.empty((100, 10))
    assert b.ctypes.data != ptr and row[0] == 7
    del row
    c = pool.empty((50, 20), np.float32)  # same bytes, other shape: a's buffer again
    assert c.ctypes.data == ptr and c.shape == (50, 20) and c.dtype == np.float32
    assert c.flags.c_contiguous and c.flags.writeable


def test_smallest_fitting_free_buffer_and_limit():
    pool = MatrixPool(max_buffers=2, min_bytes=0)
    big, small = pool.empty((1000,)), pool.empty((10,))
    big_ptr, small_ptr = big.ctypes.data, small.ctypes.data
    del big, small
    assert pool.empty((8,)).ctypes.data == small_ptr  # smallest that fits
    held = [pool.empty((900,)), pool.empty((5,))]  # both buffers busy: a plain array
    extra = pool.empty((900,))
    assert extra.ctypes.data not in (big_ptr, small_ptr) and pool.nbytes == 1000 * 4 + 10 * 4
    assert held[0].ctypes.data == big_ptr


def test_small_matrices_are_not_pooled():
    pool = MatrixPool(min_bytes=1 << 20)
    pool.empty((10, 10))
    assert pool.nbytes == 0


def test_engine_tables_reuse_memory_and_keep_values():
    MATRIX_POOL.clear()
    n, d = 2048, 600  # 4.9 MB: pooled

    def table(base):
        view = compute_positional_view(PositionalRequest("sinusoidal", "matrix", PositionalParams(d=d, n_pos=n, base=base)))
        return view.matrix

    first = table(5000.0)
    ptr = first.ctypes.data
    second = table(6000.0)  # the first is still shown: other memory
    assert second.ctypes.data != ptr
    del first
    third = table(7000.0)  # the first's memory, recycled
    assert third.ctypes.data == ptr and np.array_equal(third, P.sinusoidal(n, d, 7000.0))
    assert np.array_equal(second, P.sinusoidal(n, d, 6000.0))  # untouched by the third
    learned = compute_positional_view(PositionalRequest("learned", "matrix", PositionalParams(d=d, n_pos=n, seed=3)))
    assert np.array_equal(learned.matrix, P.learned_random(n, d, seed=3))
    r = float(np.abs(learned.matrix).max())
    assert learned.levels == (-r, r)
    rope = compute_positional_view(PositionalRequest("rope", "matrix", PositionalParams(d=d, n_pos=n)))
    assert np.array_equal(rope.matrix, P.positional_matrix("rope", PositionalParams(d=d, n_pos=n)))


def test_levels_skip_nan_cells():
    table = np.array([[0.5, np.nan], [-2.0, 1.0]], dtype=np.float32)
    view = compute_positional_view(PositionalRequest("trained", "matrix", PositionalParams(d=2, n_pos=2), table=table))
    assert view.levels == (-2.0, 2.0)
