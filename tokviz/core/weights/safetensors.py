"""A reader of safetensors files written from the format's description, that reads only what it is asked for.

A safetensors file is an 8-byte little-endian header length N, then N bytes of UTF-8 JSON (an
object: tensor name -> ``{"dtype", "shape", "data_offsets": [begin, end]}``, plus an optional
``"__metadata__"`` of strings), then the tensors' bytes; offsets count from the end of the header.
Everything is checked before a byte of data is touched: the header's length (at most
`MAX_HEADER_BYTES`, within the file), its JSON, every dtype, every shape against its offsets, and
the offsets against each other and the file (the reference implementation's rule: tensors follow
one another with no gap or overlap and the last one ends at the end of the file).

Data is read a slice of rows at a time (`SafetensorsFile.rows`): only that slice's byte range is
memory-mapped, converted to float32 and let go, so reading a 10 GB tensor takes memory for one
slice. The file is data: nothing in it is executed, and pickled checkpoints are never opened.

    >>> import json, tempfile
    >>> header = json.dumps({"w": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 24]}}).encode()
    >>> path = Path(tempfile.mkdtemp()) / "m.safetensors"
    >>> _ = path.write_bytes(struct.pack("<Q", len(header)) + header + np.arange(6, dtype="<f4").tobytes())
    >>> f = SafetensorsFile.open(path)
    >>> f.tensors["w"].shape, f.rows("w", 1, 3).tolist()
    ((3, 2), [[2.0, 3.0], [4.0, 5.0]])

What this leaves out: which tensors a model's embeddings are (`tensors`) and the indicators.
"""

from __future__ import annotations

import math
import mmap
import os
import struct
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tokviz.core.errors import ModelFormatError
from tokviz.core.io.checks import is_count
from tokviz.core.io.safe_files import open_regular, parse_json

MAX_HEADER_BYTES = 100_000_000  # the reference implementation's limit on the JSON header
# dtype -> bits per element: every dtype the format defines (sub-byte ones are packed)
DTYPE_BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "I16": 16, "U16": 16,
              "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "F64": 64, "I64": 64, "U64": 64,
              "C64": 64, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6}
READABLE = {"F16": np.float16, "BF16": np.uint16, "F32": np.float32}  # dtypes read as float32 rows


class WeightsError(ModelFormatError):
    """A weights file that is not a well-formed safetensors file, or not one tokviz can use."""


@dataclass(frozen=True)
class TensorInfo:
    """One tensor's entry: `begin`/`end` are absolute byte positions in its file."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int

    @property
    def row_bytes(self) -> int:
        """Bytes of one row of a 2-D tensor."""
        return self.shape[1] * DTYPE_BITS[self.dtype] // 8 if len(self.shape) == 2 else 0


def _n_bytes(dtype: str, shape: tuple[int, ...]) -> int:
    return math.ceil(math.prod(shape) * DTYPE_BITS[dtype] / 8)


@dataclass(frozen=True)
class SafetensorsFile:
    """A checked safetensors header (`tensors`: name -> `TensorInfo`) and its file's path."""

    path: str
    tensors: dict[str, TensorInfo]
    size: int

    @classmethod
    def open(cls, path: str | os.PathLike) -> SafetensorsFile:
        """Read and check the header of the safetensors file at `path` (`WeightsError` if bad)."""
        name = str(path)
        fd = open_regular(path, WeightsError)
        try:
            size = os.fstat(fd).st_size
            if size < 8:
                raise WeightsError(f"{name}: {size} bytes is too short for a safetensors file (an 8-byte header "
                                   "length comes first)")
            (n,) = struct.unpack("<Q", os.pread(fd, 8, 0))
            if n > MAX_HEADER_BYTES:
                raise WeightsError(f"{name}: a header of {n:,} bytes is more than a safetensors file may have "
                                   f"({MAX_HEADER_BYTES:,}); not a safetensors file?")
            if 8 + n > size:
                raise WeightsError(f"{name}: the header says it is {n:,} bytes long but the file has only "
                                   f"{size - 8:,} after the length; the file is truncated or not safetensors")
            raw = b""
            while len(raw) < n:  # (pread may return less than asked)
                block = os.pread(fd, n - len(raw), 8 + len(raw))
                if not block:
                    raise WeightsError(f"{name}: the file ended inside its header")
                raw += block
        except OSError as exc:
            raise WeightsError(f"{name}: cannot read ({exc.strerror or exc})") from None
        finally:
            os.close(fd)
        return cls(name, parse_header(raw, name, data_start=8 + n, size=size), size)

    def rows(self, tensor: str, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of the 2-D tensor `tensor` as float32, ``(stop - start, dim)``: only
        their bytes are mapped, and only while they are converted."""
        info = self.tensors[tensor]
        readable_dtype(info, self.path)
        n_rows, dim = info.shape
        start, stop = max(0, start), min(stop, n_rows)
        if stop <= start:
            return np.zeros((0, dim), np.float32)
        with self._mapped(info, start, stop) as mapped:
            return _as_float32(mapped, info.dtype)

    def pick_rows(self, tensor: str, ids) -> np.ndarray:
        """The rows `ids` (any order, each within the tensor) as float32: the tensor is mapped and
        only the pages of those rows are read."""
        info = self.tensors[tensor]
        readable_dtype(info, self.path)
        ids = np.asarray(ids, np.int64)
        if not len(ids):
            return np.zeros((0, info.shape[1]), np.float32)
        lo, hi = int(ids.min()), int(ids.max()) + 1
        with self._mapped(info, lo, hi) as mapped:
            return _as_float32(mapped[ids - lo], info.dtype)

    @contextmanager
    def _mapped(self, info: TensorInfo, start: int, stop: int):
        """A read-only map of rows ``start:stop`` as an array of the file's dtype; unmapped on
        leaving the block (or, if an array still uses it then, as soon as that array goes)."""
        offset = info.begin + start * info.row_bytes
        base = offset - offset % mmap.ALLOCATIONGRANULARITY
        fd = open_regular(self.path, WeightsError)
        try:
            if os.fstat(fd).st_size != self.size:
                raise WeightsError(f"{self.path}: the file changed size since its header was read; open it again")
            mm = mmap.mmap(fd, offset - base + (stop - start) * info.row_bytes, access=mmap.ACCESS_READ, offset=base)
        except OSError as exc:
            raise WeightsError(f"{self.path}: cannot read tensor {info.name!r} ({exc.strerror or exc})") from None
        finally:
            os.close(fd)  # (the map keeps its own reference to the file)
        rows = np.frombuffer(mm, READABLE[info.dtype], (stop - start) * info.shape[1], offset - base)
        try:
            yield rows.reshape(stop - start, info.shape[1])
        finally:
            del rows
            try:
                mm.close()
            except BufferError:  # the caller still holds a view: freed with it
                pass


def readable_dtype(info: TensorInfo, path: str):
    """The numpy dtype tokviz reads `info`'s bytes as (bf16 as raw 16-bit words); `WeightsError`
    for dtypes it does not read (its indicators are for float weights)."""
    if info.dtype not in READABLE:
        raise WeightsError(f"{path}: tensor {info.name!r} is {info.dtype}; tokviz reads embedding matrices "
                           f"stored as {', '.join(READABLE)} (a quantized model's are not)")
    if len(info.shape) != 2:
        raise WeightsError(f"{path}: tensor {info.name!r} has shape {list(info.shape)}, not [vocabulary, dimension]")
    return READABLE[info.dtype]


def _as_float32(rows: np.ndarray, dtype: str) -> np.ndarray:
    """A float32 copy of rows in the file's dtype: a bfloat16 is the top half of a float32's bits,
    so its 16-bit words go to the high halves of zeroed float32s (little-endian: the odd halves)."""
    if dtype == "BF16":
        out = np.zeros(rows.shape, np.float32)
        out.view(np.uint16).reshape(*rows.shape[:-1], -1, 2)[..., 1] = rows
        return out
    return np.array(rows, dtype=np.float32)


def parse_header(raw: bytes, name: str, *, data_start: int, size: int) -> dict[str, TensorInfo]:
    """The checked tensor entries of header bytes `raw`, whose data starts at byte `data_start` of a
    file of `size` bytes."""
    if not raw.lstrip(b" ").startswith(b"{"):
        raise WeightsError(f"{name}: the header is not a JSON object; not a safetensors file")
    header = parse_json(raw, name, WeightsError, what="safetensors header JSON")
    if not isinstance(header, dict):
        raise WeightsError(f"{name}: the header is not a JSON object; not a safetensors file")
    meta = header.get("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise WeightsError(f"{name}: __metadata__ must map names to strings")
    tensors = {}
    for key, entry in header.items():
        if key != "__metadata__":
            tensors[key] = _entry(key, entry, name, data_start)
    _check_layout(list(tensors.values()), name, data_start, size)
    return tensors


def _entry(key: str, entry: object, name: str, data_start: int) -> TensorInfo:
    where = f"{name}: tensor {key!r}"
    if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= entry.keys():
        raise WeightsError(f"{where}: an entry needs dtype, shape and data_offsets")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        raise WeightsError(f"{where}: unknown dtype {dtype!r} (safetensors defines {', '.join(DTYPE_BITS)})")
    if not isinstance(shape, list) or len(shape) > 16 or not all(is_count(d) for d in shape):
        raise WeightsError(f"{where}: the shape must be a list of whole numbers, got {shape!r}"[:300])
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(is_count(o) for o in offsets)
            and offsets[0] <= offsets[1]):
        raise WeightsError(f"{where}: data_offsets must be [begin, end] with 0 <= begin <= end, got {offsets!r}"[:300])
    shape_t = tuple(shape)
    need = _n_bytes(dtype, shape_t)
    if need != offsets[1] - offsets[0]:
        raise WeightsError(f"{where}: shape {list(shape_t)} of {dtype} is {need:,} bytes but its offsets hold "
                           f"{offsets[1] - offsets[0]:,}")
    return TensorInfo(key, dtype, shape_t, data_start + offsets[0], data_start + offsets[1])


def _check_layout(tensors: list[TensorInfo], name: str, data_start: int, size: int) -> None:
    """Tensors one after another from the end of the header to the end of the file."""
    at = data_start
    for t in sorted(tensors, key=lambda t: (t.begin, t.end)):
        if t.end > size:
            raise WeightsError(f"{name}: tensor {t.name!r} ends at byte {t.end:,}, past the end of the file "
                               f"({size:,} bytes); the file is truncated or its offsets are wrong")
        if t.begin < at:
            raise WeightsError(f"{name}: tensor {t.name!r} overlaps the tensor before it (bytes "
                               f"{t.begin - data_start:,}-{at - data_start:,} of the data are claimed twice)")
        if t.begin > at:
            raise WeightsError(f"{name}: {t.begin - at:,} bytes before tensor {t.name!r} belong to no tensor; "
                               "not a well-formed safetensors file")
        at = t.end
    if at != size:
        raise WeightsError(f"{name}: {size - at:,} bytes after the last tensor belong to no tensor; "
                           "not a well-formed safetensors file")


def refuse_pickle(path: Path) -> None:
    """`WeightsError` for checkpoint formats that are Python pickles, which tokviz never opens."""
    if path.suffix.lower() in PICKLE_SUFFIXES:
        raise WeightsError(f"{path}: a {path.suffix} checkpoint is a Python pickle, which can run code when "
                           "loaded; tokviz reads .safetensors only (convert it, e.g. with safetensors' "
                           "convert script, or download the model's safetensors files)")


PICKLE_SUFFIXES = {".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle"}
