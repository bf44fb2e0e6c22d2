"""A 10 GB safetensors file that takes no disk space: a header describing a tensor whose bytes are a
hole (`f.truncate`), written in tests and the benchmark of reading it."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

GIB10 = 10 << 30


def write_sparse(path: Path, *, hole: tuple[str, str, tuple[int, int]], after: dict[str, np.ndarray] | None = None) -> int:
    """A file whose first tensor `hole` (name, dtype, shape) is all hole, then the float32 tensors
    `after` written for real; returns the file's size."""
    name, dtype, shape = hole
    hole_bytes = shape[0] * shape[1] * {"BF16": 2, "F16": 2, "F32": 4}[dtype]
    header = {name: {"dtype": dtype, "shape": list(shape), "data_offsets": [0, hole_bytes]}}
    at = hole_bytes
    for key, a in (after or {}).items():
        header[key] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [at, at + a.nbytes]}
        at += a.nbytes
    raw = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + hole_bytes)
        f.seek(8 + len(raw) + hole_bytes)
        for a in (after or {}).values():
            f.write(np.ascontiguousarray(a, "<f4").tobytes())
    return path.stat().st_size
