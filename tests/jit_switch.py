"""Switching the compiled kernels (`tokviz.core.jit`) off in a test, to test the plain paths too."""

from __future__ import annotations

import os
from contextlib import contextmanager


@contextmanager
def jit_off():
    """Tokenizers, lattices and trainers made inside use the plain Python + numpy paths
    (``TOKVIZ_JIT=0``), not the compiled kernels."""
    old = os.environ.get("TOKVIZ_JIT")
    os.environ["TOKVIZ_JIT"] = "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ["TOKVIZ_JIT"]
        else:
            os.environ["TOKVIZ_JIT"] = old
