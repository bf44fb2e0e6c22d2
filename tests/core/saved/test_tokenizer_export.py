"""Exporting a trained tokviz tokenizer: tokenizer.json loads in tokenizers and .tiktoken in
tiktoken with identical ids; tokviz reads both back; what cannot be exported says why."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from tests.real_tokenizers import corpus, unicode_text
from tokviz.core import TokvizError, TrainSettings, train
from tokviz.core.loading import load_tokenizer
from tokviz.core.saved.tokenizer_export import export_tiktoken, export_tokenizer_json, tiktoken_ranks, tokenizer_json

SPLITS = ["gpt4", "gpt2", "o200k", "none", "whitespace", r"regex:\w+|\s+|[^\w\s]+"]
_TIMELINES: dict = {}


def trained(split: str, units: str = "bytes"):
    key = (split, units)
    if key not in _TIMELINES:
        text = corpus("taylorswift.txt", 40_000) + corpus("udhr2_all.txt", 20_000)
        _TIMELINES[key] = train(
            TrainSettings(units=units, split=split, merges=300, special_tokens=("<|end|>",)), texts=[text]
        )
    return _TIMELINES[key]


def sample_texts() -> list[str]:
    return [corpus("taylorswift.txt", 60_000)[40_000:], corpus("tinyshakespeare.txt", 10_000),
            corpus("udhr2_all.txt", 40_000)[20_000:], "hello 👋 wörld  \n\n 12345 it's\r\n\t", ""]


@pytest.mark.parametrize("split", SPLITS)
def test_tokenizer_json_round_trip(tmp_path, split):
    tokenizers = pytest.importorskip("tokenizers")
    timeline = trained(split)
    path = tmp_path / "tokenizer.json"
    export_tokenizer_json(timeline, path)
    ref = tokenizers.Tokenizer.from_file(str(path))
    ours = timeline.tokenizer()
    back = load_tokenizer(path)
    for text in sample_texts():
        ids = ours.encode_ordinary(text).ids
        assert ref.encode(text).ids == ids
        assert back.encode(text).ids == ids
        if split != "whitespace":  # whitespace split drops the spaces: not lossless by design
            assert ref.decode(ids) == text
    assert ref.encode("a<|end|>b").ids == ours.encode("a<|end|>b", allowed_special="all").ids


@pytest.mark.parametrize("split", SPLITS)
def test_tiktoken_round_trip(tmp_path, split):
    tiktoken = pytest.importorskip("tiktoken")
    timeline = trained(split)
    path = tmp_path / "mine.tiktoken"
    exp = export_tiktoken(timeline, path)
    assert path.is_file() and (tmp_path / "mine.tiktoken.json").is_file()
    enc = tiktoken.Encoding("mine", pat_str=exp.pattern, mergeable_ranks=exp.ranks, special_tokens=exp.special_tokens)
    from tiktoken.load import load_tiktoken_bpe

    assert load_tiktoken_bpe(str(path)) == exp.ranks
    ours = timeline.tokenizer()
    back = load_tokenizer(path)
    assert back.name == "mine"
    for text in sample_texts():
        ids = ours.encode_ordinary(text).ids
        assert enc.encode_ordinary(text) == ids
        assert back.encode_ids(text) == ids
    assert enc.encode("a<|end|>b", allowed_special="all") == ours.encode("a<|end|>b", allowed_special="all").ids


@settings(max_examples=80, deadline=None)
@given(text=unicode_text())
def test_exports_agree_on_generated_unicode(text):
    tiktoken = pytest.importorskip("tiktoken")
    tokenizers = pytest.importorskip("tokenizers")
    timeline = trained("gpt4")
    ours = timeline.tokenizer().encode_ordinary(text).ids
    exp = tiktoken_ranks(timeline)
    enc = tiktoken.Encoding("x", pat_str=exp.pattern, mergeable_ranks=exp.ranks, special_tokens={})
    hf = tokenizers.Tokenizer.from_str(json.dumps(tokenizer_json(timeline)))
    assert enc.encode_ordinary(text) == ours
    if "<|end|>" not in text:  # tokenizers recognises the added token in text
        assert hf.encode(text, add_special_tokens=False).ids == ours


def test_character_units_export_to_tokenizer_json_only(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    timeline = trained("gpt4", "chars")
    path = tmp_path / "tokenizer.json"
    export_tokenizer_json(timeline, path)
    ref = tokenizers.Tokenizer.from_file(str(path))
    ours = timeline.tokenizer()
    for text in sample_texts() + ["unseen: 漢字 ∮"]:
        assert ref.encode(text).ids == ours.encode_ordinary(text).ids
    with pytest.raises(TokvizError, match="byte-level"):
        export_tiktoken(timeline, tmp_path / "x.tiktoken")


def test_export_an_earlier_step(tmp_path):
    timeline = trained("gpt4")
    d = tokenizer_json(timeline, step=10)
    assert len(d["model"]["merges"]) == 10 and len(d["model"]["vocab"]) == 266 + 1
    exp = tiktoken_ranks(timeline, step=10)
    assert len(exp.ranks) == 266 and exp.special_tokens == {"<|end|>": 266}


def test_end_of_word_models_are_refused(tmp_path):
    timeline = train(TrainSettings(merges=20, end_of_word="</w>"), texts=[corpus("taylorswift.txt", 10_000)])
    with pytest.raises(TokvizError, match="end-of-word"):
        export_tokenizer_json(timeline, tmp_path / "t.json")
    with pytest.raises(TokvizError, match="end-of-word"):
        export_tiktoken(timeline, tmp_path / "t.tiktoken")
    assert not list(tmp_path.iterdir())


def test_merges_tiktoken_cannot_express_are_refused(monkeypatch):
    """A merge list where tiktoken's byte-rank rule takes another path has no exact .tiktoken."""
    from tokviz.core.bpe.timeline import Timeline
    from tokviz.core.bpe.trainer import MergeStep
    from tokviz.core.bpe.units import BaseVocab

    a, b, c = 97, 98, 99
    steps = [MergeStep(0, (b, c), 256, b"bc", 1, 1), MergeStep(1, (a, b), 257, b"ab", 1, 1),
             MergeStep(2, (257, c), 258, b"abc", 1, 1)]
    timeline = Timeline(TrainSettings(), BaseVocab("bytes"), steps)
    with pytest.raises(TokvizError, match="merge 2 joins"):
        tiktoken_ranks(timeline)
    assert len(tiktoken_ranks(timeline, step=2).ranks) == 258
    dup = Timeline(TrainSettings(), BaseVocab("bytes"), steps[:2] + [MergeStep(2, (a, 256), 258, b"abc", 1, 1),
                                                                   MergeStep(3, (257, c), 259, b"abc", 1, 1)])
    with pytest.raises(TokvizError, match="made twice"):
        tokenizer_json(dup)


def test_export_problem_names_what_cannot_be_exported(tmp_path):
    from tokviz.core.loading import open_timeline
    from tokviz.core.saved.tokenizer_export import export_problem, export_timeline
    from tokviz.core.unigram.timeline import UnigramSettings, train_unigram
    from tokviz.core.wordpiece.timeline import WordPieceSettings, train_wordpiece

    text = corpus("taylorswift.txt", 5_000)
    bpe = trained("gpt4")
    assert export_problem(bpe, "hf") is None and export_problem(bpe, "tiktoken") is None
    assert "byte-level" in export_problem(trained("gpt4", "chars"), "tiktoken")
    assert export_problem(trained("gpt4", "chars"), "hf") is None
    assert "'##'" in export_problem(train_wordpiece(WordPieceSettings(merges=5), texts=[text]))
    assert export_problem(train_unigram(UnigramSettings(vocab_size=80), texts=[text])).startswith("Unigram")
    done = export_timeline(bpe, tmp_path / "t.json", step=5)
    assert (done.files, done.n_tokens, done.n_merges) == ((tmp_path / "t.json",), 262, 5)
    loaded = open_timeline(tmp_path / "t.json")
    assert "loaded from" in export_problem(loaded, "hf")
    with pytest.raises(TokvizError, match="loaded from"):
        export_timeline(loaded, tmp_path / "again.json")
    (tmp_path / "x.tiktoken.json").mkdir()  # the sidecar cannot be written: no ranks file either
    with pytest.raises(TokvizError, match="cannot write"):
        export_timeline(bpe, tmp_path / "x.tiktoken", "tiktoken")
    assert not (tmp_path / "x.tiktoken").exists()
