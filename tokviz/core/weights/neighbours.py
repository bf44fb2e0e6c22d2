"""A token's nearest neighbours in a model's output matrix, as a small matrix to draw.

`neighbour_map` finds the `k` rows of the unembedding closest in cosine to a token's row (one pass
over the matrix a slice at a time) and returns the neighbours-by-neighbours cosine matrix, the token
first: under-trained tokens sit in a tight cluster of one another, a well-trained one among tokens
of related meaning or form.

What this leaves out: drawing (the panels).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tokviz.core.errors import Cancelled

from .indicators import CHUNK_BYTES, CLIP
from .safetensors import WeightsError
from .tensors import ModelWeights, open_weights

K = 16


@dataclass(frozen=True)
class NeighbourMap:
    """`ids` (the token first, then its neighbours, closest first), their cosine to the token
    (`to_token`) and to each other (`matrix`, ``(k + 1, k + 1)``)."""

    token_id: int
    ids: np.ndarray
    to_token: np.ndarray
    matrix: np.ndarray


def neighbour_map(weights: ModelWeights | str, token_id: int, k: int = K, *,
                  should_stop: Callable[[], bool] = lambda: False) -> NeighbourMap:
    """The `k` nearest neighbours of `token_id` by cosine on the unembedding (see module doc);
    `weights` may be a path (`open_weights`)."""
    w = open_weights(weights) if isinstance(weights, str) else weights
    m = w.unembedding
    if not 0 <= token_id < m.n_rows:
        raise WeightsError(f"token {token_id} is not within the model's {m.n_rows:,} rows")
    target = m.pick([token_id])[0].astype(np.float64)
    target /= max(np.linalg.norm(target), CLIP)
    cos = np.empty(m.n_rows, np.float32)
    step = m.chunk_rows(CHUNK_BYTES)
    for start in range(0, m.n_rows, step):
        if should_stop():
            raise Cancelled()
        x = m.rows(start, start + step)
        norms = np.maximum(np.sqrt(np.einsum("ij,ij->i", x, x, dtype=np.float64)), CLIP)
        cos[start:start + len(x)] = (x @ target.astype(np.float32)) / norms
    cos[token_id] = -np.inf
    k = min(k, m.n_rows - 1)
    best = np.argpartition(-cos, k - 1)[:k] if k else np.zeros(0, np.int64)
    best = best[np.lexsort((best, -cos[best]))]
    ids = np.r_[token_id, best].astype(np.int64)
    rows = m.pick(ids).astype(np.float64)
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), CLIP)
    matrix = (rows @ rows.T).astype(np.float32)
    return NeighbourMap(token_id, ids, matrix[0].copy(), matrix)
