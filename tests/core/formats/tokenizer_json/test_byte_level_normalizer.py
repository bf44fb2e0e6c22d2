"""The ``ByteLevel`` normalizer (each byte as GPT-2's byte-level character, before any split):
GPT-2's vocabulary behind it, alone, after NFC with a split at ``Ġ``, and before a ByteLevel
pre-tokenizer that does not split, against tokenizers: ids, offsets, decoding."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from tests.core.formats.test_reference_offsets import EXTRA
from tests.real_tokenizers import corpus, hf_path, unicode_text
from tokviz.core.formats.offsets import reference_offsets
from tokviz.core.formats.tokenizer_json.normalizers import NormStr
from tokviz.core.formats.tokenizer_json.pretokenizers import ByteLevelNormalizer
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

tk = pytest.importorskip("tokenizers")

BYTE_LEVEL = {"type": "ByteLevel"}
CONFIGS = {
    "alone": {"normalizer": BYTE_LEVEL, "pre_tokenizer": None},
    "nfc+split": {"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, BYTE_LEVEL]},
                  "pre_tokenizer": {"type": "Split", "pattern": {"String": "\u0120"}, "behavior": "MergedWithNext",
                                    "invert": False}},
    "then-pre": {"normalizer": BYTE_LEVEL,
                 "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                                   "use_regex": False}},
}
_BUILT: dict = {}


def _built(name: str):
    if name not in _BUILT:
        d = {**json.loads(hf_path("gpt2").read_text(encoding="utf-8")), **CONFIGS[name]}
        _BUILT[name] = (tk.Tokenizer.from_str(json.dumps(d)), HfTokenizer.from_json(d))
    return _BUILT[name]


def _check(name: str, text: str) -> None:
    ref, ours = _built(name)
    r, enc = ref.encode(text), ours.encode(text)
    assert ours.encode_ids(text, add_special_tokens=True) == r.ids, text
    assert enc.ids == r.ids, text
    assert [tuple(s) for s in reference_offsets(ours, enc, "hf", text=text)] == r.offsets, text
    assert ours.decode(enc.ids) == ref.decode(r.ids, skip_special_tokens=False)


def test_the_normalizer_maps_bytes_and_keeps_each_characters_span():
    out = ByteLevelNormalizer()(NormStr.of("a \u00e9"))
    assert out.text == "a\u0120\u00c3\u00a9" == tk.normalizers.ByteLevel().normalize_str("a \u00e9")
    assert out.spans == [(0, 1), (1, 2), (2, 3), (2, 3)]


@pytest.mark.parametrize("name", CONFIGS)
def test_byte_level_normalizer_equals_tokenizers(name):
    _, ours = _built(name)
    assert ours.byte_level  # its tokens are bytes
    lines = [ln for ln in corpus("udhr2_all.txt", None).splitlines()[::300] if ln.strip()]
    for text in [*EXTRA, "", "Hello world", *lines]:
        _check(name, text)


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=60, deadline=None)
@given(text=unicode_text())
def test_generated_text_equals_tokenizers(name, text):
    _check(name, text)
