"""Unknown and byte-fallback rates on the shared tokenizer.json files (BERT's [UNK], Mistral's
<0xNN> byte tokens), counted against the vocabulary's own written forms."""

from __future__ import annotations

import re

import pytest

from tests.real_tokenizers import hf_path
from tokviz.core.compare import ModelSpec, compare
from tokviz.core.loading import open_timeline

TEXT = "Hello world 𓀀\nnaïve 👋🏽 façade\n"


def measure(name: str):
    tl = open_timeline(hf_path(name))
    result = compare(TEXT, [ModelSpec(name, lambda: tl)]).results[0]
    assert result.error is None
    return tl.tokenizer(), result.metrics


def test_mistral_counts_its_byte_tokens():
    tok, m = measure("mistral-7b-v0.1")
    ids = tok.encode_ordinary(TEXT).ids
    byte_tokens = [i for i in ids if re.fullmatch(r"<0x[0-9A-F]{2}>", tok.token_text(i))]
    assert len(byte_tokens) >= 8  # the newlines, the hieroglyph, the emoji and its skin tone
    assert m.tokens == len(ids) and m.byte_fallback_rate == pytest.approx(len(byte_tokens) / len(ids))
    assert m.unk_rate == 0.0


def test_bert_counts_unknown_tokens_and_has_no_byte_fallback():
    tok, m = measure("bert-base-uncased")
    ids = tok.encode_ordinary(TEXT).ids
    unk = ids.count(100)  # [UNK]
    assert unk >= 1 and m.unk_rate == pytest.approx(unk / len(ids))
    assert m.byte_fallback_rate is None
    assert m.words == len(TEXT.split()) and m.tokens == len(ids)
