"""``tokviz encode MODEL TEXT --dropout P --seed S``: a sampled segmentation of any BPE, the same
for the same seed, decoding back to the text; a rate outside 0..1 or a model that joins no pairs
is refused with one line and status 2."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_file
from tokviz.core.loading import load_tokenizer

TEXT = "unbelievable tokenization, internationalization"


@pytest.fixture
def trained_model(tmp_path, cli):
    (tmp_path / "a.txt").write_text(TEXT * 20, encoding="utf-8")
    code, _, _ = cli("train", "a.txt", "-o", "m.json", "--merges", "60", "--quiet")
    assert code == 0
    return str(tmp_path / "m.json")


@pytest.fixture
def minbpe_model(tmp_path):
    path = tmp_path / "toy.model"  # minbpe's known model: "aaabdaaabac" -> [258, 100, 258, 97, 99]
    path.write_text("minbpe v1\n\n0\n97 97\n256 97\n257 98\n", encoding="utf-8")
    return str(path)


def _models(request) -> list[str]:
    return [request.getfixturevalue("trained_model"),
            str(shared_file("vocab", "tiktoken", "cl100k_base.tiktoken")),
            str(shared_file("vocab", "hf", "gpt2", "tokenizer.json")),
            str(shared_file("vocab", "gpt2-data-gym", "encoder.json"))]


def test_every_bpe_samples_the_same_for_a_seed_and_decodes_back(cli, request):
    for model in _models(request):
        tok = load_tokenizer(model)
        code, out, err = cli("encode", model, TEXT, "--dropout", "0.5", "--seed", "4", "--json")
        assert (code, err) == (0, ""), model
        ids = json.loads(out)["ids"]
        assert tok.decode(ids) == TEXT
        assert ids == tok.encode_dropout(TEXT, dropout=0.5, seed=4).ids
        assert cli("encode", model, TEXT, "--dropout", "0.5", "--seed", "4", "--json")[1] == out
        samples = {cli("encode", model, TEXT, "--dropout", "0.5", "--seed", str(s), "--ids")[1] for s in range(3)}
        assert len(samples) > 1, model  # other seeds, other segmentations


def test_dropout_zero_and_one_on_minbpe(cli, minbpe_model):
    assert cli("encode", minbpe_model, "aaabdaaabac", "--dropout", "0", "--ids") == (0, "258 100 258 97 99\n", "")
    assert cli("encode", minbpe_model, "aaabdaaabac", "--dropout", "1", "--ids") == (
        0, " ".join(str(b) for b in b"aaabdaaabac") + "\n", "")
    code, out, _ = cli("encode", minbpe_model, "aaab", "--dropout", "1", "--tokens")
    assert (code, out) == (0, "a a a b\n")


@pytest.mark.parametrize("p", ["-0.1", "1.5", "nan", "inf"])
def test_a_rate_outside_zero_to_one_is_refused(cli, minbpe_model, p):
    code, out, err = cli("encode", minbpe_model, "aaab", f"--dropout={p}")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "outside 0..1" in err


def test_models_that_join_no_pairs_are_refused(cli, tmp_path):
    bert = str(shared_file("vocab", "hf", "bert-base-uncased", "tokenizer.json"))
    (tmp_path / "w.txt").write_text(TEXT * 5, encoding="utf-8")
    assert cli("train", "w.txt", "-o", "wp.json", "--algorithm", "wordpiece", "--merges", "20", "--quiet")[0] == 0
    for model in (bert, str(tmp_path / "wp.json")):
        code, out, err = cli("encode", model, "hello", "--dropout", "0.1")
        assert (code, out) == (2, "") and err.count("\n") == 1 and "needs a BPE model" in err


def test_seed_without_dropout_and_offsets_with_it_are_refused(cli, minbpe_model):
    code, _, err = cli("encode", minbpe_model, "aaab", "--seed", "3")
    assert code == 2 and "--seed goes with --dropout" in err
    gpt2 = str(shared_file("vocab", "hf", "gpt2", "tokenizer.json"))
    code, _, err = cli("encode", gpt2, "hi", "--dropout", "0.1", "--offsets", "hf")
    assert code == 2 and err.count("\n") == 1 and "--offsets" in err


def test_a_sentencepiece_bpe_model_samples_by_its_own_rule(cli, tmp_path):
    from tests.core.formats.sentencepiece.spm_helpers import trained_model

    model = str(trained_model("bpe-bytes", tmp_path))
    tok = load_tokenizer(model)
    code, out, err = cli("encode", model, TEXT, "--dropout", "0.4", "--seed", "2", "--json")
    assert (code, err) == (0, "")
    ids = json.loads(out)["ids"]
    assert tok.decode(ids) == TEXT and ids == tok.encode_dropout(TEXT, dropout=0.4, seed=2).ids
    assert ids != tok.encode_ordinary(TEXT).ids
    assert cli("encode", model, TEXT, "--dropout", "0", "--ids")[1] == cli("encode", model, TEXT, "--ids")[1]
