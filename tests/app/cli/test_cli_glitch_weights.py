"""``tokviz glitch MODEL --weights PATH``: Magikarp's indicators from the model's safetensors as JSON
keys and table columns, the ranking by both pieces of evidence, the known-unused reference found
from the tokenizer (rows past its vocabulary) or given; bad weights are one line and status 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.core.weights.planted import recall, write_model

MERGES = 300


@pytest.fixture
def model(cli, tmp_path, corpus_text):
    """(tokenizer path, planted weights): a BPE of 556 tokens and a model with 10 rows past them."""
    (tmp_path / "c.txt").write_text(corpus_text("tinyshakespeare.txt", 200_000), encoding="utf-8")
    code, _, err = cli("train", "c.txt", "-o", "tok.json", "--split", "gpt2", "--merges", str(MERGES), "--quiet")
    assert code == 0, err
    planted = write_model(tmp_path / "model.safetensors", tied=True, vocab=256 + MERGES + 10)
    return str(tmp_path / "tok.json"), planted


def test_json_rows_carry_the_weights_and_rank_by_both(cli, model):
    tok, p = model
    code, out, err = cli("glitch", tok, "--weights", str(p.path), "--top", "0", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    w = data["weights"]
    assert w["tied"] and w["rows"] == 566 and w["dim"] == 64 and w["dtype"] == "F32"
    assert w["reference_ids"] == p.reference.tolist() and "10 rows past the vocabulary" in w["reference"]
    assert w["indicator"] == "unembedding cosine distance to the unused tokens"
    rows = data["rows"]
    assert len(rows) == data["n_tokens"] == 556
    for key in ("weight_indicator", "cos_unused", "cos_unused_no_pc", "unembedding_norm", "embedding_norm",
                "weight_rank", "combined", "reference"):
        assert key in rows[0]
    assert rows[0]["embedding_norm"] is None  # tied: one matrix
    combined = [r["combined"] for r in rows]
    assert combined == sorted(combined)
    # the geometric mean of the rank by score (highest first, ties averaged) and the rank by the weights
    scores = np.array([r["score"] for r in rows])
    by_score = np.array([(scores > s).sum() + ((scores == s).sum() + 1) / 2 for s in scores])
    np.testing.assert_allclose(combined, np.sqrt(by_score * [r["weight_rank"] for r in rows]), atol=1e-3)
    by_weights = sorted(rows, key=lambda r: r["weight_rank"])
    assert recall([r["id"] for r in by_weights], p.planted, p.reference) >= 0.9


def test_without_weights_the_rows_have_no_weight_keys(cli, model):
    tok, _ = model
    code, out, _ = cli("glitch", tok, "--top", "3", "--json")
    assert code == 0 and "weights" not in json.loads(out) and "combined" not in json.loads(out)["rows"][0]


def test_the_table_shows_the_weight_columns(cli, model):
    tok, p = model
    code, out, _ = cli("glitch", tok, "--weights", str(p.path), "--top", "5")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("Weights: 566 × 64 F32, tied embeddings; ranked by the unembedding cosine distance")
    assert lines[2].split()[:9] == ["rank", "id", "score", "count", "indic.", "cos", "|out|", "|in|", "comb."]
    assert len(lines) == 3 + 5


def test_unused_ids_replace_the_tokenizers_reference(cli, model):
    tok, p = model
    code, out, _ = cli("glitch", tok, "--weights", str(p.path), "--unused-ids", "556-560", "--json", "--top", "1")
    assert code == 0
    assert json.loads(out)["weights"]["reference_ids"] == [556, 557, 558, 559, 560]


def test_the_report_says_it_ranks_with_weights(cli, model):
    tok, p = model
    code, out, _ = cli("glitch", tok, "--weights", str(p.path), "--report", "--top", "5")
    assert code == 0
    assert "- Model weights: 566 × 64 F32" in out and "## Candidates (top 5 by score and weights)" in out


@pytest.mark.parametrize(("make", "words"), [
    (lambda d: d / "missing.safetensors", "no such file or folder"),
    (lambda d: (d / "pytorch_model.bin").write_bytes(b"\x80") and d / "pytorch_model.bin", "Python pickle"),
    (lambda d: (d / "bad.safetensors").write_bytes(b"\xff" * 16) and d / "bad.safetensors", "more than a safetensors"),
    (lambda d: write_model(d / "small.safetensors", vocab=100, n_planted=5, low=10).path,
     "100 embedding rows but the tokenizer 556 tokens"),
])
def test_bad_weights_are_one_line_and_status_2(cli, model, tmp_path, make, words):
    tok, _ = model
    code, out, err = cli("glitch", tok, "--weights", str(make(tmp_path)))
    assert code == 2 and out == "" and words in err and len(err.strip().splitlines()) == 1


def test_unused_ids_without_weights_is_refused(cli, model):
    tok, _ = model
    code, _, err = cli("glitch", tok, "--unused-ids", "1-2")
    assert code == 2 and "--unused-ids needs --weights" in err


