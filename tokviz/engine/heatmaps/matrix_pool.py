"""`MatrixPool`: recycled memory for the big matrices a heatmap shows (an 8192 x 1024 float32
table is 32 MB).

Each new matrix in fresh memory page-faults all of it in, and freeing the one it replaces hands
those pages back to the kernel; on a virtual machine the first touch of a page can cost ~3 ms per
MB, so a re-render that normally takes 20 ms now and then took over 100 ms. The pool keeps a few
buffers and hands out one that nothing refers to any more: the table on screen (and any cached
one) stays untouched while the next one is computed into memory that is already mapped.

A buffer is free when only the pool refers to it: every array made from it (views, slices,
reshapes) keeps it alive through ``.base``, so CPython's reference count says when the last one is
gone. Thread-safe; numpy only, no Qt.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

MIN_POOLED_BYTES = 1 << 22  # smaller matrices are allocated as usual (4 MB)
MAX_BUFFERS = 4  # buffers kept (the matrix on screen, cached tables, the one being computed)
_IDLE_REFS = 2  # sys.getrefcount of a buffer only the pool's list holds (list + argument)


class MatrixPool:
    """``pool.empty(shape)`` works like ``np.empty(shape, np.float32)`` but reuses memory.

    >>> pool = MatrixPool(min_bytes=0)
    >>> a = pool.empty((4, 3)); a[...] = 1
    >>> b = pool.empty((4, 3)); np.shares_memory(a, b)  # a is still alive: another buffer
    False
    >>> ptr = a.ctypes.data; del a
    >>> pool.empty((2, 5)).ctypes.data == ptr  # a's memory, free again, is reused
    True
    """

    def __init__(self, max_buffers: int = MAX_BUFFERS, *, min_bytes: int = MIN_POOLED_BYTES) -> None:
        self._buffers: list[np.ndarray] = []  # 1-D uint8, each the base of what was handed out
        self._lock = threading.Lock()
        self.max_buffers = max_buffers
        self.min_bytes = min_bytes

    def empty(self, shape: tuple[int, ...], dtype: type = np.float32) -> np.ndarray:
        """An uninitialised C-contiguous array of `shape` and `dtype`."""
        dt = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        if nbytes < self.min_bytes:
            return np.empty(shape, dtype=dt)
        with self._lock:
            store = self._take(nbytes)
        return store[:nbytes].view(dt).reshape(shape)

    def _take(self, nbytes: int) -> np.ndarray:
        """The smallest free buffer of at least `nbytes` (made if none; lock held)."""
        free = [i for i in range(len(self._buffers)) if sys.getrefcount(self._buffers[i]) <= _IDLE_REFS]
        fits = [i for i in free if self._buffers[i].nbytes >= nbytes]
        if fits:
            return self._buffers[min(fits, key=lambda i: self._buffers[i].nbytes)]
        store = np.empty(nbytes, dtype=np.uint8)
        if len(self._buffers) >= self.max_buffers and free:  # replace a free buffer that is too small
            self._buffers[free[0]] = store
        elif len(self._buffers) < self.max_buffers:
            self._buffers.append(store)
        return store  # (pool full of busy buffers: an ordinary allocation)

    @property
    def nbytes(self) -> int:
        """Memory the pool holds."""
        with self._lock:
            return sum(b.nbytes for b in self._buffers)

    def clear(self) -> None:
        """Forget every buffer (arrays still in use keep theirs)."""
        with self._lock:
            self._buffers.clear()


MATRIX_POOL = MatrixPool()  # shared by the heatmap engines
