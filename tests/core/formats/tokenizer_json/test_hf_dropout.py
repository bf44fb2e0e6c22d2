"""A tokenizer.json whose BPE sets ``dropout`` opens: it encodes with the model's own merges, and
samples only through `encode_dropout`."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.conftest import shared_file
from tokviz.core.errors import EncodeError
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer
from tokviz.core.loading import load_tokenizer

TEXT = "Tokenizers are unbelievable, internationalization too."


@pytest.fixture(scope="module")
def gpt2_json():
    return json.loads(shared_file("vocab", "hf", "gpt2", "tokenizer.json").read_text(encoding="utf-8"))


def test_a_file_with_dropout_opens_and_encodes_deterministically(tmp_path, gpt2_json):
    plain = HfTokenizer.from_json(gpt2_json)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(dict(gpt2_json, model=dict(gpt2_json["model"], dropout=0.1))), encoding="utf-8")
    tok = load_tokenizer(path)
    assert tok.model.dropout == 0.1 and tok.drops_merges
    expected = plain.encode(TEXT).ids
    assert [tok.encode(TEXT).ids for _ in range(20)] == [expected] * 20
    assert tok.encode_ids(TEXT) == expected
    samples = Counter(tuple(tok.encode_dropout(TEXT, dropout=0.5, seed=s).ids) for s in range(20))
    assert len(samples) > 1 and all(tok.decode(list(ids)) == TEXT for ids in samples)
    assert tok.encode_dropout(TEXT, dropout=0.5, seed=3).ids == tok.encode_dropout(TEXT, dropout=0.5, seed=3).ids


def test_a_wordpiece_file_refuses_dropout():
    tok = load_tokenizer(shared_file("vocab", "hf", "bert-base-uncased", "tokenizer.json"))
    assert not tok.drops_merges
    with pytest.raises(EncodeError, match="BPE models only"):
        tok.encode_dropout("hello", dropout=0.1, seed=0)
