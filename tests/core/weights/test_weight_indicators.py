"""Magikarp's indicators from safetensors files built here with planted under-trained rows: the
indicator ranks the planted ids first in every dtype, tied or not, in one file or sharded; the
cosines are Magikarp's formulas; the reference set comes from the tokenizer."""

from __future__ import annotations

import numpy as np
import pytest

from tests.core.weights.planted import N_PLANTED, bf16_bytes, recall, write_model, write_raw, write_sharded
from tokviz.core.weights import WeightColumns, WeightsError, open_weights, parse_id_ranges, weight_evidence
from tokviz.core.weights.indicators import reference_ids


def _magikarp(mat: np.ndarray, unused: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Magikarp's cosine distances (plain and without the first principal component), as
    magikarp/utils.py computes them, with numpy's SVD standing in for sklearn's PCA."""
    mat = mat.astype(np.float64)

    def distance(m, v):
        return 1 - m @ v / np.clip(np.linalg.norm(m, axis=1) * np.linalg.norm(v), 1e-6, None)

    pc = np.linalg.svd(mat - mat.mean(axis=0), full_matrices=False)[2][0]
    without = mat - np.outer(mat @ pc, pc)
    return distance(mat, mat[unused].mean(axis=0)), distance(without, without[unused].mean(axis=0))


@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16"])
@pytest.mark.parametrize("tied", [True, False])
def test_the_indicator_ranks_the_planted_rows_first(tmp_path, dtype, tied):
    p = write_model(tmp_path / "model.safetensors", dtype=dtype, tied=tied)
    weights = open_weights(p.path)
    assert weights.tied is tied and weights.n_rows == 2000 and weights.unembedding.info.dtype == dtype
    ev = weight_evidence(weights, reference=p.reference)
    assert ev.indicator_name == ("unembedding cosine distance to the unused tokens" if tied else "embedding norm")
    ranked = np.argsort(ev.indicator, kind="stable").tolist()
    assert recall(ranked, p.planted, p.reference) >= 0.9
    # the unembedding's norm alone is fooled by the small decoy rows: the cosine is what finds them
    assert recall(np.argsort(ev.unembedding_norm).tolist(), p.planted, p.reference) < 0.5
    assert recall(np.argsort(-ev.cosine).tolist(), p.planted, p.reference) >= 0.9


def test_the_cosines_are_magikarps(tmp_path):
    p = write_model(tmp_path / "model.safetensors", tied=True)
    ev = weight_evidence(open_weights(p.path), reference=p.reference)
    plain, without_pc = _magikarp(p.embedding, p.reference)
    np.testing.assert_allclose(1 - ev.cosine, plain, atol=1e-5)
    np.testing.assert_allclose(1 - ev.cosine_no_pc, without_pc, atol=1e-3)
    np.testing.assert_allclose(ev.unembedding_norm, np.linalg.norm(p.embedding, axis=1), rtol=1e-5)


def test_bfloat16_rows_are_the_float32_rows_rounded(tmp_path):
    rows = np.array([[1.0, -2.5, 3.14159, 1e-3], [0.0, 65504.0, -1e-8, 7.0]], np.float32)
    write_raw(tmp_path / "b.safetensors", {"wte.weight": ("BF16", rows.shape, bf16_bytes(rows))})
    got = open_weights(tmp_path / "b.safetensors").embedding.rows(0, 2)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, rows, rtol=2 ** -8)
    assert got[0, 0] == 1.0 and got[0, 1] == -2.5


def test_a_sharded_model_is_read_through_its_index(tmp_path):
    p = write_sharded(tmp_path / "sharded")
    for where in (p.path, p.path / "model.safetensors.index.json"):
        weights = open_weights(where)
        assert not weights.tied
        assert weights.embedding.file.path.endswith("model-00001-of-00002.safetensors")
        assert weights.unembedding.file.path.endswith("model-00002-of-00002.safetensors")
        ev = weight_evidence(weights, reference=p.reference)
        assert recall(np.argsort(ev.indicator).tolist(), p.planted, p.reference) >= 0.9
        np.testing.assert_allclose(ev.embedding_norm, np.linalg.norm(p.embedding, axis=1), rtol=1e-5)


def test_other_names_and_an_output_matrix_saved_twice_are_tied(tmp_path):
    p = write_model(tmp_path / "gpt2.safetensors", tied=True, names=("transformer.wte.weight", ""))
    assert open_weights(p.path).tied
    from safetensors.numpy import save_file

    m = np.random.default_rng(1).standard_normal((50, 8)).astype(np.float32)
    save_file({"tok_embeddings.weight": m, "output.weight": m.copy()}, str(tmp_path / "twice.safetensors"))
    assert open_weights(tmp_path / "twice.safetensors").tied


def test_without_a_reference_set_a_tied_model_falls_back_to_the_norm(tmp_path):
    p = write_model(tmp_path / "model.safetensors", tied=True)
    ev = weight_evidence(open_weights(p.path))
    assert ev.cosine is None and ev.indicator_name == "unembedding norm" and "none given" in ev.note()
    np.testing.assert_array_equal(ev.indicator, ev.unembedding_norm)


def test_the_reference_set_comes_from_the_tokenizer():
    from tests.conftest import shared_file
    from tokviz.core.loading import load_tokenizer

    tok = load_tokenizer(str(shared_file("vocab", "gpt2-data-gym", "vocab.bpe")))
    ids, note = reference_ids(tok, 50304)  # GPT-2's matrices padded to a multiple of 64
    # Magikarp's GPT-2 list (177-187: the bytes 0xF5-0xFF) and the rows past the vocabulary
    assert set(range(177, 188)) <= set(ids.tolist()) and set(range(50257, 50304)) <= set(ids.tolist())
    assert "47 rows past the vocabulary" in note and "13 tokens of bytes UTF-8 never uses" in note


def test_a_tokenizer_larger_than_the_matrices_is_not_this_model(tmp_path):
    from tests.conftest import shared_file
    from tokviz.core.loading import load_tokenizer

    p = write_model(tmp_path / "model.safetensors", tied=True)
    tok = load_tokenizer(str(shared_file("vocab", "gpt2-data-gym", "vocab.bpe")))
    with pytest.raises(WeightsError, match="2,000 embedding rows but the tokenizer 50,257 tokens"):
        weight_evidence(open_weights(p.path), tokenizer=tok)


def test_id_ranges():
    assert parse_id_ranges("1990-1999", 2000).tolist() == list(range(1990, 2000))
    for bad in ("5-3", "1-2000", "x"):
        with pytest.raises(WeightsError):
            parse_id_ranges(bad, 2000)


def test_columns_rank_by_both_pieces_of_evidence(tmp_path):
    p = write_model(tmp_path / "model.safetensors", tied=True)
    ev = weight_evidence(open_weights(p.path), reference=p.reference)
    ids = np.arange(256, 1990)
    scores = np.zeros(len(ids))  # a vocabulary score that says nothing: the weights decide
    cols = WeightColumns.of(ev, ids, scores)
    assert recall(ids[cols.order()].tolist(), p.planted, p.reference) >= 0.9
    assert not cols.reference.any()
    row = cols.row(int(np.flatnonzero(ids == p.planted[0])[0]))
    assert row["weight_rank"] <= N_PLANTED and row["cos_unused"] > 0.5 and row["embedding_norm"] is None
