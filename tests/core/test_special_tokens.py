"""Added and special tokens with their flags for every kind of tokenizer, encoding them as text,
special tokens kept as text inside given spans, and the piece cache of tokenizer.json encodings."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_file
from tokviz.core import BpeTokenizer, TrainSettings, train
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer
from tokviz.core.loading import load_tokenizer
from tokviz.core.special_tokens import AddedToken, added_token_map, added_tokens, encode_specials_as_text


@pytest.fixture(scope="module")
def hf():
    """GPT-2's tokenizer.json with a special and a non-special (lstrip, normalized) added token."""
    d = json.loads(shared_file("vocab", "hf", "gpt2", "tokenizer.json").read_text(encoding="utf-8"))
    d["added_tokens"] += [
        {"id": 50257, "content": "<|im_end|>", "special": True, "normalized": False, "lstrip": False,
         "rstrip": False, "single_word": False},
        {"id": 50258, "content": "<think>", "special": False, "normalized": True, "lstrip": True,
         "rstrip": False, "single_word": False},
    ]
    return HfTokenizer.from_json(d, name="gpt2+")


def test_flags_of_a_tokenizer_json(hf):
    by_id = added_token_map(hf)
    assert by_id[50256] == AddedToken(50256, "<|endoftext|>", special=True)
    assert by_id[50258].flags == ("lstrip", "normalized")
    assert by_id[50258].describe() == "added token · lstrip · normalized"
    assert [t.id for t in added_tokens(hf)] == [50256, 50257, 50258]


def test_flags_of_tiktoken_and_trained_tokenizers():
    tok = load_tokenizer(shared_file("vocab", "tiktoken", "cl100k_base.tiktoken"))
    eot = added_token_map(tok)[100257]
    assert (eot.content, eot.flags) == ("<|endoftext|>", ("special",))
    trained = train(TrainSettings(merges=2, special_tokens=("<|sep|>",)), texts=["abab abab"]).tokenizer()
    assert isinstance(trained, BpeTokenizer)
    assert [(t.content, t.flags) for t in added_tokens(trained)] == [("<|sep|>", ("special",))]


def test_encode_specials_as_text(hf):
    text = "a<|im_end|><think>b<|endoftext|>"
    normal = hf.encode(text, add_special_tokens=False)
    assert [i for i in normal.ids if i >= 50256] == [50257, 50258, 50256]
    plain = encode_specials_as_text(hf, text)
    assert [i for i in plain.ids if i >= 50256] == [50258]  # only the non-special added token stays
    assert b"".join(plain.tokens).decode() == text
    tok = load_tokenizer(shared_file("vocab", "tiktoken", "cl100k_base.tiktoken"))
    assert encode_specials_as_text(tok, "x<|endoftext|>").ids == tok.encode_ordinary("x<|endoftext|>").ids


def test_literal_spans_keep_special_tokens_as_text_inside_them(hf):
    text = "<|im_end|>user: <|im_end|> <think> ok<|im_end|>"
    inside = (10, 37)  # "user: <|im_end|> <think> ok"
    enc = hf.encode(text, add_special_tokens=False, literal_spans=[inside])
    specials = [(enc.ids[i], enc.spans[i]) for i in range(len(enc.ids)) if enc.ids[i] >= 50257]
    assert specials == [(50257, (0, 10)), (50258, (26, 34)), (50257, (37, 47))]  # <think> is not special
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_str(json.dumps(json.loads(hf_json(hf))))
    ref.encode_special_tokens = True
    assert enc.ids[1:-1] == ref.encode(text[10:37], add_special_tokens=False).ids


def hf_json(hf) -> str:
    d = json.loads(shared_file("vocab", "hf", "gpt2", "tokenizer.json").read_text(encoding="utf-8"))
    d["added_tokens"] += [{"id": t.id, "content": t.content, "special": t.special, "normalized": t.normalized,
                           "lstrip": t.lstrip, "rstrip": t.rstrip, "single_word": t.single_word}
                          for t in hf.added if t.id > 50256]
    return json.dumps(d)


def test_reused_pieces_give_what_a_fresh_tokenizer_gives(hf):
    """Texts cut by added tokens: after edits, the cached pieces change nothing."""
    fresh = lambda: HfTokenizer.from_json(json.loads(hf_json(hf)))
    warm = fresh()
    base = ["<|im_end|>one two", "<|im_end|> three  four\n", "<|endoftext|>five 👋", "<|im_end|>"]
    for k in range(len(base)):
        edited = list(base)
        edited[k] = edited[k].replace("o", "0") + " more"
        for text in ("".join(base), "".join(edited), "x" + "".join(edited)):
            a, b = warm.encode(text), fresh().encode(text)
            assert (a.ids, a.spans, a.tokens, a.special, a.unknown, a.dropped) == (
                b.ids, b.spans, b.tokens, b.special, b.unknown, b.dropped)


def test_reused_pieces_with_a_metaspace_tokenizer():
    """Mistral (Metaspace, first-piece prefix): a piece at the start is not reused elsewhere."""
    warm = load_tokenizer(shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.json"))
    fresh = lambda: load_tokenizer(shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.json"))
    for text in ("hello</s>hello", "</s>hello</s>hello", "hello</s> hello<s>hello"):
        assert warm.encode(text).ids == fresh().encode(text).ids
