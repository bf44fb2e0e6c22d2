"""``tokviz encode --offsets hf|sentencepiece|tiktoken``: the reference library's offsets in the JSON."""

from __future__ import annotations

import json

from tests.conftest import shared_file


def test_hf_offsets_put_sep_at_zero_beside_tokviz_spans(cli):
    path = str(shared_file("vocab", "hf", "bert-base-uncased", "tokenizer.json"))
    code, out, err = cli("encode", path, "Hello world", "--offsets", "hf")
    data = json.loads(out)
    assert (code, err) == (0, "") and data["ids"] == [101, 7592, 2088, 102]
    assert data["spans"][-1] == [11, 11] and data["offsets"] == [[0, 0], [0, 5], [6, 11], [0, 0]]


def test_sentencepiece_offsets_of_byte_fallback_pieces(cli):
    path = str(shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.model"))
    code, out, _ = cli("encode", path, "hi 👋", "--json", "--offsets", "sentencepiece")
    data = json.loads(out)
    assert code == 0 and data["offsets"] == [[0, 2], [2, 3], [3, 3], [3, 3], [3, 3], [3, 4]]


def test_tiktoken_offsets_and_misuse(cli):
    path = str(shared_file("vocab", "tiktoken", "cl100k_base.tiktoken"))
    code, out, _ = cli("encode", path, "hello world", "--offsets", "tiktoken")
    assert code == 0 and json.loads(out)["offsets"] == [0, 5]
    code, out, err = cli("encode", path, "x", "--offsets", "hf")
    assert code == 2 and out == "" and err.count("\n") == 1 and "tokenizer.json" in err
    code, out, err = cli("encode", path, "x", "--offsets", "tiktoken", "--ids")
    assert code == 2 and "--offsets" in err


def test_hf_offsets_of_composed_characters_need_the_text(cli, tmp_path):
    d = json.loads(shared_file("vocab", "hf", "bert-base-uncased", "tokenizer.json").read_text(encoding="utf-8"))
    d["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFC"}, d["normalizer"]]}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    code, out, _ = cli("encode", str(path), "cafe\u0301 x", "--offsets", "hf")
    data = json.loads(out)
    assert code == 0 and data["ids"] == [101, 7668, 1060, 102]
    assert data["spans"][1] == [0, 5] and data["offsets"] == [[0, 0], [0, 4], [6, 7], [0, 0]]  # as tokenizers
