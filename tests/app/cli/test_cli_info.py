"""``tokviz info MODEL``: the tokenizer's summary and its pre-tokenizer fingerprint (family, check
hash, the split its vocabulary was made with, warnings), as lines or one JSON object; and
``encode`` on a GGUF llama vocabulary adds the BOS the file declares."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_file


def test_info_names_the_family(cli):
    code, out, err = cli("info", str(shared_file("vocab", "tiktoken", "o200k_base.tiktoken")))
    assert code == 0 and err == ""
    assert "Pre-tokenizer: o200k (GPT-4o, Llama 4)" in out and "Warning" not in out


def test_info_json_warns_on_a_gguf_declaring_the_wrong_pre_tokenizer(cli, tmp_path):
    pytest.importorskip("gguf")
    from tests.core.formats import gguf_files

    path = gguf_files.byte_level_gguf(shared_file("vocab", "hf", "deepseek-v3"), tmp_path / "ds.gguf", "default")
    code, out, _ = cli("info", "--json", str(path))
    data = json.loads(out)
    assert code == 0 and data["declared_pre"] == "default" and data["family"] == "llama.cpp default"
    assert data["vocab_origin"]["origin"] == ["DeepSeek V3"] and data["vocab_origin"]["own_share"] < 0.99
    assert any("'default' does not fit the vocabulary" in w for w in data["warnings"])
    code, out, _ = cli("info", str(path))
    assert "Warning: the declared pre-tokenizer 'default' does not fit" in out


def test_info_on_a_missing_model_is_one_line_and_status_2(cli, tmp_path):
    code, out, err = cli("info", str(tmp_path / "nothing.json"))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


def test_encode_ids_of_a_llama_gguf_start_with_its_bos(cli, tmp_path):
    pytest.importorskip("gguf")
    from tests.core.formats import gguf_files

    folder = shared_file("vocab", "hf", "mistral-7b-v0.1")
    path = gguf_files.sentencepiece_gguf(folder / "tokenizer.model", tmp_path / "m.gguf", hf_folder=folder)
    assert cli("encode", "--ids", str(path), "Hello world!")[1].split() == ["1", "22557", "1526", "28808"]
    assert cli("encode", "--ids", str(folder / "tokenizer.model"), "Hello world!")[1].split() == ["22557", "1526", "28808"]
