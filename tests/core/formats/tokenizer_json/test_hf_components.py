"""The tokenizer.json components the shared files do not use, against tokenizers itself: small
tokenizers are trained with the library, saved, and run by tokviz."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from tests.real_tokenizers import corpus, unicode_text
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

tk = pytest.importorskip("tokenizers")
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402


def _bpe(pre, norm=None, post=None, dec=None, **model_kw):
    tok = tk.Tokenizer(models.BPE(unk_token="[UNK]", **model_kw))
    tok.normalizer = norm
    tok.pre_tokenizer = pre
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False,
                                  continuing_subword_prefix=model_kw.get("continuing_subword_prefix") or "",
                                  end_of_word_suffix=model_kw.get("end_of_word_suffix") or "")
    tok.train_from_iterator([corpus("taylorswift.txt", 60_000), corpus("udhr2_all.txt", 30_000)], trainer)
    if post is not None:
        tok.post_processor = post
    if dec is not None:
        tok.decoder = dec
    return tok


PIPELINES = {
    "metaspace": lambda: _bpe(pre_tokenizers.Metaspace(), norm=normalizers.NFKC(), dec=decoders.Metaspace()),
    "whitespace+digits": lambda: _bpe(
        pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Digits(individual_digits=True)]),
        norm=normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()]),
        post=processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1)),
    ),
    "split+punctuation": lambda: _bpe(
        pre_tokenizers.Sequence([
            pre_tokenizers.Split(tk.Regex(r"\s+"), behavior="merged_with_next"),
            pre_tokenizers.Punctuation(behavior="contiguous"),
        ]),
        norm=normalizers.Sequence([normalizers.Strip(), normalizers.Replace("``", '"'), normalizers.NFC()]),
        post=processors.RobertaProcessing(("[SEP]", 2), ("[CLS]", 1)),
    ),
    "suffix+prefix": lambda: _bpe(
        pre_tokenizers.WhitespaceSplit(), end_of_word_suffix="</w>", continuing_subword_prefix="##",
        dec=decoders.BPEDecoder(suffix="</w>"),
    ),
    "bytelevel-prefix": lambda: _bpe(
        pre_tokenizers.ByteLevel(add_prefix_space=True), dec=decoders.ByteLevel(),
        post=processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]),
    ),
    "nfkd-isolated-digits": lambda: _bpe(
        pre_tokenizers.Sequence([pre_tokenizers.CharDelimiterSplit(" "), pre_tokenizers.Digits()]),
        norm=normalizers.NFKD(),
    ),
}
_BUILT: dict = {}


def built(name):
    if name not in _BUILT:
        ref = PIPELINES[name]()
        _BUILT[name] = (ref, HfTokenizer.from_json(json.loads(ref.to_str())))
    return _BUILT[name]


@pytest.mark.parametrize("name", PIPELINES)
def test_pipeline_on_text(name):
    ref, ours = built(name)
    for text in [corpus("taylorswift.txt", 80_000)[60_000:], corpus("udhr2_all.txt", 50_000)[30_000:],
                 "Ünïcödé ``quoted'' 12345 ﬁne ½ — x", "   leading and trailing   ", ""]:
        assert ours.encode(text).ids == ref.encode(text).ids
        assert ours.decode(ref.encode(text).ids) == ref.decode(ref.encode(text).ids, skip_special_tokens=False)


@pytest.mark.parametrize("name", PIPELINES)
@settings(max_examples=40, deadline=None)
@given(text=unicode_text())
def test_pipeline_on_generated_unicode(name, text):
    ref, ours = built(name)
    assert ours.encode(text).ids == ref.encode(text).ids
    enc = ours.encode(text)
    assert all(0 <= a <= b <= len(text) for a, b in enc.spans)


def test_added_tokens_with_options():
    ref = PIPELINES["whitespace+digits"]()
    ref.add_special_tokens([tk.AddedToken("<mask>", lstrip=True, rstrip=True)])
    ref.add_tokens([tk.AddedToken("swift", single_word=True), tk.AddedToken("ünï", normalized=True)])
    ours = HfTokenizer.from_json(json.loads(ref.to_str()))
    for text in ["Taylor  <mask>  Swift swiftly", "taylorswift <mask>", "ÜNÏcode ünï", "<mask><mask>", "a swift, b"]:
        assert ours.encode(text).ids == ref.encode(text).ids, text
        assert ours.encode(text, add_special_tokens=False).ids == ref.encode(text, add_special_tokens=False).ids
    enc = ours.encode("x <mask> y")
    mask = ours.special_tokens["<mask>"]
    assert enc.spans[enc.ids.index(mask)] == (1, 9)  # the stripped spaces belong to the token
