"""Hugging Face Unigram and WordLevel tokenizer.json files against `tokenizers` itself: ids of
``encode(text)`` and ``decode``, on ``udhr2_all.txt`` (a sample of lines; every line and the whole
text as one with ``TOKVIZ_FULL_PARITY=1``), the test plans, code points and generated Unicode. Two
Unigram files also run with the plain Viterbi (without numba)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from tests.core.formats.sentencepiece.spm_helpers import corpus_lines
from tests.core.formats.tokenizer_json.hf_unigram_helpers import built, from_sentencepiece, t5_like, word_level
from tests.jit_switch import jit_off
from tests.real_tokenizers import FULL, corpus, full_only, load_test_plans, unicode_text
from tokviz.core.errors import EncodeError, ModelFormatError
from tokviz.core.formats.tokenizer_json.normalizers import UnsupportedComponent
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

tk = pytest.importorskip("tokenizers")

NAMES = ("t5-like", "word-level", "sp-precompiled", "sp-byte-fallback", "t5-like python", "sp-precompiled python")
_OURS: dict = {}


@pytest.fixture(params=NAMES)
def pair(request, sp_folder):
    """(tokviz's tokenizer, tokenizers') for one file ("python": the plain Viterbi, without numba)."""
    name = request.param
    model, _, how = name.partition(" ")
    makers = {"t5-like": t5_like, "word-level": word_level,
              "sp-precompiled": lambda: from_sentencepiece(sp_folder),
              "sp-byte-fallback": lambda: from_sentencepiece(sp_folder, byte_fallback=True)}
    ref, text = built(model, sp_folder, makers[model])
    if name not in _OURS:
        if how == "python":
            with jit_off():
                _OURS[name] = HfTokenizer.from_json(json.loads(text), name=name)
            assert _OURS[name].model.lattice.compiled is None
        else:
            _OURS[name] = HfTokenizer.from_json(json.loads(text), name=name)
    return _OURS[name], ref


def test_lines_of_udhr2(pair):
    ours, ref = pair
    lines = corpus_lines(1 if FULL else 7)
    bad = [line for line in lines if ours.encode_ids(line, add_special_tokens=True) != ref.encode(line).ids]
    assert bad == [], f"{len(bad)} of {len(lines)} lines differ, first {bad[0][:60]!r}"
    sample = lines[::40]
    assert [s for s in sample if ours.encode(s).ids != ref.encode(s).ids] == []


@pytest.mark.slow
@full_only
def test_whole_udhr2_as_one_text(pair):
    ours, ref = pair
    text = corpus("udhr2_all.txt", None)
    assert ours.encode_ids(text, add_special_tokens=True) == ref.encode(text).ids


def test_test_plans_samples(pair):
    ours, ref = pair
    samples = sorted({s for _, s, _ in load_test_plans()})
    assert [s for s in samples if ours.encode(s).ids != ref.encode(s).ids] == []


def test_code_points(pair):
    """Every 37th code point (all of them with TOKVIZ_FULL_PARITY=1), in runs of 48, side by side
    and apart. None is left out: the normalizers (NFKC with Unicode 9.0's data, as tokenizers'
    crate) agree on each code point and on each run, and the ids must too."""
    ours, ref = pair
    cps = [c for c in range(1, 0x110000, 1 if FULL else 37) if not 0xD800 <= c < 0xE000]
    assert [c for c in cps if not _same_normalizer(ours, ref, chr(c))] == []
    texts = []
    for i in range(0, len(cps), 48):
        chars = [chr(c) for c in cps[i : i + 48]]
        texts += ["".join(chars), " ".join(chars)]
    assert [t for t in texts if not _same_normalizer(ours, ref, t)] == []
    bad = [t for t in texts if ours.encode_ids(t, add_special_tokens=True) != ref.encode(t).ids]
    assert bad == [], f"{len(bad)} texts differ, first {bad[0][:20]!r}"


def _same_normalizer(ours, ref, text: str) -> bool:
    """Whether tokviz's normalizer and tokenizers' give the same text."""
    if ref.normalizer is None or ours.normalizer is None:
        return True
    from tokviz.core.formats.tokenizer_json.normalizers import NormStr

    return ours.normalizer(NormStr(text, None)).text == ref.normalizer.normalize_str(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(text=unicode_text())
def test_generated_unicode(pair, text):
    ours, ref = pair
    assert _same_normalizer(ours, ref, text)
    enc = ref.encode(text)
    assert ours.encode(text).ids == enc.ids
    assert ours.decode(enc.ids) == ref.decode(enc.ids, skip_special_tokens=False)
    assert ours.decode(enc.ids, skip_special_tokens=True) == ref.decode(enc.ids)


def test_unknown_words_and_bytes(pair):
    ours, ref = pair
    for text in ["ꙮꙮꙮ abc", "🤗🤗 x", "<unk> </s>", "\u0378\u0379", "qqqqqqqqqqqqqqqqqqqqqqqqq"]:
        assert ours.encode(text).ids == ref.encode(text).ids, text
        enc = ours.encode(text)
        assert all(0 <= a <= b <= len(text) for a, b in enc.spans)


def _unigram_json(**model):
    d = {"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0], ["b", -2.0], ["ab", -2.5]],
                   **model}, "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never"}}
    return d


def test_fused_unknowns_and_no_unk_id():
    tok = HfTokenizer.from_json(_unigram_json())
    ref = tk.Tokenizer.from_str(json.dumps(_unigram_json()))
    for text in ["abxyab", "xyz", "ab", "a b"]:
        assert tok.encode(text).ids == ref.encode(text).ids
    tok = HfTokenizer.from_json(_unigram_json(unk_id=None))
    assert tok.encode_ids("abab") == [3, 3]
    with pytest.raises(EncodeError, match="unk"):
        tok.encode_ids("abx")


@pytest.mark.parametrize(("where", "component"), [
    ("normalizer", {"type": "Frobnicate"}),
    ("pre_tokenizer", {"type": "Sequence", "pretokenizers": [{"type": "Metaspace"}, {"type": "Frobnicate"}]}),
    ("decoder", {"type": "Frobnicate"}),
    ("post_processor", {"type": "Frobnicate"}),
    ("model", {"type": "Frobnicate", "vocab": {}}),
])
def test_unknown_components_are_named(where, component):
    d = _unigram_json()
    d[where] = component
    with pytest.raises(UnsupportedComponent) as err:
        HfTokenizer.from_json(d)
    assert component.get("type") in str(err.value) or "Frobnicate" in str(err.value)


@pytest.mark.parametrize("model", [
    {"type": "Unigram", "unk_id": 9, "vocab": [["a", 0.0]]},
    {"type": "Unigram", "unk_id": 0, "vocab": [["a", "x"]]},
    {"type": "Unigram", "unk_id": 0, "vocab": {"a": 1}},
    {"type": "WordLevel", "vocab": [["a", 0.0]], "unk_token": "[UNK]"},
])
def test_malformed_models_are_clear_errors(model):
    with pytest.raises(ModelFormatError):
        HfTokenizer.from_json({"model": model})
