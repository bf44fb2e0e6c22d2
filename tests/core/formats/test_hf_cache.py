"""Tokenizers already on the machine: ``hf:ORG/NAME`` from a Hugging Face cache (a fake one built
in tmp_path, laid out as huggingface_hub lays it out), and the list File > Known Tokenizers shows."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.real_tokenizers import hf_path, shared_file, tiktoken_path
from tests.real_tokenizers import hf_snapshot as _snapshot
from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.hf_cache import cached_tokenizers, hf_hub_cache, resolve_hf
from tokviz.core.loading import load_tokenizer

MAIN = "a" * 40
OLD = "b" * 40


@pytest.fixture
def hf_cache(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    return cache


def test_where_the_cache_is(tmp_path, monkeypatch):
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hf_hub_cache() == tmp_path / ".cache" / "huggingface" / "hub"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hfhome"))
    assert hf_hub_cache() == tmp_path / "hfhome" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "direct"))
    assert hf_hub_cache() == tmp_path / "direct"


def test_hf_names_open_the_main_revision(hf_cache):
    _snapshot(hf_cache, "openai-community/gpt2", OLD, {"tokenizer.json": hf_path("bert-base-uncased")}, main=False)
    _snapshot(hf_cache, "openai-community/gpt2", MAIN, {"tokenizer.json": hf_path("gpt2")})
    path = resolve_hf("hf:openai-community/gpt2")
    assert path.parent.name == MAIN
    tok = load_tokenizer("hf:openai-community/gpt2")
    assert tok.name == "openai-community/gpt2"
    assert tok.encode_ids(" SolidGoldMagikarp") == [43453]
    assert load_tokenizer(f"hf:openai-community/gpt2@{OLD}").encode("Hello world").ids == [101, 7592, 2088, 102]


def test_sentencepiece_only_snapshots_and_revisions_without_refs(hf_cache):
    _snapshot(hf_cache, "mistralai/Mistral-7B-v0.1", MAIN,
              {"tokenizer.model": shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.model")}, main=False)
    tok = load_tokenizer("hf:mistralai/Mistral-7B-v0.1")
    assert tok.encode_ids("Hello world!") == [22557, 1526, 28808]


def test_a_name_not_in_the_cache_says_where_tokviz_looked(hf_cache):
    with pytest.raises(ModelFormatError) as err:
        load_tokenizer("hf:google/t5-small")
    message = str(err.value)
    assert str(hf_cache / "models--google--t5-small") in message and "never downloads" in message
    assert "\n" not in message
    _snapshot(hf_cache, "google/t5-small", MAIN, {"config.json": hf_path("gpt2")})
    with pytest.raises(ModelFormatError, match="hold no tokenizer.json"):
        load_tokenizer("hf:google/t5-small")
    with pytest.raises(ModelFormatError, match="not a Hugging Face model name"):
        load_tokenizer("hf:../../etc")


def test_a_missing_blob_is_skipped_for_an_older_revision(hf_cache):
    snap = _snapshot(hf_cache, "org/model", MAIN, {"tokenizer.json": hf_path("gpt2")})
    os.remove(os.path.realpath(snap / "tokenizer.json"))  # an interrupted download
    _snapshot(hf_cache, "org/model", OLD, {"tokenizer.json": hf_path("bert-base-uncased")}, main=False)
    assert resolve_hf("org/model").parent.name == OLD


def test_known_tokenizers_list_both_caches(hf_cache, tmp_cache):
    _snapshot(hf_cache, "openai-community/gpt2", MAIN, {"tokenizer.json": hf_path("gpt2")})
    _snapshot(hf_cache, "google-bert/bert-base-uncased", MAIN, {"tokenizer.json": hf_path("bert-base-uncased")})
    _snapshot(hf_cache, "mistralai/Mistral-7B-v0.1", MAIN,
              {"tokenizer.model": shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.model")})
    (hf_cache / "models--empty--repo").mkdir()
    from tokviz.core.formats.openai_encodings import KNOWN_ENCODINGS, cache_path

    shutil.copyfile(tiktoken_path("cl100k_base"), cache_path(KNOWN_ENCODINGS["cl100k_base"].url))
    found = {c.source: c for c in cached_tokenizers()}
    assert set(found) == {"hf:openai-community/gpt2", "hf:google-bert/bert-base-uncased",
                          "hf:mistralai/Mistral-7B-v0.1", "cl100k_base"}
    assert found["hf:openai-community/gpt2"].kind == "tokenizer.json BPE"
    assert found["hf:google-bert/bert-base-uncased"].kind == "tokenizer.json WordPiece"
    assert found["hf:mistralai/Mistral-7B-v0.1"].kind == "SentencePiece bpe"
    assert found["cl100k_base"].kind == "tiktoken"
    assert found["cl100k_base"].size == tiktoken_path("cl100k_base").stat().st_size
    assert found["hf:openai-community/gpt2"].size == hf_path("gpt2").stat().st_size


def test_cli_opens_hf_names(hf_cache, cli):
    _snapshot(hf_cache, "openai-community/gpt2", MAIN, {"tokenizer.json": hf_path("gpt2")})
    code, out, err = cli("encode", "--ids", "hf:openai-community/gpt2", " SolidGoldMagikarp")
    assert (code, out.strip(), err) == (0, "43453", "")
    code, out, err = cli("encode", "--ids", "hf:nobody/nothing", "x")
    assert code == 2 and out == "" and err.count("\n") == 1 and "models--nobody--nothing" in err
