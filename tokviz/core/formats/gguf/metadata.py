"""Reading the key/value metadata of a GGUF file (llama.cpp's model format), never its tensors.

A GGUF file is ``b"GGUF"``, a uint32 version (2 or 3 here; version 1 used 32-bit counts), the
uint64 numbers of tensors and of key/value pairs, then the pairs: a string key, a uint32 value
type and the value. Everything is little-endian; a string is a uint64 byte length and UTF-8
bytes; an array is an element type, a uint64 count and the elements. The tensor descriptions
and data follow the pairs and are never read: a 40 GB model costs what its metadata costs.

The file is mapped, not read: only the pages the metadata covers are touched. Every count and
length is checked against the bytes left before anything is allocated, arrays and the metadata
as a whole have limits, and values of keys the caller does not want are skipped without being
built. A malformed file is a one-line `ModelFormatError`.

What this leaves out: writing files, big-endian files (refused with a clear message), tensors.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tokviz.core.errors import ModelFormatError
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, open_regular

MAGIC = b"GGUF"
VERSIONS = (2, 3)
MAX_ARRAY_ITEMS = 1 << 22  # elements in one array: real vocabularies hold up to ~1M tokens
MAX_KEYS = 1 << 16  # key/value pairs (real files: a few dozen)

# value type -> (name, struct code) for the fixed-size types
_FIXED = {0: ("uint8", "B"), 1: ("int8", "b"), 2: ("uint16", "H"), 3: ("int16", "h"), 4: ("uint32", "I"),
          5: ("int32", "i"), 6: ("float32", "f"), 7: ("bool", "?"), 10: ("uint64", "Q"), 11: ("int64", "q"),
          12: ("float64", "d")}
STRING, ARRAY = 8, 9
TYPE_NAMES = {**{k: v[0] for k, v in _FIXED.items()}, STRING: "string", ARRAY: "array"}
_U64 = struct.Struct("<Q")


class _Reader:
    """A cursor over the mapped file; every read checks it stays inside `end`."""

    def __init__(self, data: mmap.mmap | bytes, end: int) -> None:
        self.data, self.pos, self.end = data, 0, end

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.end:
            raise ModelFormatError(f"truncated GGUF file: {what} runs past the end of the metadata")

    def fixed(self, code: str, what: str) -> Any:
        size = struct.calcsize("<" + code)
        self.need(size, what)
        value = struct.unpack_from("<" + code, self.data, self.pos)[0]
        self.pos += size
        return value

    def u64(self, what: str) -> int:
        self.need(8, what)
        value = _U64.unpack_from(self.data, self.pos)[0]
        self.pos += 8
        return value

    def raw_string(self, what: str) -> bytes:
        n = self.u64(what)
        self.need(n, what)
        value = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return value

    def string(self, what: str) -> str:
        raw = self.raw_string(what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ModelFormatError(f"GGUF {what} is not valid UTF-8 (byte {exc.start})") from None

    def skip_string(self, what: str) -> None:
        n = self.u64(what)
        self.need(n, what)
        self.pos += n


def _value_type(r: _Reader, what: str) -> int:
    t = r.fixed("I", what)
    if t not in TYPE_NAMES:
        raise ModelFormatError(f"GGUF {what} has an unknown value type {t}")
    return t


def _array(r: _Reader, key: str, keep: bool) -> Any:
    """An array value: a list of str for strings, a numpy array for numbers (None when skipped)."""
    et = _value_type(r, f"element type of {key!r}")
    n = r.u64(f"length of {key!r}")
    if et == ARRAY:
        raise ModelFormatError(f"GGUF key {key!r} holds nested arrays, which no tokenizer key uses")
    if n > MAX_ARRAY_ITEMS:
        raise ModelFormatError(f"GGUF key {key!r} has {n:,} elements, more than tokviz reads ({MAX_ARRAY_ITEMS:,})")
    if et == STRING:
        r.need(8 * n, f"the {n:,} strings of {key!r}")  # each has at least its length
        if not keep:
            for _ in range(n):
                r.skip_string(f"a string of {key!r}")
            return None
        return [r.string(f"string {i} of {key!r}") for i in range(n)]
    name, code = _FIXED[et]
    size = struct.calcsize(code)
    r.need(n * size, f"the {n:,} {name} values of {key!r}")
    start = r.pos
    r.pos += n * size
    if not keep:
        return None
    dtype = np.dtype("<" + code) if code != "?" else np.dtype(np.uint8)
    out = np.frombuffer(r.data, dtype=dtype, count=n, offset=start).copy()
    return out.astype(bool) if code == "?" else out


def _value(r: _Reader, key: str, t: int, keep: bool) -> Any:
    if t == STRING:
        if not keep:
            r.skip_string(f"value of {key!r}")
            return None
        return r.string(f"value of {key!r}")
    if t == ARRAY:
        return _array(r, key, keep)
    return r.fixed(_FIXED[t][1], f"value of {key!r}")


def parse_metadata(data: mmap.mmap | bytes, *, size: int | None = None,
                   wanted: Callable[[str], bool] = lambda key: True) -> tuple[int, dict[str, tuple[int, Any]]]:
    """``(version, {key: (value type, value)})`` of the GGUF metadata in `data` (its first `size`
    bytes, default all); values of keys `wanted` refuses are checked and skipped (value None)."""
    end = len(data) if size is None else size
    r = _Reader(data, min(end, MAX_MODEL_BYTES))
    r.need(4, "the header")
    if bytes(data[:4]) != MAGIC:
        raise ModelFormatError("not a GGUF file (it does not start with b'GGUF')")
    r.pos = 4
    version = r.fixed("I", "the version")
    if version not in VERSIONS:
        if version & 0xFFFF == 0 and (version >> 24) in VERSIONS:
            raise ModelFormatError("a big-endian GGUF file; tokviz reads little-endian GGUF files only")
        raise ModelFormatError(f"GGUF version {version}; tokviz reads versions 2 and 3")
    r.u64("the tensor count")
    n_kv = r.u64("the key/value count")
    if n_kv > MAX_KEYS:
        raise ModelFormatError(f"GGUF file declares {n_kv:,} keys, more than tokviz reads ({MAX_KEYS:,})")
    r.need(13 * n_kv, f"{n_kv:,} keys")  # each at least a key length, a type and one byte
    out: dict[str, tuple[int, Any]] = {}
    for k in range(n_kv):
        key = r.string(f"key {k}")
        t = _value_type(r, f"type of {key!r}")
        if key in out:
            raise ModelFormatError(f"GGUF key {key!r} occurs twice")
        out[key] = (t, _value(r, key, t, wanted(key)))
    return version, out


def read_metadata(path: str | os.PathLike, *,
                  wanted: Callable[[str], bool] = lambda key: True) -> tuple[int, dict[str, tuple[int, Any]]]:
    """`parse_metadata` of the GGUF file `path`, mapped (never read whole); errors name the file."""
    path = Path(path)
    fd = open_regular(path, ModelFormatError)
    try:
        size = os.fstat(fd).st_size
        if size < 24:
            raise ModelFormatError(f"{path}: truncated GGUF file ({size} bytes, shorter than its header)")
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as mm:
            try:
                return parse_metadata(mm, size=size, wanted=wanted)
            except ModelFormatError as exc:
                raise ModelFormatError(f"{path}: {exc}") from None
    except (OSError, ValueError) as exc:
        raise ModelFormatError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    finally:
        os.close(fd)
