"""Model weights with planted under-trained rows, written at test time with the safetensors package.

Ordinary rows are random with a shared offset (as trained unembeddings have); planted rows and the
known-unused reference rows are small and all point near one shared direction, as the rows of
tokens a model never saw do (every step pushes them the same way). The planted ids are what an
indicator must find.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

VOCAB, DIM, N_PLANTED = 2000, 64, 20


@dataclass(frozen=True)
class Planted:
    path: Path
    planted: np.ndarray  # ids of the planted under-trained rows
    reference: np.ndarray  # ids of the known-unused rows (rows past a tokenizer's vocabulary)
    embedding: np.ndarray  # float32, as written (before any rounding to the file's dtype)
    unembedding: np.ndarray | None


def matrices(*, vocab: int = VOCAB, dim: int = DIM, n_planted: int = N_PLANTED, n_reference: int = 10,
             seed: int = 0, low: int = 256) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(embedding, unembedding, planted ids, reference ids); the reference rows are the last ones and
    those of the bytes UTF-8 never uses (0xC0, 0xC1, 0xF5-0xFF: ids of a byte-level BPE), untrained too.
    The unembedding also has small decoy rows in random directions, which the cosine must pass over."""
    rng = np.random.default_rng(seed)
    never = [b for b in (0xC0, 0xC1, *range(0xF5, 0x100)) if b < low]
    reference = np.r_[never, np.arange(vocab - n_reference, vocab)].astype(np.int64)
    planted = np.sort(rng.choice(np.arange(low, vocab - n_reference), n_planted, replace=False))
    offset = rng.standard_normal(dim)
    under = rng.standard_normal(dim)
    under /= np.linalg.norm(under)

    def matrix(decoys: int) -> np.ndarray:
        m = rng.standard_normal((vocab, dim)) + 0.8 * offset * rng.uniform(0.5, 1.5, (vocab, 1))
        if decoys:  # small rows pointing anywhere: a norm alone would take them for under-trained
            ordinary = np.setdiff1d(np.arange(low, vocab), np.r_[planted, reference])
            m[rng.choice(ordinary, decoys, replace=False)] *= 0.08
        cold = np.r_[planted, reference]
        m[cold] = 0.6 * under + 0.08 * rng.standard_normal((len(cold), dim))
        return m.astype(np.float32)

    return matrix(0), matrix(2 * n_planted), planted, reference


def bf16_bytes(a: np.ndarray) -> bytes:
    """float32 -> bfloat16 bytes, rounded to nearest even (what torch writes)."""
    bits = np.ascontiguousarray(a, "<f4").view("<u4").astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2").tobytes()


def write_raw(path: Path, tensors: dict[str, tuple[str, tuple[int, ...], bytes]]) -> None:
    """A safetensors file by hand (for dtypes numpy lacks): name -> (dtype, shape, bytes)."""
    header, at = {}, 0
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [at, at + len(data)]}
        at += len(data)
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        for _, _, data in tensors.values():
            f.write(data)


def write_model(path: Path, *, dtype: str = "F32", tied: bool = True, names=("model.embed_tokens.weight",
                "lm_head.weight"), extra: dict[str, np.ndarray] | None = None, **kw) -> Planted:
    """One safetensors file: the embedding (and the output matrix unless `tied`) plus `extra` tensors."""
    emb, out, planted, reference = matrices(**kw)
    if tied:  # the one matrix is the output matrix too: the one with decoys
        emb = out
    arrays = {names[0]: emb, **({} if tied else {names[1]: out}), **(extra or {})}
    if dtype == "BF16":
        write_raw(path, {k: ("BF16", v.shape, bf16_bytes(v)) for k, v in arrays.items()})
    else:
        from safetensors.numpy import save_file

        save_file({k: v.astype(np.float16 if dtype == "F16" else np.float32) for k, v in arrays.items()}, str(path))
    return Planted(path, planted, reference, emb, None if tied else out)


def write_sharded(folder: Path, **kw) -> Planted:
    """A sharded model: the embedding in one shard, the output matrix and a layer in another, and
    ``model.safetensors.index.json`` mapping them."""
    from safetensors.numpy import save_file

    emb, out, planted, reference = matrices(**kw)
    folder.mkdir(parents=True, exist_ok=True)
    save_file({"model.embed_tokens.weight": emb}, str(folder / "model-00001-of-00002.safetensors"))
    save_file({"lm_head.weight": out, "model.norm.weight": np.ones(emb.shape[1], np.float32)},
              str(folder / "model-00002-of-00002.safetensors"))
    index = {"metadata": {"total_size": 0}, "weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                                                           "lm_head.weight": "model-00002-of-00002.safetensors",
                                                           "model.norm.weight": "model-00002-of-00002.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    return Planted(folder, planted, reference, emb, out)


def recall(ranked_ids, planted: np.ndarray, reference: np.ndarray, top: int = N_PLANTED) -> float:
    """Share of `planted` among the first `top` of `ranked_ids` that are not reference ids."""
    ref = set(reference.tolist())
    head = [i for i in ranked_ids if i not in ref][:top]
    return len(set(head) & set(planted.tolist())) / len(planted)
