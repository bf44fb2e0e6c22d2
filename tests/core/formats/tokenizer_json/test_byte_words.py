"""Byte-level words merged from their UTF-8 bytes (`byte_word_ids`) against the model's ids of the
same words mapped to byte-level characters first, on real vocabularies and on small ones built to
break the shortcut (a byte with no token, one-character tokens sharing an id, ignore_merges)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import shared_file
from tests.real_tokenizers import unicode_text
from tokviz.core.bpe.pair_merge import INF_RANK
from tokviz.core.formats.tokenizer_json.models import HfBpeModel
from tokviz.core.formats.tokenizer_json.pretokenizers import BYTE_CHAR, to_byte_chars
from tokviz.core.formats.tokenizer_json.word_ids import byte_word_ids
from tokviz.core.loading import load_tokenizer

_WORD = st.one_of(unicode_text(), st.text(st.sampled_from("ab #\u00e9\u4e00\U0001f600\n"), max_size=20),
                  st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80))
_LIMITS = st.sampled_from([INF_RANK, 0, 1, 50, 300, 5000])


@pytest.mark.parametrize("name", ["gpt2", "deepseek-v3"])
def test_byte_words_equal_the_mapped_words(name):
    model = load_tokenizer(shared_file("vocab", "hf", name, "tokenizer.json")).model
    ids = byte_word_ids(model)
    assert ids is not None

    @settings(max_examples=300, deadline=None)
    @given(word=_WORD, limit=_LIMITS)
    def check(word, limit):
        assert ids(word, limit) == model.tokenize_ids(to_byte_chars(word), limit)

    check()


def _byte_vocab(shared: bool = False) -> dict[str, int]:
    vocab = {BYTE_CHAR[b]: b for b in range(256)}
    if shared:
        vocab[BYTE_CHAR[ord("z")]] = vocab[BYTE_CHAR[ord("y")]]  # two one-character tokens, one id
    return vocab


_MERGES = [("a", "b"), ("ab", "c"), ("Ġ", "a"), ("b", "c"), ("c", "c"), ("a", "b")]  # (a pair twice: its last rank)


def _model(shared: bool = False, ignore_merges: bool = False) -> HfBpeModel:
    vocab = _byte_vocab(shared)
    for a, b in _MERGES:
        vocab.setdefault(a + b, len(vocab) + 300)
    vocab["zz"] = 900  # a whole word with no merge
    return HfBpeModel(vocab, _MERGES, ignore_merges=ignore_merges)


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("ignore_merges", [False, True])
@settings(max_examples=200, deadline=None)
@given(word=st.text(st.sampled_from("abcyz \u00e9"), max_size=12), limit=st.sampled_from([INF_RANK, 0, 1, 2, 3, 5]))
def test_byte_words_on_built_vocabularies(shared, ignore_merges, word, limit):
    model = _model(shared, ignore_merges)
    assert byte_word_ids(model)(word, limit) == model.tokenize_ids(to_byte_chars(word), limit)


def test_no_shortcut_when_a_byte_has_no_token_or_words_take_a_prefix():
    vocab = _byte_vocab()
    del vocab[BYTE_CHAR[0xFF]]
    assert byte_word_ids(HfBpeModel(vocab, [])) is None
    assert byte_word_ids(HfBpeModel({**_byte_vocab(), "##a": 400}, [], continuing_subword_prefix="##")) is None


def test_byte_level_tokenizers_take_their_words_unmapped(monkeypatch):
    """The ids path of a byte-level tokenizer.json merges each new word from its bytes: the model's
    ids of mapped words are never asked for, and the ids are the aligned path's."""
    def mapped(self, word, limit=INF_RANK):
        raise AssertionError(f"{word!r} was mapped to byte-level characters")

    monkeypatch.setattr(HfBpeModel, "tokenize_ids", mapped)
    tok = load_tokenizer(shared_file("vocab", "hf", "deepseek-v3", "tokenizer.json"))
    text = " naïve 123 世界 zqxj"
    assert tok.encode(text).ids == tok.encode(text, literal_spans=[(0, 0)]).ids
