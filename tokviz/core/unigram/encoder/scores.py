"""Scores as the libraries add them: `f32` rounds a double as sentencepiece's float32 arithmetic
does, `checked_scores` refuses what both libraries refuse (NaN, infinities, float32 overflow).

What this leaves out: adding them along paths (`lattice`, `viterbi`, `batch`, `kernels`).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

import numpy as np

from tokviz.core.errors import ModelFormatError

F32_SP = "f32"  # `PieceLattice`'s mode with sentencepiece's float32 arithmetic
_F32 = struct.Struct("<f")


def f32(x: float) -> float:
    """`x` rounded to the nearest float32 (ties to even), as a Python float."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def checked_scores(scores: Sequence[float] | np.ndarray, n_pieces: int, mode: str) -> np.ndarray:
    """`scores` as float64, one per piece, each finite (in float32 too for sentencepiece's
    arithmetic), else ModelFormatError: both libraries refuse NaN and infinite scores, and the
    Viterbis (compiled or not) index them by piece id."""
    arr = np.array(scores, dtype=np.float64)
    if arr.ndim != 1 or len(arr) != n_pieces:
        raise ModelFormatError(f"{len(arr)} scores for {n_pieces} pieces")
    if not np.isfinite(arr).all():
        raise ModelFormatError("a piece's score is NaN or infinite")
    if mode == F32_SP:
        with np.errstate(over="ignore"):
            if not np.isfinite(arr.astype(np.float32)).all():
                raise ModelFormatError("a piece's score is beyond the range of a float32")
    return arr
