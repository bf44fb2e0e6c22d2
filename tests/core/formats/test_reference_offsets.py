"""Offsets as the reference libraries report them (`tokviz.core.formats.offsets`): equal to
`tokenizers`' ``Encoding.offsets`` (the shared tokenizer.json files, and GPT-2 with a ByteLevel or
Roberta post-processor that trims offsets), `sentencepiece`'s ``encode_as_offset_mapping`` (byte
fallback, NFKC) and tiktoken's ``decode_with_offsets``, on corpus lines with emoji, CJK and
combining marks (ids equal first)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_file
from tests.real_tokenizers import TIKTOKEN_NAMES, corpus, hf_path, load_ours, load_reference
from tokviz.core.errors import TokvizError
from tokviz.core.formats.offsets import reference_offsets

EXTRA = ["hello 👋 world 🌍 日本語テキスト ﷽", "Å ﬁ ① ｱ ㎏ Ⅻ ﬃx", "  lead and trail  ", "a\n\n b \t c",
         "\U0010ffff z", "Größe 東京タワー, 안녕하세요!"]


def _lines() -> list[str]:
    udhr = [ln for ln in corpus("udhr2_all.txt", None).splitlines()[::150] if ln.strip()]
    return EXTRA + udhr + [ln for ln in corpus("tinyshakespeare.txt", 20_000).splitlines() if ln.strip()][::12]


def _gpt2_with(post_processor: dict, *, prefix: bool) -> dict:
    d = json.loads(hf_path("gpt2").read_text(encoding="utf-8"))
    d["post_processor"] = post_processor
    d["pre_tokenizer"]["add_prefix_space"] = prefix
    return d


SHARED_FILES = ("gpt2", "bert-base-uncased", "mistral-7b-v0.1", "deepseek-v3")
TRIMMING = {"ByteLevel": {"type": "ByteLevel", "trim_offsets": True, "use_regex": True},
            "Roberta": {"type": "RobertaProcessing", "sep": ["</s>", 50256], "cls": ["<s>", 50256], "trim_offsets": True}}
LABELS = [*SHARED_FILES, *(f"{kind} trim prefix={p}" for kind in TRIMMING for p in (True, False))]


def _hf_model(label: str) -> dict:
    if label in SHARED_FILES:
        return json.loads(hf_path(label).read_text(encoding="utf-8"))
    kind, _, prefix = label.partition(" trim prefix=")
    return _gpt2_with({**TRIMMING[kind], "add_prefix_space": prefix == "True"}, prefix=prefix == "True")


@pytest.mark.parametrize("label", LABELS)
def test_hf_offsets_equal_tokenizers(label):
    tokenizers = pytest.importorskip("tokenizers")
    from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

    d = _hf_model(label)
    ref, ours = tokenizers.Tokenizer.from_str(json.dumps(d)), HfTokenizer.from_json(d)
    for line in _lines():
        r, enc = ref.encode(line), ours.encode(line, allowed_special="all")
        assert enc.ids == r.ids, line
        assert [tuple(s) for s in reference_offsets(ours, enc, "hf")] == r.offsets, line


def test_sentencepiece_offsets_equal_offset_mapping():
    spm = pytest.importorskip("sentencepiece")
    from tokviz.core.loading import load_tokenizer

    path = shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.model")
    ref, ours = spm.SentencePieceProcessor(model_file=str(path)), load_tokenizer(path)
    byte_pieces = 0
    for line in _lines():
        r, enc = ref.encode_as_offset_mapping(line), ours.encode(line)
        assert enc.ids == r["ids"], line
        assert [tuple(s) for s in reference_offsets(ours, enc, "sentencepiece")] == list(r["offsets"]), line
        byte_pieces += sum(p.startswith("<0x") for p in r["pieces"])
    assert byte_pieces > 100  # the lines do reach byte fallback


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
def test_tiktoken_offsets_equal_decode_with_offsets(name):
    ref, ours = load_reference(name), load_ours(name)
    for line in _lines():
        enc = ours.encode(line)
        assert reference_offsets(ours, enc, "tiktoken") == ref.decode_with_offsets(ref.encode_ordinary(line))[1]


def test_a_convention_of_another_format_is_a_clear_error():
    with pytest.raises(TokvizError, match="--offsets sentencepiece needs a SentencePiece"):
        reference_offsets(load_ours("gpt2"), load_ours("gpt2").encode("x"), "sentencepiece")
