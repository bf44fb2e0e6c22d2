"""``tokviz decode`` decodes with the tokenizer's own decoder: what its `decode` and the reference
library give, not the raw bytes of the tokens."""

from __future__ import annotations

import pytest

from tests.conftest import shared_file

MISTRAL = ("vocab", "hf", "mistral-7b-v0.1", "tokenizer.json")
BERT = ("vocab", "hf", "bert-base-uncased", "tokenizer.json")


@pytest.mark.parametrize("ids", [[232, 146], [232, 146, 28708], [1, 22557, 1526, 28808]])
def test_decode_uses_byte_fallback_like_tokenizers(cli, ids):
    tokenizers = pytest.importorskip("tokenizers")
    path = shared_file(*MISTRAL)
    expected = tokenizers.Tokenizer.from_file(str(path)).decode(ids, skip_special_tokens=False)
    code, out, err = cli("decode", str(path), *map(str, ids))
    assert (code, err) == (0, "")
    assert out == expected + "\n"


def test_decode_of_the_issue_case_gives_two_replacement_characters(cli):
    code, out, _ = cli("decode", str(shared_file(*MISTRAL)), "232", "146")
    assert (code, out) == (0, "\ufffd\ufffd\n")  # two byte tokens that are no character: one U+FFFD each


def test_decode_joins_wordpiece_continuations(cli):
    tokenizers = pytest.importorskip("tokenizers")
    path = shared_file(*BERT)
    ref = tokenizers.Tokenizer.from_file(str(path))
    ids = ref.encode("unaffable tokenization").ids
    code, out, _ = cli("decode", str(path), *map(str, ids))
    assert code == 0 and out == ref.decode(ids, skip_special_tokens=False) + "\n"
    assert "##" not in out
