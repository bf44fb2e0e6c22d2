"""Animated GIF (GIF89a) and PNG writers for exported animations: numpy in, bytes out.

Frames are ``(height, width, 3)`` uint8 RGB arrays of one size. `GifWriter` builds one global
palette from the most frequent colours of the frames (screenshots of an app use few colours;
anti-aliased edges map to the nearest), then LZW-compresses each frame. A frame after the first
stores only the rectangle that changed (disposal "leave in place"), which keeps both the file and
the encoding time small for timeline replays where one region changes per step.

Worked example: ``lzw_encode(bytes([0, 0, 0, 0]), 2)`` emits clear (4), 0, 6 (= "0 0"), 0, end (5).

What this leaves out: rendering frames (the GUI does that) and dithering.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Sequence

import numpy as np

from tokviz.core.errors import Cancelled

MAX_COLORS = 256


def build_palette(frames: Sequence[np.ndarray], n_colors: int = MAX_COLORS) -> np.ndarray:
    """Up to `n_colors` RGB colours (``(n, 3)`` uint8): the most frequent 15-bit colours."""
    counts = np.zeros(1 << 15, dtype=np.int64)
    sums = np.zeros((1 << 15, 3), dtype=np.float64)  # exact colours: the mean of each bin
    for f in frames:
        codes = _rgb15(f).ravel()
        counts += np.bincount(codes, minlength=1 << 15)
        for c in range(3):
            sums[:, c] += np.bincount(codes, weights=f[..., c].ravel(), minlength=1 << 15)
    top = np.argsort(counts, kind="stable")[::-1][:n_colors]
    top = top[counts[top] > 0]
    return np.rint(sums[top] / counts[top, None]).astype(np.uint8)


def _rgb15(frame: np.ndarray) -> np.ndarray:
    f = frame.astype(np.uint16) >> 3
    return (f[..., 0] << 10) | (f[..., 1] << 5) | f[..., 2]


def _rgb15_to_rgb(codes: np.ndarray) -> np.ndarray:
    r, g, b = (codes >> 10) & 31, (codes >> 5) & 31, codes & 31
    return (np.stack([r, g, b], axis=-1) * 255 // 31).astype(np.uint8)


def palette_lookup(palette: np.ndarray) -> np.ndarray:
    """For every 15-bit colour, the index of the nearest palette colour (``(32768,)`` uint8)."""
    all_rgb = (_rgb15_to_rgb(np.arange(1 << 15)).astype(np.int32) // 8) * 8 + 4  # bin centres
    best = np.zeros(1 << 15, dtype=np.uint8)
    best_d = np.full(1 << 15, np.iinfo(np.int32).max, dtype=np.int64)
    for i, c in enumerate(palette.astype(np.int32)):
        d = ((all_rgb - c) ** 2).sum(axis=1)
        better = d < best_d
        best[better] = i
        best_d[better] = d[better]
    best[_rgb15(palette)] = np.arange(len(palette), dtype=np.uint8)  # a palette colour maps to itself
    return best


def lzw_encode(indices: bytes, min_code_size: int) -> bytes:
    """GIF LZW: the variable-width code stream of `indices`, packed LSB-first (no sub-blocks)."""
    clear, end = 1 << min_code_size, (1 << min_code_size) + 1
    out = bytearray()
    acc = nbits = 0
    size = min_code_size + 1

    def emit(code: int) -> None:
        nonlocal acc, nbits
        acc |= code << nbits
        nbits += size
        while nbits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            nbits -= 8

    emit(clear)
    table: dict[tuple[int, int], int] = {}
    next_code = end + 1
    it = iter(indices)
    prefix = next(it, None)
    if prefix is None:
        emit(end)
        return bytes(out + (bytes([acc]) if nbits else b""))
    for k in it:
        code = table.get((prefix, k))
        if code is not None:
            prefix = code
            continue
        emit(prefix)
        if next_code < 4096:
            table[(prefix, k)] = next_code
            next_code += 1
            if next_code > (1 << size) and size < 12:
                size += 1
        else:
            emit(clear)
            table.clear()
            next_code = end + 1
            size = min_code_size + 1
        prefix = k
    emit(prefix)
    emit(end)
    if nbits:
        out.append(acc & 0xFF)
    return bytes(out)


def _sub_blocks(data: bytes) -> bytes:
    parts = [bytes([len(data[i:i + 255])]) + data[i:i + 255] for i in range(0, len(data), 255)]
    return b"".join(parts) + b"\x00"


def changed_box(prev: np.ndarray | None, cur: np.ndarray) -> tuple[int, int, int, int]:
    """(x, y, w, h) of the pixels that differ (the whole frame if there is no previous one;
    a single pixel if nothing changed: a GIF frame cannot be empty)."""
    h, w = cur.shape[:2]
    if prev is None:
        return 0, 0, w, h
    diff = np.any(prev != cur, axis=-1) if cur.ndim == 3 else prev != cur
    rows, cols = np.flatnonzero(diff.any(axis=1)), np.flatnonzero(diff.any(axis=0))
    if rows.size == 0:
        return 0, 0, 1, 1
    return int(cols[0]), int(rows[0]), int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)


def write_gif(frames: Sequence[np.ndarray], durations_ms: Sequence[int] | int, *, loop: bool = True,
              should_stop: Callable[[], bool] = lambda: False,
              progress: Callable[[str, float], None] = lambda what, f: None) -> bytes:
    """The bytes of an animated GIF of `frames` (each shown for its duration; GIF rounds to 10 ms)."""
    if not frames:
        raise ValueError("an animation needs at least one frame")
    h, w = frames[0].shape[:2]
    if any(f.shape[:2] != (h, w) for f in frames):
        raise ValueError("all frames must have the same size")
    if isinstance(durations_ms, int):
        durations_ms = [durations_ms] * len(frames)
    palette = build_palette(frames)
    lookup = palette_lookup(palette)
    bits = max(1, int(np.ceil(np.log2(max(2, len(palette))))))
    table = np.zeros((1 << bits, 3), dtype=np.uint8)
    table[:len(palette)] = palette
    out = bytearray(b"GIF89a")
    out += struct.pack("<HHBBB", w, h, 0x80 | 0x70 | (bits - 1), 0, 0)
    out += table.tobytes()
    if loop:
        out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", 0) + b"\x00"
    min_code = max(2, bits)
    prev = None
    for i, frame in enumerate(frames):
        if should_stop():
            raise Cancelled()
        indexed = lookup[_rgb15(frame)]
        x, y, bw, bh = changed_box(prev, indexed)
        prev = indexed
        delay = max(2, round(durations_ms[i] / 10))  # hundredths; browsers clamp 0-1 to 10
        out += b"\x21\xf9\x04" + struct.pack("<BHBB", 1 << 2, delay, 0, 0)  # disposal 1: leave in place
        out += b"\x2c" + struct.pack("<HHHHB", x, y, bw, bh, 0)
        out += bytes([min_code]) + _sub_blocks(lzw_encode(indexed[y:y + bh, x:x + bw].tobytes(), min_code))
        progress("Encoding GIF", (i + 1) / len(frames))
    out += b"\x3b"
    return bytes(out)


def write_png(frame: np.ndarray) -> bytes:
    """The bytes of an RGB PNG of `frame` (``(h, w, 3)`` uint8)."""
    h, w = frame.shape[:2]
    raw = np.zeros((h, w * 3 + 1), dtype=np.uint8)  # filter byte 0 per row
    raw[:, 1:] = frame.reshape(h, w * 3)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
            + chunk(b"IEND", b""))
