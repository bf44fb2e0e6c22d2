"""Whole buffers through raw pipe file descriptors: `write_all` and `read_exact`.

Raw ``os.read``/``os.write`` hold no Python-level lock and keep no read-ahead buffer, so a thread
blocked reading cannot deadlock a process forked meanwhile, and nothing it has not asked for is
swallowed. Used by the forked encoder (``tokviz.core.pretrained.parallel``) and the child-process
protocol (``tokviz.engine.child_process``).
"""

from __future__ import annotations

import os


def write_all(fd: int, data) -> None:
    """Write every byte of `data` (bytes or a buffer) to `fd`."""
    view = memoryview(data).cast("B")
    while view:
        view = view[os.write(fd, view):]


def read_exact(fd: int, n: int) -> bytes:
    """Read exactly `n` bytes from `fd`; `EOFError` when the other side closes it first."""
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
