"""The trainer's two merge paths (a plain loop for rare pairs, numpy for frequent ones) must give
identical timelines, and both must match the slow oracle, including overlapping runs."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tokviz.core.bpe.trainer as train_bpe
from tokviz.core import Training, TrainSettings
from tokviz.core.bpe.reference import oracle_counts, oracle_train

LOOP_ONLY = 10**12
VECTOR_ONLY = 1


def _timeline(monkeypatch, threshold: int, texts, **settings):
    monkeypatch.setattr(train_bpe, "VECTOR_MIN_SITES", threshold)
    steps = Training(TrainSettings(**settings), texts=texts).run().steps
    return [(s.pair, s.count, s.length, s.candidates) for s in steps]


def _oracle(texts, *, split, merges, units="bytes", end_of_word=None, min_count=2):
    steps = oracle_train(oracle_counts(texts, split), units=units, end_of_word=end_of_word,
                         max_merges=merges, min_count=min_count)
    return [(s.pair, s.count, s.length) for s in steps]


RUNS = [
    "a" * 257 + "b" + "a" * 64,  # long overlapping runs: "aaaa" -> "aa aa"
    "ab" * 300 + "abab aba bab " * 80,  # touching sites: "a b a b" -> "X X"
    ("low lower lowest newer newest " * 120),
]


@pytest.mark.parametrize("text", RUNS)
@pytest.mark.parametrize("split", ["none", "whitespace", "gpt4"])
def test_vector_and_loop_paths_agree_with_oracle(monkeypatch, text, split):
    loop = _timeline(monkeypatch, LOOP_ONLY, [text], split=split, merges=40)
    vector = _timeline(monkeypatch, VECTOR_ONLY, [text], split=split, merges=40)
    assert loop == vector
    assert [(p, c, n) for p, c, n, _ in loop] == _oracle([text], split=split, merges=40)


def test_paths_agree_on_real_text_with_chars_and_marker(monkeypatch, corpus_text):
    text = corpus_text("udhr2_all.txt", 40_000)
    kw = dict(split="whitespace", units="chars", end_of_word="</w>", merges=120)
    loop = _timeline(monkeypatch, LOOP_ONLY, [text], **kw)
    assert loop == _timeline(monkeypatch, VECTOR_ONLY, [text], **kw)
    assert [(p, c, n) for p, c, n, _ in loop] == _oracle(
        [text], split="whitespace", units="chars", end_of_word="</w>", merges=120)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab c", min_size=1, max_size=40), min_size=1, max_size=6),
       st.sampled_from(["none", "whitespace"]))
def test_random_small_corpora_both_paths_match_oracle(texts, split):
    assume(any(t.strip() for t in texts))
    default = train_bpe.VECTOR_MIN_SITES
    expected = _oracle(texts, split=split, merges=25, min_count=1)
    for threshold in (LOOP_ONLY, VECTOR_ONLY):
        train_bpe.VECTOR_MIN_SITES = threshold
        try:
            got = Training(TrainSettings(split=split, merges=25, min_count=1), texts=texts).run().steps
        finally:
            train_bpe.VECTOR_MIN_SITES = default
        assert [(s.pair, s.count, s.length) for s in got] == expected
