"""A 10 GB safetensors file is read within bounded memory: only the embedding's rows are read, a
slice at a time, however large the tensors beside it (the full 10 GB pass is in
tests/bench/bench_weights_sparse.py)."""

from __future__ import annotations

import tracemalloc

import numpy as np

from tests.core.weights.planted import matrices, recall
from tests.core.weights.sparse import GIB10, write_sparse
from tokviz.core.weights import neighbour_map, open_weights, weight_evidence


def test_a_10_gb_file_is_read_within_bounded_memory(tmp_path):
    emb, _, planted, reference = matrices()
    path = tmp_path / "model.safetensors"
    size = write_sparse(path, hole=("model.layers.0.mlp.up_proj.weight", "BF16", (163_840, 32_768)),
                        after={"model.embed_tokens.weight": emb})
    assert size > GIB10
    tracemalloc.start()
    try:
        weights = open_weights(path)
        ev = weight_evidence(weights, reference=reference)
        near = neighbour_map(weights, int(planted[0]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert recall(np.argsort(ev.indicator).tolist(), planted, reference) >= 0.9
    assert peak < 64 << 20, f"{peak:,} bytes"  # (the file is 10.7 GB)
    assert len(set(near.ids[1:].tolist()) & set(np.r_[planted, reference].tolist())) >= 12


def test_an_all_zero_matrix_gives_zero_cosines_not_nan(tmp_path):
    path = tmp_path / "zeros.safetensors"
    write_sparse(path, hole=("transformer.wte.weight", "BF16", (4096, 256)))
    ev = weight_evidence(open_weights(path), reference=np.arange(4086, 4096))
    assert np.isfinite(ev.indicator).all() and (ev.cosine == 0).all() and (ev.unembedding_norm == 0).all()
