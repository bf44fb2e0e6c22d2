"""tokenizer.json pipelines: spans, special tokens, the three model kinds, decoders, clear errors
for components tokviz does not run."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from tests.real_tokenizers import HF_NAMES, hf_path, load_ours, load_reference, unicode_text
from tokviz.core import ModelFormatError
from tokviz.core.formats.tokenizer_json.normalizers import UnsupportedComponent
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer
from tokviz.core.loading import load_tokenizer


def test_bert_pipeline_spans_and_specials():
    tok = load_ours("bert-base-uncased")
    text = "Héllo, WORLD! 日本"
    enc = tok.encode(text)
    assert enc.ids == [101, 7592, 1010, 2088, 999, 1864, 1876, 102]
    assert enc.special == [0, 7]
    assert enc.spans[0] == (0, 0) and enc.spans[-1] == (len(text), len(text))
    assert [text[a:b] for a, b in enc.spans[1:-1]] == ["Héllo", ",", "WORLD", "!", "日", "本"]
    assert enc.tokens[1:4] == [b"hello", b",", b"world"]
    assert tok.encode_ordinary(text).ids == enc.ids[1:-1]
    assert tok.encode_ids(text) == enc.ids[1:-1]
    assert tok.decode(enc.ids) == "[CLS] hello, world! 日 本 [SEP]"
    assert tok.decode(enc.ids, skip_special_tokens=True) == "hello, world! 日 本"


def test_wordpiece_continuations_and_unknown_words():
    tok = load_ours("bert-base-uncased")
    enc = tok.encode_ordinary("tokenization 🦜")
    assert [tok.token_text(i) for i in enc.ids] == ["token", "##ization", "[UNK]"]
    assert enc.spans == [(0, 5), (5, 12), (13, 14)]
    assert enc.unknown == [2] and not enc.lossless
    assert tok.token_bytes(enc.ids[1]) == b"ization"


def test_mistral_byte_fallback_and_word_marker():
    tok = load_ours("mistral-7b-v0.1")
    text = "Hi 🦜!"
    enc = tok.encode(text)
    assert enc.ids[0] == 1 and enc.special == [0]
    strings = [tok.token_text(i) for i in enc.ids[1:]]
    assert strings[0] == "▁Hi" and "<0xF0>" in strings
    byte_spans = {enc.spans[i + 1] for i, s in enumerate(strings) if s.startswith("<0x")}
    assert byte_spans == {(3, 4)}  # every byte of the parrot points at the whole character
    assert tok.decode(enc.ids, skip_special_tokens=True) == text
    assert tok.decode_bytes(tok.encode_ids(text)) == text.encode()
    assert tok.decode_bytes([tok.model.vocab["<0xF0>"]]) == b"\xf0"  # raw bytes, no U+FFFD
    assert tok.decode([tok.model.vocab["<0xF0>"]]) == "\ufffd"


def test_mistral_long_text_is_cut_at_word_marks():
    from tokviz.core.formats.tokenizer_json.markers import marker_is_boundary

    tok = load_ours("mistral-7b-v0.1")
    strings = {i: s for s, i in tok.model.vocab.items()}
    assert marker_is_boundary(tok.model.merge_pairs, strings)  # no merge crosses a ▁: words are cut there
    text = "The quick brown fox  jumps over the lazy dog. " * 200
    assert tok.encode_ids(text, add_special_tokens=True) == load_reference("mistral-7b-v0.1").encode(text).ids


def test_gpt2_byte_level_tokens_are_bytes():
    tok = load_ours("gpt2")
    enc = tok.encode("a 👋")
    assert enc.tokens == [tok.token_bytes(i) for i in enc.ids]
    assert b"".join(enc.tokens) == "a 👋".encode()
    assert tok.token_text(enc.ids[1]).startswith("Ġ")


@pytest.mark.parametrize("name", HF_NAMES)
@settings(max_examples=60, deadline=None)
@given(text=unicode_text())
def test_spans_are_inside_the_text_and_ordered(name, text):
    tok = load_ours(name)
    enc = tok.encode(text)
    assert enc.ids == load_reference(name).encode(text).ids
    starts = [a for a, _ in enc.spans]
    assert starts == sorted(starts)
    assert all(0 <= a <= b <= len(text) for a, b in enc.spans)
    ref = load_reference(name).encode(text, add_special_tokens=False)
    assert tok.encode(text, add_special_tokens=False).ids == ref.ids


@pytest.mark.parametrize("name", ["gpt2", "mistral-7b-v0.1"])
@settings(max_examples=60, deadline=None)
@given(text=unicode_text())
def test_byte_level_round_trip(name, text):
    tok = load_ours(name)
    ids = tok.encode_ids(text)
    assert tok.decode_bytes(ids) == text.encode()
    assert tok.decode(ids) == text


def test_added_tokens_are_recognised_unless_ordinary():
    tok = load_ours("gpt2")
    assert tok.encode("a<|endoftext|>b").ids == [64, 50256, 65]
    assert tok.encode_ordinary("a<|endoftext|>b").ids == tok.encode_ids("a<|endoftext|>b") != [64, 50256, 65]
    assert tok.encode("a<|endoftext|>b", allowed_special=()).ids == tok.encode_ids("a<|endoftext|>b")
    mistral = load_ours("mistral-7b-v0.1")
    assert mistral.encode("<s>hi</s>").ids == load_reference("mistral-7b-v0.1").encode("<s>hi</s>").ids


def test_merge_steps_for_hf_bpe():
    tok = load_ours("gpt2")
    assert tok.n_merges == 50000
    assert [len(tok.encode_ids(" hello", step=k)) for k in (0, tok.n_merges)] == [6, 1]
    steps = tok.explain(" hello")
    assert steps[-1].ids == (tok.encode_ids(" hello")[0],)
    for before, after in zip(steps, steps[1:]):
        i = next(k for k in range(len(before.ids) - 1) if before.ids[k : k + 2] == after.pair)
        assert after.ids == before.ids[:i] + (after.id,) + before.ids[i + 2 :]
        assert tok.model.merge_ids[after.rank] == after.id
    m = tok.merge_list()
    assert m[0].index == 0 and m[0].pair == (tok.model.vocab["Ġ"], tok.model.vocab["t"])
    assert m[0].token == b" t" and tok.merge_of(m[0].id) == m[0].pair


def _minimal(**over) -> dict:
    d = {
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
        "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "added_tokens": [],
    }
    d.update(over)
    return d


@pytest.mark.parametrize(("part", "value", "named"), [
    ("normalizer", {"type": "Fancy", "precompiled_charsmap": ""}, "Fancy"),
    ("pre_tokenizer", {"type": "Fancier"}, "Fancier"),
    ("post_processor", {"type": "Fancy"}, "Fancy"),
    ("decoder", {"type": "Fanciest"}, "Fanciest"),
    ("model", {"type": "Marvel", "vocab": []}, "Marvel"),
])
def test_unsupported_components_are_named(tmp_path, part, value, named):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(_minimal(**{part: value})), encoding="utf-8")
    with pytest.raises(UnsupportedComponent, match=named):
        load_tokenizer(path)


def test_minimal_bpe_and_errors(tmp_path):
    tok = HfTokenizer.from_json(_minimal())
    assert tok.encode_ids("aab") == [0, 2]
    assert tok.decode([0, 2]) == "a ab"  # no decoder: tokens joined by spaces, as tokenizers does
    with pytest.raises(ModelFormatError, match="not in the vocabulary"):
        HfTokenizer.from_json(_minimal(model={"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}))
    with pytest.raises(ModelFormatError, match="dropout must be a number from 0 to 1"):
        HfTokenizer.from_json(_minimal(model={"type": "BPE", "vocab": {"a": 0}, "merges": [], "dropout": 1.5}))
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        load_tokenizer(bad)


def test_file_loads_match_reference_vocab_sizes():
    for name in HF_NAMES:
        tok = load_tokenizer(hf_path(name))
        assert tok.n_vocab == load_reference(name).get_vocab_size()


@settings(max_examples=80, deadline=None)
@given(text=unicode_text())
def test_byte_level_span_shortcut_equals_the_general_pipeline(text):
    tok = load_ours("gpt2")
    assert tok._plain_byte_level
    fast = tok.encode(text)
    tok._plain_byte_level = False
    try:
        slow = tok.encode(text)
    finally:
        tok._plain_byte_level = True
    assert (fast.ids, fast.tokens, fast.spans, fast.special, fast.dropped) == (
        slow.ids, slow.tokens, slow.spans, slow.special, slow.dropped)


def test_decode_error_handlers():
    tok = load_ours("mistral-7b-v0.1")
    ids = [tok.model.vocab["<0xF0>"], tok.model.vocab["▁a"]]
    assert tok.decode(ids) == "\ufffd a" == load_reference("mistral-7b-v0.1").decode(ids)
    assert tok.decode(ids, errors="ignore") == " a"
    with pytest.raises(UnicodeDecodeError):
        tok.decode(ids, errors="strict")
