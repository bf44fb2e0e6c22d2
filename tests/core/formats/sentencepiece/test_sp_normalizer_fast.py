"""The normalizer's fast paths against its general path (the pieces and whitespace rules with
each output character's source, ``aligned=True``), which the parity suite checks against the
`sentencepiece` library: ASCII text the charsmap leaves alone (`SpNormalizer._plain`), the
characters replaced before the rest (`SpNormalizer._context_free`), the whitespace rules applied
to the joined pieces at once (`SpNormalizer._joined`); and the pieces themselves, with the
characters a text holds read in numpy for a long one, against the library's own normalizer."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tokviz.core.formats.sentencepiece.normalizer import LONG_TEXT, SpNormalizer
from tokviz.core.loading import load_tokenizer

_SPECS = [dict(), dict(add_dummy_prefix=False), dict(remove_extra_whitespaces=False),
          dict(escape_whitespaces=False)]
# spaces and controls the charsmap maps to a space; deleted characters; characters keys start
# or continue with (combining marks, half-width kana and their voicing marks); compatibility forms
_MAPPED = ("ab  \t\n\r\x0b\x0c\x1c\x85\xa0 xyz.,-\u3000\u2581<>\u200b\ufeff\u00ad\u200d\u0301\u0308e"
           "\u0303n\uff76\uff9e\uff9f\u30ab\u3099\ufb01\u2460\uff21\u00bd\u2126\u1e9b\u0323\u4e00\u0915\u093f")
_TEXT = st.one_of(
    st.text(st.sampled_from(_MAPPED), max_size=30),
    st.text(st.characters(max_codepoint=0x7F), max_size=30),
    st.text(max_size=20),
)


@pytest.fixture(scope="module", params=["unigram-nmt", "unigram-identity"])
def normalizers(request, sp_model):
    """The model's normalizer under each change of `_SPECS`, with and without user-defined
    symbols, whitespace as a prefix or a suffix."""
    spec = load_tokenizer(sp_model(request.param)).normalizer.spec
    return [SpNormalizer(replace(spec, **change), user_defined=user, whitespace_suffix=suffix)
            for change in _SPECS for user in [(), ("<u>", "xy", " z", "x  z")] for suffix in (False, True)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT)
@example(text="a x  z b")  # a symbol's own two spaces stay: the joined pieces' rules would collapse them
@example(text="b \u2581 ")  # a ▁ of the text at the end counts as a space
def test_fast_path_equals_the_general_path(normalizers, text):
    for norm in normalizers:
        assert norm.normalize(text)[0] == norm.normalize(text, aligned=True)[0], (norm.spec, norm.suffix)


def test_the_fast_path_is_taken(sp_model):
    """Plain ASCII takes `_plain`, and so does a text once its context-free characters are
    replaced, when nothing is left for the charsmap (so the test above compares two different
    paths); a character keys continue with keeps the general path."""
    norm = load_tokenizer(sp_model("unigram-nmt")).normalizer
    calls = []
    real = norm._plain
    norm._plain = lambda text: calls.append(text) or real(text)
    assert norm.normalize("  Hello   world  ")[0] == "\u2581Hello\u2581world"
    assert norm.normalize("tab\there\u00a0 now")[0] == "\u2581tab\u2581here\u2581now"
    assert norm.normalize("cafe\u0301 au lait")[0] == norm.normalize("cafe\u0301 au lait", aligned=True)[0]
    assert calls == ["  Hello   world  ", "tab here  now", "caf\u00e9 au lait"]  # the last: the pieces joined


@pytest.mark.parametrize("suffix", [False, True])
def test_a_spec_that_keeps_spaces_escapes_them_as_they_are(sp_model, suffix):
    """No charsmap and every space kept (Llama's and Mistral's spec): `_as_is`, the general path's
    answer; a text holding a user-defined symbol keeps the general path."""
    spec = replace(load_tokenizer(sp_model("unigram-identity")).normalizer.spec, remove_extra_whitespaces=False)
    norm = SpNormalizer(spec, user_defined=("<u>",), whitespace_suffix=suffix)
    calls = []
    real = norm._as_is
    norm._as_is = lambda text: calls.append(text) or real(text)
    for text in ("  two  spaces ", "caf\u00e9 \u2581 \U0001F600", "a <u> b"):
        assert norm.normalize(text)[0] == norm.normalize(text, aligned=True)[0]
    assert norm.normalize("  a ")[0] == ("  a \u2581" if suffix else "\u2581  a ").replace(" ", "\u2581")
    assert calls == ["  two  spaces ", "caf\u00e9 \u2581 \U0001F600", "  a "]


def test_context_free_characters_are_replaced_first(sp_model):
    """Line breaks and tabs are replaced in one pass before the rest (so the comparison above
    meets that path), keys that start or continue longer ones are not."""
    norm = load_tokenizer(sp_model("unigram-nmt")).normalizer
    free = norm._free  # white box: which keys the one-pass table holds shows only in speed
    assert free["\n"] == " " and free["\t"] == " "
    assert "\u0301" not in free and "\uff9e" not in free
    assert norm.normalize("a\nb\t\tc\uff76\uff9e")[0] == norm.normalize("a\nb\t\tc\uff76\uff9e", aligned=True)[0]



# characters keys start with, continue with (vowel signs, combining marks, voicing marks) or both,
# and others beside them: the places where the pieces look a key up, or need not
_KEYED = ("ab e\u0301n\u0303\u0915\u093c\u093f\u0928\u094d\u0924\u0bca\u0b92\u0bd7\u0dd9\u0dcf"
          "\u0dca\u30ab\u3099\uff76\uff9e\u1100\u1161\u00c5\u212b\uff21\u2460\u0627\u0653\u064a")


@pytest.fixture(scope="module")
def nmt_pair(sp_model):
    spm = pytest.importorskip("sentencepiece")
    path = sp_model("unigram-nmt")
    return load_tokenizer(path).normalizer, spm.SentencePieceProcessor(model_file=str(path))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.text(st.sampled_from(_KEYED + _MAPPED), max_size=40), st.text(max_size=20)))
def test_pieces_match_the_library(nmt_pair, text):
    """A key is looked up only where one can start (a vowel sign after a consonant that starts
    none is passed by): the normalized text is the library's."""
    ours, ref = nmt_pair
    assert ours.normalize(text)[0] == ref.normalize(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.sampled_from(_KEYED + _MAPPED + "\U0001F600\ud800\U0010ffff"), max_size=60))
def test_present_characters_in_numpy_are_the_set(nmt_pair, text):
    """A long text's characters are read by code point in numpy, a block at a time (surrogates and
    the last code point included): the same characters as the set of a short one."""
    ours, _ = nmt_pair
    assert ours.present(text, long=0) == ours.present(text, long=len(text) + 1)
    assert ours.present(text, long=0, block=7) == ours.present(text, long=len(text) + 1)  # in pieces


def test_a_long_text_normalizes_as_the_library(nmt_pair):
    ours, ref = nmt_pair
    text = ("Ca\u0301fe\u0301 \u0915\u093c\u093f\u0924\u093e\u092c  \u30ab\u3099 \uff76\uff9e\u2460 ok\n" * 6000)
    assert len(text) > LONG_TEXT
    assert ours.normalize(text)[0] == ref.normalize(text)


def test_a_user_defined_symbol_is_kept_as_it_is(sp_model):
    """A symbol starting with a character no key starts with is still looked for (its ligature
    kept, where the charsmap would replace it)."""
    spec = load_tokenizer(sp_model("unigram-nmt")).normalizer.spec
    norm = SpNormalizer(spec, user_defined=("#\ufb01#",))
    for aligned in (False, True):
        assert norm.normalize("a#\ufb01# \ufb01", aligned=aligned)[0] == "\u2581a#\ufb01#\u2581fi"
