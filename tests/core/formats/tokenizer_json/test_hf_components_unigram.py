"""The components Unigram tokenizer.json files use, on the trained T5-style model, against
`tokenizers`: Metaspace's prepend schemes and split, Prepend/Strip/Nmt/NFKD/Lowercase,
UnicodeScripts, Digits, Punctuation, CharDelimiterSplit, FixedLength; decoders CTC, Strip, Replace,
Fuse; post-processors Roberta/Bert/Template. The UnicodeScripts table is checked on code points."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from tests.core.formats.tokenizer_json.hf_unigram_helpers import built, t5_like
from tests.real_tokenizers import FULL, corpus, unicode_text
from tokviz.core.formats.tokenizer_json.normalizers import NormStr
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer
from tokviz.core.formats.tokenizer_json.unicode_scripts import UnicodeScriptsPre

tk = pytest.importorskip("tokenizers")
from tokenizers import decoders, normalizers, pre_tokenizers, processors  # noqa: E402

PIPELINES = {
    "metaspace-first-unsplit": dict(
        pre=pre_tokenizers.Metaspace(prepend_scheme="first", split=False),
        dec=decoders.Metaspace(prepend_scheme="first")),
    "prepend-strip-never": dict(
        norm=normalizers.Sequence([normalizers.Strip(), normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]),
        pre=pre_tokenizers.Metaspace(prepend_scheme="never"),
        dec=decoders.Sequence([decoders.Replace("▁", " "), decoders.Fuse(), decoders.Strip(" ", 1, 0)]),
        post=processors.RobertaProcessing(("</s>", 1), ("<pad>", 0))),
    "scripts-digits-ctc": dict(
        norm=normalizers.Sequence([normalizers.Nmt(), normalizers.NFKD(), normalizers.Lowercase()]),
        pre=pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.UnicodeScripts(),
                                     pre_tokenizers.Digits(individual_digits=True),
                                     pre_tokenizers.Punctuation(behavior="isolated"),
                                     pre_tokenizers.Metaspace()]),
        dec=decoders.CTC(pad_token="<pad>", word_delimiter_token="▁"),
        post=processors.BertProcessing(("</s>", 1), ("<pad>", 0))),
    "delimiter-fixed": dict(
        norm=normalizers.NFC(),
        pre=pre_tokenizers.Sequence([pre_tokenizers.CharDelimiterSplit("a"), pre_tokenizers.FixedLength(4)]),
        dec=decoders.Fuse(),
        post=processors.TemplateProcessing(single="<pad> $A </s> <pad>", special_tokens=[("<pad>", 0), ("</s>", 1)])),
}
_BUILT: dict = {}


@pytest.fixture(params=PIPELINES)
def pair(request, sp_folder):
    name = request.param
    if name not in _BUILT:
        base, _ = built("t5-like", sp_folder, t5_like)
        ref = tk.Tokenizer.from_str(base.to_str())
        parts = PIPELINES[name]
        ref.normalizer = parts.get("norm")
        ref.pre_tokenizer = parts.get("pre")
        ref.decoder = parts.get("dec")
        ref.post_processor = parts.get("post")
        _BUILT[name] = (HfTokenizer.from_json(json.loads(ref.to_str())), ref)
    return _BUILT[name]


def test_on_text(pair):
    ours, ref = pair
    for text in [corpus("udhr2_all.txt", 60_000)[30_000:], corpus("taylorswift.txt", 20_000),
                 "Ünïcödé ``quoted'' 12345 ﬁne ½ — x", "   leading and trailing   ", "",
                 "日本語のテキストとカタカナー123"]:
        ids = ref.encode(text).ids
        assert ours.encode(text).ids == ids
        assert ours.decode(ids) == ref.decode(ids, skip_special_tokens=False)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(text=unicode_text())
def test_on_generated_unicode(pair, text):
    ours, ref = pair
    if ours.normalizer is not None:  # the normalizers agree everywhere (Unicode 9.0 forms, as tokenizers)
        assert ours.normalizer(NormStr(text, None)).text == ref.normalizer.normalize_str(text)
    ids = ref.encode(text).ids
    assert ours.encode(text).ids == ids
    assert ours.decode(ids) == ref.decode(ids, skip_special_tokens=False)


def _scripts_ours(text: str) -> list[str]:
    return [p.text for p in UnicodeScriptsPre()([NormStr(text, None)])]


def _scripts_ref(text: str) -> list[str]:
    return [w for w, _ in pre_tokenizers.UnicodeScripts().pre_tokenize_str(text)]


def test_unicode_scripts_table_on_code_points():
    """Each code point between a Latin and a Cyrillic letter (both orders), and runs of consecutive
    code points: the same pieces as tokenizers, so the same script for every code point tested
    (every 29th; every one with TOKVIZ_FULL_PARITY=1)."""
    step = 1 if FULL else 29
    cps = [chr(c) for c in range(0x20, 0x110000, step) if not 0xD800 <= c < 0xE000]
    probes = [f"a{c}ж" for c in cps] + [f"ж{c}a" for c in cps]
    probes += ["".join(cps[i : i + 32]) for i in range(0, len(cps), 32)]
    bad = [p for p in probes if _scripts_ours(p) != _scripts_ref(p)]
    assert bad == [], f"{len(bad)} differ, first {bad[0]!r}: {_scripts_ours(bad[0])} vs {_scripts_ref(bad[0])}"
