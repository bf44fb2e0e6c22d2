"""The ids path (`encode_ids` with special-token arguments, `encode_ids_like`, `ids_text`) gives
exactly the ids of the full `encode`, for every shared tokenizer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.real_tokenizers import HF_NAMES, TIKTOKEN_NAMES, corpus, fresh_copy, load_ours, piece_ids, unicode_text
from tokviz.core import EncodeError
from tokviz.core.algorithm.ids_path import encode_ids_like, encode_ids_text_like, ids_text
from tokviz.core.special_tokens import encode_specials_as_text

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
        from tokviz.core.loading import load_tokenizer

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
def test_ids_text_like_is_the_text_of_the_ids(name):
    """`encode_ids_text_like` (the command line's ``--ids``; tiktoken-style tokenizers write each
    distinct chunk's ids once) equals `ids_text` of `encode_ids_like`."""
    tok = _load(name)

    @settings(max_examples=60, deadline=None)
    @given(text=_with_specials(tok), as_text=st.booleans())
    def check(text, as_text):
        ids = encode_ids_like(tok, text, specials_as_text=as_text)
        assert encode_ids_text_like(tok, text, specials_as_text=as_text) == ids_text(ids, tok.n_vocab)

    check()


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
def test_rank_bpe_ids_text_on_corpora_with_a_small_cache_and_steps(name, monkeypatch):
    from tokviz.core.bpe.ranked import tokenizer as rank_bpe

    tok = load_ours(name)
    text = corpus("udhr2_all.txt", 60_000)
    text = text[:30_000] + "<|endoftext|>" + text[30_000:]
    for step in (None, 300):
        ids = tok.encode_ids(text, step=step, allowed_special="all")
        assert tok.encode_ids_text(text, step=step, allowed_special="all") == " ".join(map(str, ids))
    monkeypatch.setattr(rank_bpe, "_CACHE_SIZE", 50)  # the chunk texts start over when full
    assert tok.encode_ids_text(text) == " ".join(map(str, tok.encode_ids(text)))
    assert tok.encode_ids_text("") == ""


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
    from tokviz.core.bpe.ranked import tokenizer as rank_bpe

    monkeypatch.setattr(rank_bpe, "_CACHE_SIZE", 50)
    tok = fresh_copy(load_ours("o200k_base"))
    text = corpus("udhr2_all.txt", 50_000)
    assert tok.encode_ids(text) == tok.encode_ordinary(text).ids


@given(ids=st.lists(st.integers(0, 300), max_size=400), n_vocab=st.integers(1, 400))
def test_ids_text_is_the_ids_joined(ids, n_vocab):
    assert ids_text(ids, n_vocab) == " ".join(map(str, ids))


def test_ids_text_for_many_ids():
    ids = list(range(1000)) * 3
    assert ids_text(ids, 1000) == " ".join(map(str, ids))
    assert ids_text(ids + [5000], 1000) == " ".join(map(str, ids + [5000]))


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
def test_spans_from_ids_equal_the_chunk_by_chunk_spans(name):
    """`encode` derives tokens and spans from the ids path; the old chunk-by-chunk path (per-chunk
    byte spans) gives the same Encoding, on generated text and on corpora (numpy above 4096 tokens)."""
    from tokviz.core.bpe.pair_merge import INF_RANK
    from tokviz.core.encoding import Encoding
    from tokviz.core.text.token_text import byte_char_spans, python_pattern
    from tokviz.core.text.unicode_tables import PinnedPattern

    tok = load_ours(name)
    ranks, pattern = tok.mergeable_ranks, PinnedPattern(python_pattern(tok.pattern))

    def old(text):  # each chunk's ids by the one-chunk loop, its tokens' spans from the chunk's bytes
        out = Encoding([], [], [], [], [], [])
        for m in pattern.finditer(text):
            if m.end() > m.start():
                ids = piece_ids(ranks, m.group().encode("utf-8"), INF_RANK)
                tokens = tok.decode_tokens_bytes(ids)
                out.ids.extend(ids)
                out.tokens.extend(tokens)
                out.spans.extend(byte_char_spans(m.group(), map(len, tokens), m.start()))
        return out

    @settings(max_examples=150, deadline=None)
    @given(text=unicode_text())
    def check(text):
        assert tok.encode_ordinary(text) == old(text)

    check()
    for corpus_name in ("gutenberg30.txt", "udhr2_all.txt"):
        text = corpus(corpus_name, 80_000)
        assert tok.encode_ordinary(text) == old(text)


def test_a_pattern_leaving_text_out_keeps_the_chunk_path():
    """Spans come from the ids only when the tokens cover the text; a pattern that drops text
    (here: everything but letters) still reports what it dropped."""
    from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer

    base = load_ours("cl100k_base")
    tok = RankBpeTokenizer(base.mergeable_ranks, pattern=r"\p{L}+", name="letters")
    text = "héllo, wörld! 日本語 42"
    enc = tok.encode_ordinary(text)
    assert enc.dropped == [(5, 7), (12, 14), (17, 20)]
    assert enc.spans and all(text[a:b].isalpha() for a, b in enc.spans)
    assert enc.ids == tok.encode_ids(text)


@given(ids=st.lists(st.integers(0, 10**6)), spans=st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99))),
       tokens=st.lists(st.binary(max_size=5)))
def test_json_text_equals_json_dumps(ids, spans, tokens):
    import json

    from tokviz.core.encoding import Encoding

    enc = Encoding(ids, tokens, spans)
    assert enc.json_text() == json.dumps(enc.to_json())
