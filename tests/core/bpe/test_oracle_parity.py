"""The incremental trainer makes exactly the merges of the slow oracle (tokviz/core/bpe/reference.py).

Same pairs, ids, token bytes, counts, corpus lengths and candidate lists, on slices of the shared
corpora and on random small corpora, through both merge paths of the trainer (site by site and
vectorized).
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokviz.core.bpe.trainer as train_bpe
from tokviz.core import CorpusError, Training, TrainSettings, train
from tokviz.core.bpe.reference import oracle_counts, oracle_table_counts, oracle_train

HYPOTHESIS = settings(max_examples=120, deadline=None, database=None)


def records(steps) -> list[tuple]:
    """Trainer steps as plain tuples, comparable with the oracle's."""
    return [
        (
            s.pair,
            s.id,
            s.token,
            s.count,
            s.length,
            tuple((c.pair, c.count, c.first_chunk, c.first_offset) for c in s.candidates),
        )
        for s in steps
    ]


def oracle_records(steps) -> list[tuple]:
    return [(s.pair, s.id, s.token, s.count, s.length, s.candidates) for s in steps]


def assert_same_merges(got: list[tuple], expected: list[tuple]) -> None:
    """Compare step by step so a failure names the first differing merge."""
    for rank, (g, e) in enumerate(zip(got, expected)):
        assert g == e, f"merge {rank} differs: trainer {g} != oracle {e}"
    assert len(got) == len(expected), f"trainer made {len(got)} merges, oracle {len(expected)}"


# corpus, characters, units, split, end-of-word marker, merges (None: until min count stops it)
REAL_CASES = [
    ("tinyshakespeare.txt", 40_000, "bytes", "gpt2", None, 120),
    ("tinyshakespeare.txt", 40_000, "chars", "whitespace", "</w>", 120),
    ("tinyshakespeare.txt", 30_000, "chars", "gpt2", "_", 100),
    ("tinyshakespeare.txt", 6_000, "chars", "gpt4", None, None),
    ("taylorswift.txt", 40_000, "bytes", "gpt4", "</w>", 120),
    ("taylorswift.txt", 20_000, "chars", "none", None, 60),
    ("taylorswift.txt", 30_000, "bytes", "o200k", None, 100),
    ("udhr2_all.txt", 25_000, "bytes", "none", None, 60),
    ("udhr2_all.txt", 30_000, "chars", "gpt4", None, 120),
    ("udhr2_all.txt", 30_000, "bytes", "whitespace", "_", 100),
    ("udhr2_all.txt", 8_000, "bytes", "gpt4", "</w>", None),
]


@pytest.mark.parametrize(
    ("corpus", "n", "units", "split", "eow", "merges"),
    REAL_CASES,
    ids=[f"{c.split('.')[0]}-{n // 1000}k-{u}-{s}-{e or 'noeow'}-{m or 'all'}" for c, n, u, s, e, m in REAL_CASES],
)
def test_trainer_matches_oracle_on_real_corpora(corpus_text, corpus, n, units, split, eow, merges):
    text = corpus_text(corpus, n)
    settings_ = TrainSettings(units=units, split=split, end_of_word=eow, merges=merges)
    timeline = train(settings_, texts=[text])
    counts = oracle_counts([text], split)
    expected = oracle_train(counts, units=units, end_of_word=eow, max_merges=merges)
    assert_same_merges(records(timeline.steps), oracle_records(expected))
    assert timeline.n_chunks == len(counts)
    if merges is not None:
        assert timeline.n_merges == merges  # these slices have enough repeated pairs
    # replaying: encoding the training text with the first k merges gives the corpus length
    # the trainer reported after merge k
    if split != "whitespace":  # whitespace drops the spaces: the text is not the corpus
        tok = timeline.tokenizer()
        for k in (0, 1, timeline.n_merges // 2, timeline.n_merges):
            assert len(tok.encode(text, step=k).ids) == timeline.length_at(k)


def test_trainer_matches_oracle_on_several_texts_with_specials(corpus_text):
    text = corpus_text("tinyshakespeare.txt", 30_000)
    texts = [part.replace("\n\n", "<|endoftext|>") for part in (text[:12_000], text[12_000:20_000], text[20_000:])]
    s = TrainSettings(units="bytes", split="gpt4", merges=80, special_tokens=("<|endoftext|>", "<|pad|>"))
    timeline = train(s, texts=texts)
    expected = oracle_train(oracle_counts(texts, "gpt4", s.special_tokens), max_merges=80)
    assert_same_merges(records(timeline.steps), oracle_records(expected))
    assert all(b"<|endoftext|>" not in st.token for st in timeline.steps)


def test_trainer_matches_oracle_on_a_word_table(corpus_text):
    words = corpus_text("taylorswift.txt", 60_000).split()
    table = dict(Counter(words))  # order of first appearance
    for units, split, eow in [("chars", "gpt4", None), ("bytes", "whitespace", "</w>")]:
        s = TrainSettings(units=units, split=split, end_of_word=eow, merges=100, word_counts=True)
        timeline = Training(s, table=table).run()
        expected = oracle_train(oracle_table_counts(table, split), units=units, end_of_word=eow, max_merges=100)
        assert_same_merges(records(timeline.steps), oracle_records(expected))


@pytest.mark.parametrize("vector_min_sites", [1, 3, None])
def test_both_merge_paths_match_oracle_on_real_text(corpus_text, monkeypatch, vector_min_sites):
    if vector_min_sites is not None:  # force the numpy path for (nearly) every merge
        monkeypatch.setattr(train_bpe, "VECTOR_MIN_SITES", vector_min_sites)
    text = corpus_text("tinyshakespeare.txt", 12_000)
    timeline = train(TrainSettings(units="bytes", split="none", merges=80), texts=[text])
    expected = oracle_train(oracle_counts([text], "none"), max_merges=80)
    assert_same_merges(records(timeline.steps), oracle_records(expected))


# -- random corpora ---------------------------------------------------------------------------

# Few distinct symbols, so there are many repeated and overlapping pairs and many ties.
small_text = st.text(alphabet=st.sampled_from("aab b\n\u00e9\u20ac"), max_size=40)


@pytest.mark.parametrize("vector_min_sites", [1, None])
@given(
    texts=st.lists(small_text, min_size=1, max_size=3),
    units=st.sampled_from(["bytes", "chars"]),
    split=st.sampled_from(["none", "whitespace", "gpt2", "gpt4", "o200k"]),
    eow=st.sampled_from([None, "_", "a", "</w>"]),
    min_count=st.integers(1, 3),
)
@HYPOTHESIS
def test_trainer_matches_oracle_on_random_corpora(vector_min_sites, texts, units, split, eow, min_count):
    counts = oracle_counts(texts, split)
    s = TrainSettings(units=units, split=split, end_of_word=eow, min_count=min_count)
    with pytest.MonkeyPatch.context() as mp:
        if vector_min_sites is not None:
            mp.setattr(train_bpe, "VECTOR_MIN_SITES", vector_min_sites)
        if not counts:
            with pytest.raises(CorpusError, match="no text to train on"):
                train(s, texts=texts)
            return
        timeline = train(s, texts=texts)
    expected = oracle_train(counts, units=units, end_of_word=eow, min_count=min_count)
    assert_same_merges(records(timeline.steps), oracle_records(expected))
    assert timeline.finished


@given(
    table=st.dictionaries(st.text(alphabet="abc ", min_size=1, max_size=8), st.integers(0, 30), max_size=8),
    units=st.sampled_from(["bytes", "chars"]),
    eow=st.sampled_from([None, "_"]),
)
@HYPOTHESIS
def test_word_tables_match_oracle(table, units, eow):
    counts = oracle_table_counts(table, "gpt4")
    s = TrainSettings(units=units, split="gpt4", end_of_word=eow, word_counts=True)
    if not counts:
        with pytest.raises(CorpusError, match="no text to train on"):
            Training(s, table=table).run()
        return
    timeline = Training(s, table=table).run()
    expected = oracle_train(counts, units=units, end_of_word=eow)
    assert_same_merges(records(timeline.steps), oracle_records(expected))
