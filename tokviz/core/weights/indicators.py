"""Magikarp's under-training indicators, computed from a model's embedding matrices a slice at a time.

As cohere-ai/magikarp computes them (Land & Bartolo 2024, ``magikarp/utils.py`` and ``model.py``):

- a reference set of tokens known never to occur in training (`reference_ids`);
- the cosine of each token's unembedding (output) row to the mean of the reference rows;
  Magikarp reports it as a cosine *distance*, ``1 - cos``, with the norms clipped at 1e-6
  (zero rows give 0); tokviz shows the cosine itself, higher = closer to the unused tokens;
- the same after removing the first principal component of the unembedding matrix from every row
  (PCA centres the data to find it; the projection is removed from the rows as they are);
- the norms of each row of the embedding and unembedding matrices.

The main indicator is Magikarp's default: the embedding's norm when the model has separate input and
output matrices, else the cosine distance to the reference mean (`WeightEvidence.indicator`, lower =
more likely under-trained, as in Magikarp).

Where tokviz differs: the reference set comes from the tokenizer by rule (Magikarp lists it by hand
per model; the rules cover its lists: rows past the tokenizer's vocabulary, byte tokens of bytes
UTF-8 never uses, ``<unused…>``/reserved specials), and can be given instead. Without any, a tied model
falls back to its matrix's norm (Magikarp refuses such a model). The first principal component comes
from at most `PCA_SAMPLE_BYTES` of evenly spaced rows, not the whole matrix, so that one pass over
each matrix is enough whatever its size. Magikarp's centred cosine, L2 distance and output bias are
not computed.

What this leaves out: reading files (`safetensors`, `tensors`) and the vocabulary-only score.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tokviz.core.errors import Cancelled

from .safetensors import WeightsError
from .tensors import Matrix, ModelWeights

CHUNK_BYTES = 1 << 20  # float32 bytes per slice of rows: small enough that the passes over a slice hit the cache
PCA_SAMPLE_BYTES = 16 << 20  # float32 bytes of rows the first principal component is found from
NEVER_IN_UTF8 = (0xC0, 0xC1, *range(0xF5, 0x100))  # bytes no UTF-8 text holds
UNUSED_SPECIAL = re.compile(r"unused|reserved|madeupword", re.IGNORECASE)
CLIP = 1e-6  # Magikarp's floor for norms in a cosine


@dataclass(frozen=True)
class WeightEvidence:
    """Per-row indicators of a model's matrices (arrays over ids, float32)."""

    source: str
    n_rows: int
    dim: int
    dtype: str
    tied: bool
    unembedding_norm: np.ndarray
    embedding_norm: np.ndarray | None  # None when tied (the same matrix)
    cosine: np.ndarray | None  # to the reference mean; None without a reference set
    cosine_no_pc: np.ndarray | None  # the same without the first principal component
    reference: np.ndarray  # ids of the known-unused tokens
    reference_note: str

    @property
    def indicator_name(self) -> str:
        if not self.tied:
            return "embedding norm"
        return "unembedding cosine distance to the unused tokens" if self.cosine is not None else "unembedding norm"

    @property
    def indicator(self) -> np.ndarray:
        """Magikarp's main indicator per row: lower = more likely under-trained."""
        if self.embedding_norm is not None:
            return self.embedding_norm
        return 1.0 - self.cosine if self.cosine is not None else self.unembedding_norm

    def note(self) -> str:
        """One sentence: what the matrices are and what ranks them."""
        kind = "tied embeddings" if self.tied else "separate input and output matrices"
        return (f"{self.n_rows:,} × {self.dim:,} {self.dtype}, {kind}; ranked by the {self.indicator_name} "
                f"(Magikarp's indicator). Reference: {self.reference_note}.")


def reference_ids(tok, n_rows: int) -> tuple[np.ndarray, str]:
    """(ids, description) of tokens a model cannot have seen in training, from the tokenizer `tok`:
    rows past its vocabulary (padding), byte tokens of bytes no UTF-8 text holds (0xC0, 0xC1,
    0xF5-0xFF), and special tokens named unused, reserved or madeupword."""
    n_vocab = tok.n_vocab
    parts, ids = [], set()
    if n_rows > n_vocab:
        ids.update(range(n_vocab, n_rows))
        parts.append(f"{n_rows - n_vocab:,} rows past the vocabulary")
    vocab = tok.vocab()
    special = set(tok.special_tokens.values())
    never = {bytes([b]) for b in NEVER_IN_UTF8}
    byte_ids = {i for i, t in enumerate(vocab) if t in never and i not in special and i < n_rows}
    if byte_ids:
        ids |= byte_ids
        parts.append(f"{len(byte_ids)} tokens of bytes UTF-8 never uses")
    named = {i for text, i in tok.special_tokens.items() if UNUSED_SPECIAL.search(text) and i < n_rows}
    if named:
        ids |= named
        parts.append(f"{len(named)} unused or reserved special tokens")
    return np.array(sorted(ids), np.int64), (", ".join(parts) if parts else "none found")


def parse_id_ranges(text: str, n_rows: int) -> np.ndarray:
    """Ids from ``"177-187,200"`` (inclusive ranges), each below `n_rows`.

    >>> parse_id_ranges("3-5, 9", 10).tolist()
    [3, 4, 5, 9]
    """
    out: set[int] = set()
    for part in filter(None, (p.strip() for p in text.split(","))):
        m = re.fullmatch(r"(\d{1,12})(?:\s*-\s*(\d{1,12}))?", part)
        if not m:
            raise WeightsError(f"{part!r} is not an id or a range of ids (write e.g. 177-187,200)")
        lo, hi = int(m[1]), int(m[2] or m[1])
        if hi < lo or hi >= n_rows:
            raise WeightsError(f"ids {part} are not within the model's {n_rows:,} rows")
        out.update(range(lo, hi + 1))
    return np.array(sorted(out), np.int64)


def sample_ids(n_rows: int, n: int, blocks: int = 32) -> np.ndarray:
    """About `n` ids of `n_rows`: `blocks` runs of consecutive ids spread evenly over the range (runs
    read fast from a file; single scattered rows cost a page each).

    >>> sample_ids(100, 8, blocks=4).tolist()
    [0, 1, 32, 33, 65, 66, 98, 99]
    """
    if n >= n_rows:
        return np.arange(n_rows)
    run = max(1, n // blocks)
    starts = np.linspace(0, n_rows - run, max(1, n // run)).astype(np.int64)
    return np.unique((starts[:, None] + np.arange(run)).ravel())


def first_component(m: Matrix, *, sample_bytes: int = PCA_SAMPLE_BYTES, iterations: int = 12) -> np.ndarray:
    """The first principal component (unit vector) of `m`'s rows, from a spread sample of at most
    `sample_bytes` (`sample_ids`), by subspace iteration on the centred sample (no dimension-by-
    dimension matrix is formed)."""
    x = m.pick(sample_ids(m.n_rows, m.chunk_rows(sample_bytes)))
    x -= x.mean(axis=0)
    k = min(4, m.dim)
    q = np.linalg.qr(np.random.default_rng(0).standard_normal((m.dim, k)).astype(np.float32))[0]
    for _ in range(iterations):
        q = np.linalg.qr(x.T @ (x @ q))[0]
    xq = (x @ q).astype(np.float64)
    _, v = np.linalg.eigh(xq.T @ xq)  # the top-k subspace's own covariance: its first eigenvector
    pc = q.astype(np.float64) @ v[:, -1]
    norm = np.linalg.norm(pc)
    return (pc / norm if norm > 0 else pc).astype(np.float32)


def _check(should_stop: Callable[[], bool]) -> None:
    if should_stop():
        raise Cancelled()


def _norms(m: Matrix, *, should_stop, progress, what: str, share: tuple[float, float]) -> np.ndarray:
    out = np.empty(m.n_rows, np.float32)
    step = m.chunk_rows(CHUNK_BYTES)
    for start in range(0, m.n_rows, step):
        _check(should_stop)
        progress(what, share[0] + share[1] * start / m.n_rows)
        x = m.rows(start, start + step)
        out[start:start + len(x)] = np.sqrt(np.einsum("ij,ij->i", x, x))
    return out


def _cosines(m: Matrix, reference: np.ndarray, pc: np.ndarray, *, should_stop, progress,
             share: tuple[float, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(norm, cosine to the reference mean, the same without `pc`) of every row, in one pass."""
    ref = m.pick(reference).astype(np.float64)
    mean = ref.mean(axis=0)
    mean_no_pc = (ref - np.outer(ref @ pc, pc)).mean(axis=0)
    norm_mean, norm_mean_no_pc = np.linalg.norm(mean), np.linalg.norm(mean_no_pc)
    n = m.n_rows
    norm, cos, cos_no_pc = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float32)
    step = m.chunk_rows(CHUNK_BYTES)
    pc_dot_mean = float(pc @ mean_no_pc)
    mean32, mean_no_pc32 = mean.astype(np.float32), mean_no_pc.astype(np.float32)
    for start in range(0, n, step):
        _check(should_stop)
        progress("Comparing the output matrix with the unused tokens…", share[0] + share[1] * start / n)
        x = m.rows(start, start + step)
        stop = start + len(x)
        sq = np.einsum("ij,ij->i", x, x).astype(np.float64)
        # three matrix-vector products (each far faster than one product with a 3-column matrix)
        dot, dot_mean_no_pc, dot_pc = ((x @ v).astype(np.float64) for v in (mean32, mean_no_pc32, pc))
        # x without pc is x - (x·pc) pc: its dot with mean_no_pc is x·mean_no_pc - (x·pc)(pc·mean_no_pc)
        dot_no_pc = dot_mean_no_pc - dot_pc * pc_dot_mean
        sq_no_pc = np.maximum(sq - dot_pc ** 2, 0.0)
        norm[start:stop] = np.sqrt(sq)
        cos[start:stop] = dot / np.maximum(np.sqrt(sq) * norm_mean, CLIP)
        cos_no_pc[start:stop] = dot_no_pc / np.maximum(np.sqrt(sq_no_pc) * norm_mean_no_pc, CLIP)
    return norm, cos, cos_no_pc


def weight_evidence(weights: ModelWeights, *, tokenizer=None, reference: np.ndarray | None = None,
                    should_stop: Callable[[], bool] = lambda: False,
                    progress: Callable[[str, float], None] = lambda what, f: None) -> WeightEvidence:
    """Magikarp's indicators for every row of `weights` (see module doc). The reference set is
    `reference` if given, else found in `tokenizer` (`reference_ids`); a tokenizer whose vocabulary
    is larger than the matrices is not this model's (`WeightsError`)."""
    out, emb = weights.unembedding, weights.embedding
    n = out.n_rows
    if tokenizer is not None and tokenizer.n_vocab > n:
        raise WeightsError(f"{weights.source}: the model has {n:,} embedding rows but the tokenizer "
                           f"{tokenizer.n_vocab:,} tokens; these weights are not this tokenizer's model")
    if reference is not None:
        ref = np.unique(np.asarray(reference, np.int64))
        if ref.size and (ref.min() < 0 or ref.max() >= n):
            raise WeightsError(f"reference ids must be within the model's {n:,} rows")
        note = f"{ref.size:,} ids given"
    elif tokenizer is not None:
        ref, note = reference_ids(tokenizer, n)
    else:
        ref, note = np.zeros(0, np.int64), "none given"
    in_share = 0.0 if weights.tied else 0.45
    embedding_norm = None if weights.tied else _norms(emb, should_stop=should_stop, progress=progress,
                                                      what="Measuring the input embeddings…", share=(0.0, in_share))
    rest = (in_share, 1.0 - in_share)
    if ref.size:
        progress("Finding the output matrix's first principal component…", in_share)
        pc = first_component(out)
        _check(should_stop)
        norm, cos, cos_no_pc = _cosines(out, ref, pc, should_stop=should_stop, progress=progress, share=rest)
    else:
        norm = _norms(out, should_stop=should_stop, progress=progress, what="Measuring the output matrix…",
                      share=rest)
        cos = cos_no_pc = None
    progress("Done", 1.0)
    return WeightEvidence(weights.source, n, out.dim, out.info.dtype, weights.tied, norm, embedding_norm, cos,
                          cos_no_pc, ref, note)
