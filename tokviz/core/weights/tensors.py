"""Finding a model's embedding and unembedding matrices in its safetensors file(s).

`open_weights(path)` takes a ``.safetensors`` file, a sharded model's
``model.safetensors.index.json`` (its ``weight_map`` names the shard holding each tensor) or a
folder holding either, and finds the input embedding (`EMBEDDING_NAMES`: ``model.embed_tokens.weight``,
``transformer.wte.weight``, ...) and the output matrix (`UNEMBEDDING_NAMES`: ``lm_head.weight``,
``output.weight``, ``embed_out.weight``, ...). Without an output matrix, or with one whose bytes are
the embedding's, the embeddings are tied: the one matrix serves both. Only the headers of the
files that hold these two tensors are read; no other tensor is ever touched.

What this leaves out: reading rows (`safetensors`) and what is computed from them (`indicators`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tokviz.core.io.safe_files import parse_json, read_file_bytes

from .safetensors import PICKLE_SUFFIXES, SafetensorsFile, TensorInfo, WeightsError, readable_dtype, refuse_pickle

# the names models give their input embedding and output (unembedding) matrices, most common first
EMBEDDING_NAMES = (
    "model.embed_tokens.weight", "transformer.wte.weight", "tok_embeddings.weight", "gpt_neox.embed_in.weight",
    "embed_tokens.weight", "wte.weight", "transformer.word_embeddings.weight", "word_embeddings.weight",
    "model.decoder.embed_tokens.weight", "transformer.embd.wte.weight", "model.transformer.wte.weight",
    "backbone.embeddings.weight", "backbone.embedding.weight", "model.language_model.embed_tokens.weight",
    "language_model.model.embed_tokens.weight", "model.embed_in.weight", "embed_in.weight",
)
UNEMBEDDING_NAMES = (
    "lm_head.weight", "output.weight", "embed_out.weight", "model.transformer.ff_out.weight",
    "transformer.ff_out.weight", "language_model.lm_head.weight", "model.lm_head.weight", "lm_head.linear.weight",
)
EMBEDDING_SUFFIXES = ("embed_tokens.weight", "wte.weight", "tok_embeddings.weight", "word_embeddings.weight",
                      "embed_in.weight")
UNEMBEDDING_SUFFIXES = ("lm_head.weight", "embed_out.weight")
INDEX_NAME = "model.safetensors.index.json"
MAX_SHARDS = 10_000


@dataclass(frozen=True)
class Matrix:
    """One [vocabulary, dimension] matrix in one file: rows are read from it a slice at a time."""

    file: SafetensorsFile
    info: TensorInfo

    @property
    def n_rows(self) -> int:
        return self.info.shape[0]

    @property
    def dim(self) -> int:
        return self.info.shape[1]

    def rows(self, start: int, stop: int) -> np.ndarray:
        return self.file.rows(self.info.name, start, stop)

    def pick(self, ids) -> np.ndarray:
        return self.file.pick_rows(self.info.name, ids)

    def chunk_rows(self, max_bytes: int) -> int:
        """How many rows fit `max_bytes` of float32 (at least one)."""
        return max(1, max_bytes // (4 * max(1, self.dim)))


@dataclass(frozen=True)
class ModelWeights:
    """A model's `embedding` and `unembedding` matrices (the same `Matrix` when `tied`)."""

    source: str
    embedding: Matrix
    unembedding: Matrix
    tied: bool

    @property
    def n_rows(self) -> int:
        return self.unembedding.n_rows


def open_weights(path: str | os.PathLike) -> ModelWeights:
    """The embedding matrices of the model at `path` (file, index or folder; see module doc)."""
    p = Path(path)
    refuse_pickle(p)
    if p.is_dir():
        files = _folder(p)
    elif p.name.endswith(".index.json"):
        files = _index(p)
    elif p.exists():
        files = [p]
    else:
        raise WeightsError(f"{p}: no such file or folder")
    return _find(str(p), files)


def _folder(folder: Path) -> list[Path] | dict[str, Path]:
    index = folder / INDEX_NAME
    if index.is_file():
        return _index(index)
    names = sorted(q for q in folder.iterdir() if q.suffix == ".safetensors" and q.is_file())
    if not names:
        pickles = sorted(q.name for q in folder.iterdir() if q.suffix.lower() in PICKLE_SUFFIXES)
        if pickles:
            refuse_pickle(folder / pickles[0])
        raise WeightsError(f"{folder}: no .safetensors file in this folder")
    if len(names) > MAX_SHARDS:
        raise WeightsError(f"{folder}: {len(names):,} safetensors files; more than tokviz reads ({MAX_SHARDS:,})")
    return names


def _index(index: Path) -> dict[str, Path]:
    """tensor name -> shard path, from a sharded model's index (shards must sit beside it)."""
    data = parse_json(read_file_bytes(index, limit=64 << 20, error=WeightsError), str(index), WeightsError)
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise WeightsError(f"{index}: no weight_map (tensor name -> shard file) in this index")
    out = {}
    for name, shard in weight_map.items():
        if not isinstance(shard, str) or Path(shard).name != shard or shard in ("", ".", ".."):
            raise WeightsError(f"{index}: tensor {name!r} is mapped to {shard!r}; a shard must be a file name "
                               "in the index's folder")
        refuse_pickle(Path(shard))
        out[name] = index.parent / shard
    return out


def _pick(names, exact: tuple[str, ...], suffixes: tuple[str, ...]) -> str | None:
    names = list(names)
    for n in exact:
        if n in names:
            return n
    hits = [n for n in names if n.endswith(suffixes)]
    return hits[0] if len(hits) == 1 else None


def _find(source: str, files: list[Path] | dict[str, Path]) -> ModelWeights:
    if isinstance(files, dict):  # an index: open only the shards of the two tensors
        emb_name = _pick(files, EMBEDDING_NAMES, EMBEDDING_SUFFIXES)
        out_name = _pick(files, UNEMBEDDING_NAMES, UNEMBEDDING_SUFFIXES)
        headers = {q: SafetensorsFile.open(q) for q in {files[n] for n in (emb_name, out_name) if n}}
        located = {n: headers[files[n]] for n in (emb_name, out_name) if n}
        for n, f in located.items():
            if n not in f.tensors:
                raise WeightsError(f"{source}: the index puts {n!r} in {files[n].name}, which does not hold it")
    else:
        located, emb_name, out_name = {}, None, None
        for q in files:
            f = SafetensorsFile.open(q)
            for n in f.tensors:
                located.setdefault(n, f)
        emb_name = _pick(located, EMBEDDING_NAMES, EMBEDDING_SUFFIXES)
        out_name = _pick(located, UNEMBEDDING_NAMES, UNEMBEDDING_SUFFIXES)
    if emb_name is None and out_name is None:
        raise WeightsError(f"{source}: no embedding matrix found (looked for {', '.join(EMBEDDING_NAMES[:4])}, "
                           f"{', '.join(UNEMBEDDING_NAMES[:3])} and similar names)")
    emb = _matrix(located, emb_name or out_name, source)
    out = _matrix(located, out_name, source) if out_name else emb
    if out.n_rows != emb.n_rows or out.dim != emb.dim:
        raise WeightsError(f"{source}: the embedding is {list(emb.info.shape)} but the output matrix "
                           f"{list(out.info.shape)}; tokviz compares them row by row")
    tied = out is emb or _same_bytes(emb, out)
    return ModelWeights(source, emb, emb if tied else out, tied)


def _matrix(located: dict[str, SafetensorsFile], name: str, source: str) -> Matrix:
    f = located[name]
    info = f.tensors[name]
    readable_dtype(info, f.path)
    if info.shape[0] < 2 or info.shape[1] < 1:
        raise WeightsError(f"{source}: tensor {name!r} has shape {list(info.shape)}, not an embedding matrix")
    return Matrix(f, info)


def _same_bytes(a: Matrix, b: Matrix) -> bool:
    """Whether two matrices hold the same numbers (a tied model saved with both), by a few rows."""
    if a.info.dtype != b.info.dtype:
        return False
    probe = np.unique(np.linspace(0, a.n_rows - 1, 8).astype(np.int64))
    return bool(np.array_equal(a.pick(probe), b.pick(probe)))
