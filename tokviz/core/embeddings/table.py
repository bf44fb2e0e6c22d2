"""Token embedding tables: a ``(vocabulary, D)`` float32 matrix, where it came from, and its size.

An `EmbeddingTable` is what a model looks token ids up in. It comes from a seeded random
initialisation (`EmbeddingTable.random`), from training (`tokviz.core.embeddings.training`) or from a
``.npy`` file whose row count must match the tokenizer's vocabulary (`EmbeddingTable.load`,
with clear errors for a wrong shape, dtype or a damaged file). `REFERENCE_MODELS` and
`embedding_share` put its parameter count ``V x D`` next to real models (GPT-2 small spends
31% of its 124M parameters on the 50257 x 768 token table). What this leaves out: similarity
and neighbours (`tokviz.core.embeddings.similarity`) and training.
"""

from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass
from numbers import Integral
from pathlib import Path

import numpy as np

from tokviz.core.errors import ModelFormatError, SettingsError, TokvizError
from tokviz.core.io.safe_files import write_atomic

MAX_EMBED_DIM = 4096
MAX_ENTRIES = 1 << 28  # V x D limit of a table: 1 GiB of float32
_NPY_MAGIC = b"\x93NUMPY"


def _check_int(name: str, value: object, lo: int, hi: int) -> int:
    if not isinstance(value, Integral) or isinstance(value, bool) or not lo <= value <= hi:
        raise SettingsError(f"{name} must be between {lo} and {hi}, got {value!r}")
    return int(value)


def check_table_shape(n_vocab: object, dim: object) -> tuple[int, int]:
    """``(n_vocab, dim)`` as ints with ``n_vocab >= 1``, ``1 <= dim <= 4096`` and V x D <= 2^28."""
    v = _check_int("vocabulary size", n_vocab, 1, MAX_ENTRIES)
    d = _check_int("embedding dimension D", dim, 1, MAX_EMBED_DIM)
    if v * d > MAX_ENTRIES:
        raise SettingsError(
            f"a {v} x {d} table has {v * d:,} entries, more than the {MAX_ENTRIES:,} allowed "
            f"(1 GiB); choose D <= {MAX_ENTRIES // v}"
        )
    return v, d


@dataclass(frozen=True, eq=False)
class EmbeddingTable:
    """A read-only ``(n_vocab, dim)`` float32 matrix: row ``i`` is the vector of token id ``i``.

    >>> t = EmbeddingTable.random(5, 3, seed=0)
    >>> t.n_vocab, t.dim, t.parameter_count, t.vectors.dtype.name
    (5, 3, 15, 'float32')
    """

    vectors: np.ndarray  # (V, D) float32, read-only
    source: str = ""  # where it came from, for display: "random (seed 0)", "trained", a file name

    def __post_init__(self) -> None:
        v = np.asarray(self.vectors)
        if v.ndim != 2:
            raise SettingsError(f"an embedding table is a 2-D matrix (vocabulary x D), got shape {v.shape}")
        check_table_shape(v.shape[0], v.shape[1])
        v = np.array(v, dtype=np.float32, copy=True)  # own the data: callers cannot change it later
        v.flags.writeable = False
        object.__setattr__(self, "vectors", v)

    @property
    def n_vocab(self) -> int:
        return int(self.vectors.shape[0])

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def parameter_count(self) -> int:
        """V x D: the number of trainable numbers in the table."""
        return self.n_vocab * self.dim

    def share_of(self, total_params: int) -> float:
        """`parameter_count` as a fraction of a model with `total_params` parameters."""
        return embedding_share(self.n_vocab, self.dim, total_params)

    @classmethod
    def random(cls, n_vocab: int, dim: int, *, seed: int = 0, scale: float = 0.02) -> "EmbeddingTable":
        """Normal(0, scale) entries drawn with `seed` (GPT-2 initialises with scale 0.02).

        >>> a, b = EmbeddingTable.random(4, 2, seed=7), EmbeddingTable.random(4, 2, seed=7)
        >>> bool(np.array_equal(a.vectors, b.vectors)), a.source
        (True, 'random (seed 7)')
        """
        v, d = check_table_shape(n_vocab, dim)
        if not isinstance(seed, Integral) or isinstance(seed, bool) or seed < 0:
            raise SettingsError(f"seed must be a whole number >= 0, got {seed!r}")
        if not isinstance(scale, (int, float)) or isinstance(scale, bool) or not math.isfinite(scale) or scale <= 0:
            raise SettingsError(f"scale (standard deviation) must be a positive number, got {scale!r}")
        vectors = np.random.default_rng(int(seed)).standard_normal((v, d), dtype=np.float32)
        vectors *= np.float32(scale)
        return cls(vectors, f"random (seed {int(seed)})")

    @classmethod
    def load(cls, path: str | os.PathLike, *, n_vocab: int | None = None) -> "EmbeddingTable":
        """Read a ``.npy`` matrix; with `n_vocab`, its row count must equal the vocabulary size.

        Raises `TokvizError` when the file cannot be read, `ModelFormatError` when it is not a
        (complete) ``.npy`` array, and `SettingsError` for a shape, dtype or values that cannot be
        an embedding table. Any real or integer dtype is converted to float32.
        """
        name = os.fspath(path)
        try:
            with open(name, "rb") as f:
                head = f.read(len(_NPY_MAGIC))
        except OSError as e:
            raise TokvizError(f"cannot read embedding file {name!r}: {e.strerror or e}") from None
        if head != _NPY_MAGIC:
            hint = " (it is a zip archive, e.g. .npz: save a single array with numpy.save)" if head[:2] == b"PK" else ""
            raise ModelFormatError(f"{name!r} is not a NumPy .npy file{hint}")
        try:
            mapped = np.load(name, mmap_mode="r", allow_pickle=False)  # header + mapping, no data read
        except (ValueError, OSError, EOFError) as e:
            raise ModelFormatError(f"{name!r} is damaged or truncated, or holds Python objects: {e}") from None
        try:
            return cls(_checked_matrix(mapped, name, n_vocab), os.path.basename(name))
        finally:
            del mapped

    def save(self, path: str | os.PathLike) -> None:
        """Write the vectors as a ``.npy`` file (`load` reads it back)."""
        buffer = io.BytesIO()
        np.save(buffer, self.vectors, allow_pickle=False)
        write_atomic(Path(path), buffer.getvalue())  # never a half-written .npy


def _checked_matrix(a: np.ndarray, name: str, n_vocab: int | None) -> np.ndarray:
    if a.ndim != 2:
        raise SettingsError(f"{name!r} holds an array of shape {a.shape}; an embedding table is 2-D (vocabulary x D)")
    if a.dtype.kind not in "fiu":
        raise SettingsError(f"{name!r} holds {a.dtype} values; an embedding table needs real numbers (e.g. float32)")
    rows, dim = a.shape
    if n_vocab is not None and rows != n_vocab:
        raise SettingsError(
            f"{name!r} has {rows} rows but the tokenizer has {n_vocab} ids; load a matrix made for this "
            f"vocabulary, of shape ({n_vocab}, D)"
        )
    check_table_shape(rows, dim)
    try:
        out = np.array(a, dtype=np.float32)
    except (ValueError, OSError) as e:
        raise ModelFormatError(f"{name!r} could not be read completely: {e}") from None
    finite = np.isfinite(out).all(axis=1)
    if not finite.all():
        raise SettingsError(f"{name!r} contains NaN or infinity (first in row {int(np.argmin(finite))})")
    return out


@dataclass(frozen=True, slots=True)
class ReferenceModel:
    """A published model's size, for comparing a table's ``V x D`` with it."""

    name: str
    total_params: int  # every parameter, each shared matrix counted once
    n_vocab: int
    dim: int
    tied: bool  # output projection shares the token table (GPT-2) or is a second V x D (LLaMA)

    @property
    def embedding_params(self) -> int:
        return self.n_vocab * self.dim

    @property
    def embedding_share(self) -> float:
        """Share of the input token table in the whole model."""
        return self.embedding_params / self.total_params


def gpt2_parameter_count(n_layer: int, dim: int, *, n_vocab: int = 50257, n_ctx: int = 1024) -> int:
    """Parameters of a GPT-2 shaped model (tied output): tables, blocks and the final norm.

    Per block ``12 d^2 + 13 d`` (attention 4d^2 + 4d, MLP 8d^2 + 5d, two norms 4d).

    >>> gpt2_parameter_count(12, 768)
    124439808
    """
    return n_vocab * dim + n_ctx * dim + n_layer * (12 * dim * dim + 13 * dim) + 2 * dim


REFERENCE_MODELS: dict[str, ReferenceModel] = {
    m.name: m
    for m in (
        ReferenceModel("GPT-2 small", gpt2_parameter_count(12, 768), 50257, 768, True),
        ReferenceModel("GPT-2 medium", gpt2_parameter_count(24, 1024), 50257, 1024, True),
        ReferenceModel("GPT-2 large", gpt2_parameter_count(36, 1280), 50257, 1280, True),
        ReferenceModel("GPT-2 XL", gpt2_parameter_count(48, 1600), 50257, 1600, True),
        ReferenceModel("Llama 2 7B", 6_738_415_616, 32000, 4096, False),
    )
}


def embedding_share(n_vocab: int, dim: int, total_params: int) -> float:
    """``n_vocab * dim / total_params``: the table's share of a model of the given size.

    Above 1 when the table alone is larger than that model.

    >>> round(embedding_share(50257, 768, REFERENCE_MODELS["GPT-2 small"].total_params), 4)
    0.3102
    """
    if not isinstance(total_params, Integral) or isinstance(total_params, bool) or total_params < 1:
        raise SettingsError(f"model size must be a positive number of parameters, got {total_params!r}")
    return n_vocab * dim / int(total_params)
