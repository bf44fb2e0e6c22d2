"""Tokens that cover no input (a post-processor's [CLS]/[SEP]/<s>, a prepended ▁): an empty span at
the point where they were inserted, the same everywhere (`Encoding`, its JSON, the token labels,
``tokviz encode --json``), and Hugging Face's offsets wherever a token does cover input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.real_tokenizers import HF_NAMES, hf_path, load_ours, load_reference
from tokviz.core.display.diagnostics import export_json
from tokviz.core.display.tokens import INSERTED, KIND_NAMES, SPECIAL, token_labels


def test_bert_sep_is_an_empty_span_at_the_end():
    tok = load_ours("bert-base-uncased")
    text = "Hello big world"  # 15 characters
    enc = tok.encode(text)
    ref = load_reference("bert-base-uncased").encode(text)
    assert enc.ids == ref.ids
    assert ref.offsets[-1] == (0, 0)  # HF: every inserted token at (0, 0)
    assert enc.spans[0] == (0, 0) and enc.spans[-1] == (15, 15)  # tokviz: where each was inserted
    assert enc.inserted == [0, len(enc.ids) - 1]
    assert enc.to_json()["inserted"] == [0, len(enc.ids) - 1]


def test_a_special_token_typed_in_the_text_covers_it():
    tok = load_ours("bert-base-uncased")
    enc = tok.encode("a [SEP] b")
    assert enc.spans[2] == (2, 7) and 2 not in enc.inserted  # it is in the text: not inserted
    kinds = token_labels("a [SEP] b", enc).kinds
    assert kinds[0] == kinds[-1] == INSERTED and kinds[2] == SPECIAL
    assert KIND_NAMES[INSERTED] == "inserted"


@pytest.mark.parametrize("name", HF_NAMES)
@settings(max_examples=80, deadline=None)
@given(text=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20)
       | st.sampled_from(["", " ", "Hello world", "  a", "👍", "a\u0301", "[CLS] x [SEP]", "<s></s>"]))
def test_spans_are_hf_offsets_except_where_inserted(name, text):
    enc = load_ours(name).encode(text)
    ref = load_reference(name).encode(text)
    assert enc.ids == ref.ids
    for i, ((a, b), (x, y)) in enumerate(zip(enc.spans, ref.offsets)):
        if a == b:  # covers no input: HF's offsets are empty too (mostly (0, 0))
            assert x == y, (i, enc.spans, ref.offsets)
        else:
            assert (a, b) == (x, y), (i, enc.spans, ref.offsets)
    for i in enc.special:
        if i in enc.inserted:  # a post-processor's token: before the text, or after it
            assert enc.spans[i] in ((0, 0), (len(text), len(text)))
    assert enc.inserted == [i for i, (a, b) in enumerate(enc.spans) if a == b]


def test_token_view_json_and_cli_json_carry_the_inserted_tokens(cli):
    tok = load_ours("bert-base-uncased")
    text = "Hello world"
    enc = tok.encode(text, allowed_special="all")
    assert export_json(text, enc, name="bert")["inserted"] == [0, 3]
    code, out, err = cli("encode", "--json", str(hf_path("bert-base-uncased")), text)
    assert (code, err) == (0, "")
    assert json.loads(out) == {"ids": [101, 7592, 2088, 102], "tokens_hex": [t.hex() for t in enc.tokens],
                               "spans": [[0, 0], [0, 5], [6, 11], [11, 11]], "inserted": [0, 3]}


def test_a_prepended_mark_is_not_part_of_the_byte_group():
    from tokviz.core.display.tokens import BYTES, byte_groups

    tok = load_ours("mistral-7b-v0.1")
    text = "\U0001d11ex"  # <s> ▁ <0xF0> <0x9D> <0x84> <0x9E> x: ▁ shares 𝄞's span, as in tokenizers
    enc = tok.encode(text)
    assert enc.spans[1:6] == [(0, 1)] * 5 and enc.spans == [(0, 0)] + load_reference("mistral-7b-v0.1").encode(text).offsets[1:]
    kinds = token_labels(text, enc).kinds
    assert kinds[2:6] == [BYTES] * 4 and byte_groups(enc, kinds) == [(2, 5)]  # the bytes only, not ▁
