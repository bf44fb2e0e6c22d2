"""A Unigram model file's long lists written as JSON text by numba (imported only when
`tokviz.core.jit` says so).

A tinyshakespeare model holds about 300,000 scores and 70,000 pruned pieces. Written by the json
module, each is first a Python list (of ints, or of five fields and an alternative) and then text:
two thirds of the time `tokviz train` spends saving. These kernels write the text straight from the
rounds' arrays, byte for byte what ``json.dumps(..., separators=(",", ":"))`` writes for the lists:

- `int_list`: ``[1,-2,3]``;
- `pruned_rows`: ``[[id,loss,freq,score,[alt,...]],...]``, the losses given as their JSON text
  (the json module's own, comma-separated: floats stay Python's shortest repr), but for the exact
  zeros (most of them: the unused pieces), which the kernel writes ``0.0`` itself.

What this leaves out: the rest of the file and choosing this path (`model_file.json_text`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_COMMA, _OPEN, _CLOSE, _MINUS, _ZERO, _POINT = 44, 91, 93, 45, 48, 46
INT_CHARS = 20  # the most characters an int64 takes: "-9223372036854775808"


@njit(cache=True, nogil=True, inline="always")
def _put_int(buf, pos, v):  # pragma: no cover - compiled
    """Write `v` in decimal at `pos` of `buf`; the position after it."""
    if v < 0:
        buf[pos] = _MINUS
        pos += 1
        m = np.uint64(-(v + 1)) + np.uint64(1)  # the magnitude, the most negative int64's too
    else:
        m = np.uint64(v)
    n = 1
    t = m
    while t >= np.uint64(10):
        t //= np.uint64(10)
        n += 1
    end = pos + n
    for k in range(n):
        buf[end - 1 - k] = _ZERO + np.int64(m % np.uint64(10))
        m //= np.uint64(10)
    return end


@njit(cache=True, nogil=True)
def int_list(values):  # pragma: no cover - compiled
    """The JSON text of the int64 array `values` as a list, as uint8."""
    buf = np.empty(2 + (INT_CHARS + 1) * len(values), dtype=np.uint8)
    buf[0] = _OPEN
    pos = 1
    for i in range(len(values)):
        if i:
            buf[pos] = _COMMA
            pos += 1
        pos = _put_int(buf, pos, values[i])
    buf[pos] = _CLOSE
    return buf[:pos + 1]


@njit(cache=True, nogil=True)
def pruned_rows(ids, zero, loss_text, freq, score, alt_offsets, alt_ids):  # pragma: no cover - compiled
    """The JSON text of a round's pruned pieces as rows ``[id,loss,freq,score,[alt,...]]``, as
    uint8: row i from ``ids[i]``, its loss (``0.0`` where ``zero[i]``, else the next comma-separated
    number of `loss_text`, uint8), ``freq[i]``, ``score[i]`` and
    ``alt_ids[alt_offsets[i]:alt_offsets[i + 1]]``."""
    n = len(ids)
    buf = np.empty(2 + n * (4 * INT_CHARS + 13) + len(loss_text) + (INT_CHARS + 1) * len(alt_ids), dtype=np.uint8)
    buf[0] = _OPEN
    pos = 1
    t = 0
    for i in range(n):
        if i:
            buf[pos] = _COMMA
            pos += 1
        buf[pos] = _OPEN
        pos = _put_int(buf, pos + 1, ids[i])
        buf[pos] = _COMMA
        pos += 1
        if zero[i]:
            buf[pos] = _ZERO
            buf[pos + 1] = _POINT
            buf[pos + 2] = _ZERO
            pos += 3
        else:
            while t < len(loss_text) and loss_text[t] != _COMMA:
                buf[pos] = loss_text[t]
                pos += 1
                t += 1
            t += 1
        buf[pos] = _COMMA
        pos = _put_int(buf, pos + 1, freq[i])
        buf[pos] = _COMMA
        pos = _put_int(buf, pos + 1, score[i])
        buf[pos] = _COMMA
        buf[pos + 1] = _OPEN
        pos += 2
        for j in range(alt_offsets[i], alt_offsets[i + 1]):
            if j > alt_offsets[i]:
                buf[pos] = _COMMA
                pos += 1
            pos = _put_int(buf, pos, alt_ids[j])
        buf[pos] = _CLOSE
        buf[pos + 1] = _CLOSE
        pos += 2
    buf[pos] = _CLOSE
    return buf[:pos + 1]


def warm() -> None:
    """Load both kernels for the argument types `model_file.json_text` passes them (int64 arrays,
    the losses' text read-only), so that a first save loads and compiles nothing."""
    ints = np.zeros(1, dtype=np.int64)
    int_list(ints)
    pruned_rows(ints, np.zeros(1, dtype=np.bool_), np.frombuffer(b"0.5", dtype=np.uint8), ints, ints,
                np.zeros(2, dtype=np.int64), ints[:0])


def loaded() -> bool:
    """Whether both kernels are loaded in this process (`warm` ran): a save uses them then, and
    otherwise writes with the json module rather than wait for a first compilation."""
    return bool(int_list.signatures) and bool(pruned_rows.signatures)
