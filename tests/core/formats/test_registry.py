"""The format registry: every file format is recognised by content and read into a description
(never a tokenizer); anything else is one clear error naming the formats tokviz knows."""

from __future__ import annotations

import base64
import json

import pytest

from tests.conftest import shared_file
from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.descriptions import MergeList, PipelineJson, RankedVocab, SentencePieceModel, TokvizModel
from tokviz.core.formats.registry import FORMATS, format_of, read_model_file
from tokviz.core.formats.tiktoken import PatternRequired, tiktoken_sidecar
from tokviz.core.text.split import SPLIT_PRESETS

MINBPE = "minbpe v1\n\n1\n<|end|> 259\n97 97\n256 97\n257 98\n"


def _tiktoken_bytes(tokens: list[bytes]) -> bytes:
    return b"".join(base64.b64encode(t) + b" %d\n" % r for r, t in enumerate(tokens))


def test_a_minbpe_file_is_a_merge_list(tmp_path):
    path = tmp_path / "basic.model"
    path.write_text(MINBPE, encoding="utf-8")
    got = read_model_file(path)
    assert got == MergeList(((97, 97), (256, 97), (257, 98)), "", {"<|end|>": 259}, "basic", str(path))


def test_a_tiktoken_file_needs_its_pattern_then_is_a_ranked_vocab(tmp_path):
    path = tmp_path / "mine.tiktoken"
    path.write_bytes(_tiktoken_bytes([bytes([b]) for b in range(256)] + [b"ab"]))
    with pytest.raises(PatternRequired, match=tiktoken_sidecar(path).name):
        read_model_file(path)
    got = read_model_file(path, pattern="gpt2")
    assert isinstance(got, RankedVocab) and got.ranks[b"ab"] == 256 and got.name == "mine"
    assert got.pattern == SPLIT_PRESETS["gpt2"]  # the preset's regex, not its name
    tiktoken_sidecar(path).write_text(json.dumps({"format": "tokviz-tiktoken-info", "pattern": r"\w+|\W",
                                                  "special_tokens": {"<|x|>": 300}, "name": "side"}))
    side = read_model_file(path)
    assert (side.pattern, dict(side.special_tokens), side.name) == (r"\w+|\W", {"<|x|>": 300}, "side")


def test_openai_files_are_known_by_their_sha256():
    got = read_model_file(shared_file("vocab", "tiktoken", "r50k_base.tiktoken"))
    assert isinstance(got, RankedVocab) and got.name == "r50k_base" and dict(got.special_tokens) == {"<|endoftext|>": 50256}


def test_gpt2_data_gym_files_give_the_same_ranked_vocab_as_r50k():
    bpe = shared_file("vocab", "gpt2-data-gym", "vocab.bpe")
    from_bpe = read_model_file(bpe)
    from_encoder = read_model_file(bpe.parent / "encoder.json")
    r50k = read_model_file(shared_file("vocab", "tiktoken", "r50k_base.tiktoken"))
    assert isinstance(from_bpe, RankedVocab) and from_bpe.ranks == from_encoder.ranks == r50k.ranks
    assert from_bpe.pattern == r50k.pattern


def test_json_files_are_told_apart_by_what_they_hold(tmp_path):
    hf = tmp_path / "tokenizer.json"
    hf.write_text(json.dumps({"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}))
    assert isinstance(read_model_file(hf), PipelineJson)
    ours = tmp_path / "model.json"  # the header past the first 4 KB still counts
    ours.write_text(json.dumps({"padding": "x" * 5000, "format": "tokviz-wordpiece", "version": 1}))
    got = read_model_file(ours)
    assert isinstance(got, TokvizModel) and got.data["format"] == "tokviz-wordpiece"
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": "world"}))
    with pytest.raises(ModelFormatError, match="JSON, but not a tokviz model"):
        read_model_file(other)


def test_a_sentencepiece_model_is_read_without_building_a_tokenizer(tmp_path):
    pytest.importorskip("sentencepiece")
    path = shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.model")
    got = read_model_file(path)
    assert isinstance(got, SentencePieceModel) and len(got.proto.pieces) == 32000


@pytest.mark.parametrize("data", [b"", b"\x00\x01binary", b"just some text\n", b"\xff\xfe"])
def test_anything_else_is_one_error_naming_every_format(tmp_path, data):
    path = tmp_path / "x.bin"
    path.write_bytes(data)
    with pytest.raises(ModelFormatError) as err:
        read_model_file(path)
    message = str(err.value)
    assert "\n" not in message and all(f.files in message for f in FORMATS)


def test_every_format_is_recognised_by_its_first_bytes():
    heads = {"gguf": b"GGUF\x03\x00\x00\x00", "minbpe": b"minbpe v1\n", "data-gym": b"#version: 0.2\nh e\n", "json": b'  {"model": {}}',
             "tiktoken": _tiktoken_bytes([b"a", b"b"]), "sentencepiece": b"\x0a\x05\x0a\x01a"}
    assert {name: format_of(head).name for name, head in heads.items()} == {n: n for n in heads}
    assert [f.name for f in FORMATS] == list(heads)
