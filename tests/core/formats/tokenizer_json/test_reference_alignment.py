"""Offsets where NFC, NFKC, NFD and NFKD compose or reorder characters, exactly as `tokenizers`
reports them: its alignments go by position (a composite takes its starter's place, a reordered
mark the place of the mark it moved over), tokviz's drawing spans by origin. Checked on each
normalized character (a per-character tokenizer built here), on the shared GPT-2 and BERT files
with a Unicode form added, and on generated text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.real_tokenizers import corpus, hf_path, unicode_text
from tokviz.core.formats.offsets import reference_offsets
from tokviz.core.formats.tokenizer_json.normalizers import NormStr, build_normalizer
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

tk = pytest.importorskip("tokenizers")

FORMS = ("NFC", "NFKC", "NFD", "NFKD")
CASES = [
    "e\u0301", "A\u030a\u0301x", "a\u0301\u0327b", "o\u0323\u0302\u0301", "\u1e0b\u0323", "\u0344\u0327",
    "\u1100\u1161\u11a8 \u1100\u1161 \u1100\u1161\u11a7 \uac00\u11a8", "\u110b\u1167\u11bc\u1100\u1161\u11b8",
    "\ufb01 \u2460 \uff26\uff55\uff4c\uff4c \uff76\uff9e \u3300 \u2126 \u212b", "\u0f73\u0f75\u0f81", "\u0b47\u0b3e",
    "\u0301\u0327a", "caf\u00e9 cafe\u0301", "\u1fb4\u0345", "x\u0300\u0315\u0300", "\U0001d15e\U0001d165",
]
_MARKS = [*"\u0300\u0301\u0302\u0308\u0315\u0323\u0327\u0328\u0345\u05b0\u0e48\u3099\u309a\u1161\u11a8"]
_BASES = [*"aeoAE\u00e9\u01d6\u1100\uac00\u304b\ufb01\u2460\uff76\uff9e\u0344\u0f73 "]
combining_text = st.lists(st.sampled_from(_MARKS + _BASES), max_size=12).map("".join)


def _per_char(form: str):
    """tokenizers with `form` and one token per normalized character: its offsets are the
    normalizer's alignments."""
    from tokenizers import Regex, Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    t = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    t.normalizer = getattr(normalizers, form)()
    t.pre_tokenizer = pre_tokenizers.Split(Regex("(?m)."), "isolated")  # (Oniguruma: (?m) lets . take \n)
    return t


PER_CHAR = {f: _per_char(f) for f in FORMS}
OURS = {f: build_normalizer({"type": f}) for f in FORMS}


def _check_alignment(form: str, text: str) -> None:
    got = OURS[form].as_reference(NormStr.of(text))
    assert got.text == OURS[form](NormStr.of(text)).text  # the same text as the drawing path
    assert got.spans == PER_CHAR[form].encode(text).offsets, (form, ascii(text))


@pytest.mark.parametrize("form", FORMS)
def test_each_normalized_character_aligns_as_tokenizers(form):
    for text in CASES:
        _check_alignment(form, text)


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=150, deadline=None)
@given(text=unicode_text() | combining_text)
def test_generated_text_aligns_as_tokenizers(form, text):
    _check_alignment(form, text)


def test_a_composite_covers_its_starter_there_and_both_characters_here():
    form = OURS["NFC"]
    assert form.as_reference(NormStr.of("e\u0301")).spans == [(0, 1)]
    assert form(NormStr.of("e\u0301")).spans == [(0, 2)]  # drawing: nothing looks dropped


def _with(name: str, form: str) -> dict:
    d = json.loads(hf_path(name).read_text(encoding="utf-8"))
    old = d.get("normalizer")
    d["normalizer"] = {"type": "Sequence", "normalizers": [{"type": form}, *([old] if old else [])]}
    return d


PIPELINES = [(name, form) for name in ("gpt2", "bert-base-uncased") for form in FORMS]


def lines() -> list[str]:
    """The worked cases and every 150th UDHR line (read in the test: without ../shared it skips)."""
    return CASES + [ln for ln in corpus("udhr2_all.txt", None).splitlines()[::150] if ln.strip()]


@pytest.fixture(scope="module", params=PIPELINES, ids=[f"{n}+{f}" for n, f in PIPELINES])
def pipeline(request):
    d = _with(*request.param)
    return tk.Tokenizer.from_str(json.dumps(d)), HfTokenizer.from_json(d)


def test_offsets_of_a_pipeline_with_a_unicode_form_equal_tokenizers(pipeline):
    ref, ours = pipeline
    for line in lines():
        r, enc = ref.encode(line), ours.encode(line)
        assert enc.ids == r.ids, line
        assert [tuple(s) for s in reference_offsets(ours, enc, "hf", text=line)] == r.offsets, line


@settings(max_examples=30, deadline=None)
@given(text=unicode_text() | combining_text)
def test_generated_offsets_equal_tokenizers(pipeline, text):
    ref, ours = pipeline
    r = ref.encode(text)
    for enc, post in ((ours.encode(text), True), (ours.encode(text, add_special_tokens=False), False)):
        want = r.offsets if post else ref.encode(text, add_special_tokens=False).offsets
        assert [tuple(s) for s in reference_offsets(ours, enc, "hf", text=text)] == want


def test_the_added_token_pieces_and_the_merge_step_are_kept():
    d = _with("gpt2", "NFC")  # (its added token: <|endoftext|>)
    ref, ours = tk.Tokenizer.from_str(json.dumps(d)), HfTokenizer.from_json(d)
    text = "cafe\u0301<|endoftext|>A\u030a\u0301 o\u0323\u0302"
    enc = ours.encode(text)
    assert enc.ids == ref.encode(text).ids
    assert [tuple(s) for s in reference_offsets(ours, enc, "hf", text=text)] == ref.encode(text).offsets
    early = ours.encode(text, step=3)  # after 3 merges: the reference run stops there too
    assert ours.encode_as_reference(text, step=3).ids == early.ids != enc.ids
