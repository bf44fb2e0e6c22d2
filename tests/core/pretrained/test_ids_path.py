"""The ids path (`encode_ids` with special-token arguments, `encode_ids_like`, `ids_text`) gives
exactly the ids of the full `encode`, for every shared tokenizer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import EncodeError
from tokviz.core.pretrained.ids_path import encode_ids_like, ids_text
from tokviz.core.special_tokens import encode_specials_as_text

from .pretrained_helpers import HF_NAMES, TIKTOKEN_NAMES, corpus, load_ours, unicode_text

DEEPSEEK = "deepseek-v3"
NAMES = (*TIKTOKEN_NAMES, *HF_NAMES, DEEPSEEK)


def _with_specials(tok):
    """Text pieces that include the tokenizer's own special and added tokens."""
    contents = sorted(getattr(tok, "special_tokens", {}))[:6]
    return st.lists(st.one_of(unicode_text(), st.sampled_from(contents) if contents else unicode_text()),
                    max_size=6).map("".join)


def _load(name):
    if name == DEEPSEEK:
        from tests.conftest import shared_file

        from tokviz.core.pretrained import load_tokenizer

        return load_tokenizer(shared_file("vocab", "hf", DEEPSEEK, "tokenizer.json"))
    return load_ours(name)


@pytest.mark.parametrize("name", NAMES)
def test_ids_like_encode_on_generated_text(name):
    tok = _load(name)

    @settings(max_examples=120, deadline=None)
    @given(text=_with_specials(tok))
    def check(text):
        assert encode_ids_like(tok, text) == tok.encode(text, allowed_special="all").ids
        assert encode_ids_like(tok, text, specials_as_text=True) == encode_specials_as_text(tok, text).ids
        assert tok.encode_ids(text) == tok.encode_ordinary(text).ids

    check()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("corpus_name", ["gutenberg30.txt", "udhr2_all.txt"])
def test_ids_like_encode_on_corpora(name, corpus_name):
    tok = _load(name)
    text = corpus(corpus_name, 60_000)
    specials = sorted(getattr(tok, "special_tokens", {}))
    if specials:  # a few special-token strings inside the text
        text = text[:20_000] + specials[0] + text[20_000:40_000] + specials[-1] + text[40_000:]
    assert encode_ids_like(tok, text) == tok.encode(text, allowed_special="all").ids
    assert encode_ids_like(tok, text, specials_as_text=True) == encode_specials_as_text(tok, text).ids


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
def test_rank_bpe_ids_follow_tiktoken_special_rules(name):
    tok = load_ours(name)
    text = "a <|endoftext|> b"
    with pytest.raises(EncodeError):
        tok.encode(text, disallowed_special="all")
    with pytest.raises(EncodeError):
        tok.encode_ids(text, disallowed_special="all")
    allowed = {"<|endoftext|>"}
    assert tok.encode_ids(text, allowed_special=allowed) == tok.encode(text, allowed_special=allowed).ids
    assert tok.encode_ids(text) == tok.encode_ordinary(text).ids
    assert tok.encode_ids(text, step=100, allowed_special="all") == tok.encode(text, step=100, allowed_special="all").ids


def test_rank_bpe_ids_path_with_a_small_cache_equals_encode(monkeypatch):
    """The chunk cache starts over when full; the ids stay those of `encode_ordinary`."""
    from tokviz.core.pretrained import rank_bpe

    monkeypatch.setattr(rank_bpe, "_CACHE_SIZE", 50)
    tok = load_ours("o200k_base")
    tok._caches.clear()
    text = corpus("udhr2_all.txt", 50_000)
    try:
        assert tok.encode_ids(text) == tok.encode_ordinary(text).ids
    finally:
        tok._caches.clear()


@given(ids=st.lists(st.integers(0, 300), max_size=400), n_vocab=st.integers(1, 400))
def test_ids_text_is_the_ids_joined(ids, n_vocab):
    assert ids_text(ids, n_vocab) == " ".join(map(str, ids))


def test_ids_text_for_many_ids():
    ids = list(range(1000)) * 3
    assert ids_text(ids, 1000) == " ".join(map(str, ids))
    assert ids_text(ids + [5000], 1000) == " ".join(map(str, ids + [5000]))
