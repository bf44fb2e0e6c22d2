"""Words are cut at their ``▁`` markers before BPE only where that gives the model's own tokens:
not for a model with an end-of-word suffix (``x▁y``: the ``x`` ends no word), a continuing-subword
prefix, ``ignore_merges`` or fused unknowns. Small BPE models trained with `tokenizers` here, whose
merges never cross a ``▁`` (it is not in the training text), against tokenizers on text full of
``▁``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.real_tokenizers import corpus
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

tk = pytest.importorskip("tokenizers")

MODELS = {
    "suffix": {"end_of_word_suffix": "</w>"},
    "prefix": {"continuing_subword_prefix": "##"},
    "suffix+prefix": {"end_of_word_suffix": "</w>", "continuing_subword_prefix": "##"},
    "fuse_unk": {"fuse_unk": True},
    "ignore_merges": {"ignore_merges": True},
    "plain": {},  # the cut is exact: it stays
}
PRE = {"none": None, "whitespace": tk.pre_tokenizers.WhitespaceSplit()}
_BUILT: dict = {}


def _built(kind: str, pre: str):
    if (kind, pre) not in _BUILT:
        kw = MODELS[kind]
        ref = tk.Tokenizer(tk.models.BPE(unk_token="[UNK]", **kw))
        ref.pre_tokenizer = tk.pre_tokenizers.WhitespaceSplit()
        extra = {k: v for k, v in kw.items() if k in ("end_of_word_suffix", "continuing_subword_prefix")}
        trainer = tk.trainers.BpeTrainer(vocab_size=400, special_tokens=["[UNK]"], show_progress=False, **extra)
        ref.train_from_iterator([corpus("taylorswift.txt", 40_000)], trainer)
        ref.pre_tokenizer = PRE[pre]
        _BUILT[kind, pre] = (ref, HfTokenizer.from_json(json.loads(ref.to_str())))
    return _BUILT[kind, pre]


CASES = ["x\u2581y", "x\u2581y z", "\u2581x", "x\u2581", "ab\u2581\u2581cd", "hello\u2581world\u2581",
         "the\u2581song\u2581\u2603\u2581\u2603\u2603", "\u2603\u2581\u2603", "Swift\u2581\u2581 was"]
LABELS = [(k, p) for k in MODELS for p in PRE]


@pytest.mark.parametrize(("kind", "pre"), LABELS)
def test_words_with_markers_encode_as_tokenizers(kind, pre):
    ref, ours = _built(kind, pre)
    for text in CASES:
        r = ref.encode(text)
        assert ours.encode_ids(text) == r.ids, text
        enc = ours.encode(text)
        assert (enc.ids, enc.spans) == (r.ids, r.offsets), text


def test_the_suffix_case():
    ref, ours = _built("suffix", "none")
    assert ours.encode_ids("x\u2581y") == ref.encode("x\u2581y").ids
    assert ours.token_text(ours.encode_ids("x\u2581y")[0]) == "x"  # not "x</w>": x ends no word
    assert ours.encode_ids("x\u2581y")[1] == ours.unk_id


words = st.lists(st.sampled_from(["\u2581", "\u2581\u2581", " ", "x", "y", "the", "song", "Swift", "\u2603", "ab"]),
                 max_size=10).map("".join)


@pytest.mark.parametrize(("kind", "pre"), LABELS)
@settings(max_examples=60, deadline=None)
@given(text=words)
def test_generated_marker_text_encodes_as_tokenizers(kind, pre, text):
    ref, ours = _built(kind, pre)
    r = ref.encode(text)
    enc = ours.encode(text)
    assert ours.encode_ids(text) == r.ids
    assert (enc.ids, enc.spans) == (r.ids, r.offsets)
