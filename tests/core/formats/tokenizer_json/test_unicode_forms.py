"""Normalizers with the Unicode versions tokenizers uses, against tokenizers' own normalizers:
NFD/NFKD/NFC/NFKC with Unicode 9.0 (the issue's case, marks from every later version, generated
text) and Lowercase with Rust's newer case tables."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.real_tokenizers import full_only, unicode_text
from tokviz.core.formats.tokenizer_json import case_mapping, unicode_forms
from tokviz.core.formats.tokenizer_json.normalizers import NormStr, build_normalizer

tk = pytest.importorskip("tokenizers")
from tokenizers import normalizers  # noqa: E402

FORMS = ("NFD", "NFKD", "NFC", "NFKC")
REFS = {f: getattr(normalizers, f)() for f in FORMS}
OURS = {f: build_normalizer({"type": f}) for f in FORMS}
BERT = build_normalizer({"type": "BertNormalizer", "lowercase": False, "strip_accents": True})
BERT_REF = normalizers.BertNormalizer(lowercase=False, strip_accents=True)


def ours(form: str, text: str, *, aligned: bool) -> str:
    out = OURS[form](NormStr.of(text, aligned=aligned))
    if aligned:
        assert len(out.spans) == len(out.text)
    return out.text


def test_the_issue_case_is_not_reordered():
    text = "\U00010d24\u0327"  # HANIFI ROHINGYA SIGN HARBAHAY (ccc 230 since Unicode 11), COMBINING CEDILLA
    for form in FORMS:
        assert REFS[form].normalize_str(text) == text
        assert ours(form, text, aligned=True) == ours(form, text, aligned=False) == text


def test_the_issue_case_in_the_nfkd_pipeline():
    from tests.core.formats.tokenizer_json.test_hf_components import built

    ref, tok = built("nfkd-isolated-digits")
    text = "\U00010d24\u0327"
    assert tok.encode(text).ids == ref.encode(text).ids


def test_the_table_is_unicode_9():
    assert unicode_forms.UNICODE_VERSION == "9.0.0"
    assert "\U0001e944" in unicode_forms.KNOWN  # Adlam, Unicode 9.0
    assert "\u1df6" not in unicode_forms.KNOWN and "\U00010d24" not in unicode_forms.KNOWN  # 10.0, 11.0
    assert unicode_forms.combining("\U0001e944") == 230 and unicode_forms.combining("\U00010d24") == 0


def _later_marks() -> list[int]:
    """Code points Python's data gives a combining class or a decomposition and Unicode 9.0 does
    not assign: where the versions can differ."""
    import unicodedata

    return [c for c in range(0x80, sys.maxunicode + 1)
            if not 0xD800 <= c <= 0xDFFF and chr(c) not in unicode_forms.KNOWN
            and (unicodedata.combining(chr(c)) or unicodedata.decomposition(chr(c)))]


LATER = _later_marks()


@pytest.mark.parametrize("form", FORMS)
def test_every_later_mark_or_decomposition(form):
    assert len(LATER) > 50
    for c in LATER:
        for text in (chr(c), f"a{chr(c)}\u0327", f"e\u0301{chr(c)}", f"{chr(c)}\u0301", f"e{chr(c)}\u0301"):
            expected = REFS[form].normalize_str(text)
            assert ours(form, text, aligned=False) == expected, (hex(c), text)
            assert ours(form, text, aligned=True) == expected, (hex(c), text)


marks = st.sampled_from([chr(c) for c in LATER] + ["\u0327", "\u0301", "\u0300", "\u05b0", "\u0e48", "\u3099"])


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=150, deadline=None)
@given(text=unicode_text() | st.lists(marks | st.sampled_from("aeAE\uac00\u1100\u1161 "), max_size=12).map("".join))
def test_generated_unicode_equals_tokenizers(form, text):
    expected = REFS[form].normalize_str(text)
    assert ours(form, text, aligned=False) == expected
    assert ours(form, text, aligned=True) == expected


@settings(max_examples=100, deadline=None)
@given(text=unicode_text() | st.lists(marks | st.sampled_from("aeAE "), max_size=12).map("".join))
def test_bert_strip_accents_equals_tokenizers(text):
    assert BERT(NormStr.of(text)).text == BERT_REF.normalize_str(text)


@pytest.mark.slow
@full_only
@pytest.mark.parametrize("form", FORMS)
def test_every_code_point_in_three_contexts(form):
    """The stability argument, checked: every code point alone, before a cedilla and after an
    acute accent normalizes as tokenizers normalizes it."""
    bad = []
    for c in range(0x80, sys.maxunicode + 1):
        if 0xD800 <= c <= 0xDFFF:
            continue
        for text in (chr(c), f"a{chr(c)}\u0327", f"{chr(c)}\u0301"):
            if ours(form, text, aligned=False) != REFS[form].normalize_str(text):
                bad.append(hex(c))
                break
    assert bad == []


LOWER_REF = normalizers.Lowercase()
LOWER = build_normalizer({"type": "Lowercase"})
BERT_LOWER = build_normalizer({"type": "BertNormalizer"})
BERT_LOWER_REF = normalizers.BertNormalizer()


def test_letters_newer_than_python_are_lowercased():
    for text in ("\U00010d50", "Ab\U00010d50C\ua7cb", "\u1c89\u03a3x"):  # Garay, Rams horn, Cyrillic tie
        expected = LOWER_REF.normalize_str(text)
        assert LOWER(NormStr.of(text)).text == LOWER(NormStr.of(text, aligned=False)).text == expected
    assert LOWER(NormStr.of("\U00010d50")).text == "\U00010d70"
    assert len(case_mapping.ADDED) >= 55


uppers = st.sampled_from(sorted(case_mapping.ADDED) + ["A", "\u03a3", "\u0130", "\u1e9e", "Σ"])


@settings(max_examples=150, deadline=None)
@given(text=unicode_text() | st.lists(uppers | st.sampled_from("ab \u0301"), max_size=12).map("".join))
def test_lowercase_equals_tokenizers(text):
    expected = LOWER_REF.normalize_str(text)
    assert LOWER(NormStr.of(text)).text == expected
    assert LOWER(NormStr.of(text, aligned=False)).text == expected
    assert BERT_LOWER(NormStr.of(text)).text == BERT_LOWER_REF.normalize_str(text)


@pytest.mark.slow
@full_only
def test_lowercase_of_every_code_point():
    bad = [hex(c) for c in range(0x80, sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF
           and LOWER(NormStr.of(f"a{chr(c)}B", aligned=False)).text != LOWER_REF.normalize_str(f"a{chr(c)}B")]
    assert bad == []
