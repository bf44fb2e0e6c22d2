"""The wire format between tokviz processes: whole buffers, frames and events on raw descriptors.

Raw ``os.read``/``os.write`` hold no Python-level lock and keep no read-ahead buffer, so a thread
blocked reading cannot deadlock a process forked meanwhile, and nothing it has not asked for is
swallowed (a "stop" frame stays in the pipe until it is read). A frame is one length-prefixed
pickle; an event is a frame ``(kind, payload, (shape, dtype) or None)`` followed by the array's raw
bytes when there is one. Forked children (`fork`) and spawned ones (`spawn`) both speak it.
"""

from __future__ import annotations

import os
import pickle
import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where an array is sent: a fork that sends none starts without it
    import numpy as np


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


_HEADER = struct.Struct("<Q")


def write_frame(fd: int, obj: object) -> None:
    """Write one pickled object to `fd`."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    write_all(fd, _HEADER.pack(len(data)) + data)


def read_frame(fd: int) -> object:
    """Read one object written by `write_frame`; `EOFError` when the pipe is closed."""
    (n,) = _HEADER.unpack(read_exact(fd, _HEADER.size))
    return pickle.loads(read_exact(fd, n))


def write_event(fd: int, kind: str, payload: object = None, array: np.ndarray | None = None) -> None:
    """One frame ``(kind, payload, (shape, dtype) or None)``, then the array's bytes."""
    if array is None:
        write_frame(fd, (kind, payload, None))
        return
    import numpy as np

    a = np.ascontiguousarray(array)
    write_frame(fd, (kind, payload, (a.shape, a.dtype.str)))
    if a.nbytes:  # (an empty array has no bytes to send, and no byte view either)
        write_all(fd, a)


def read_event(fd: int) -> tuple[str, object, np.ndarray | None]:
    """Read what `write_event` wrote; `EOFError` when the pipe is closed."""
    kind, payload, spec = read_frame(fd)
    if spec is None:
        return kind, payload, None
    import numpy as np

    array = np.empty(spec[0], dtype=np.dtype(spec[1]))
    if not array.nbytes:
        return kind, payload, array
    view, done = memoryview(array).cast("B"), 0
    while done < len(view):
        if hasattr(os, "readv"):  # straight into the array; the GIL is free while it waits
            n = os.readv(fd, [view[done:]])
        else:  # pragma: no cover - Windows
            chunk = os.read(fd, len(view) - done)
            n = len(chunk)
            view[done : done + n] = chunk
        if n == 0:
            raise EOFError("the other side closed the pipe")
        done += n
    return kind, payload, array
