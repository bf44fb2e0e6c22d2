"""Parity-aware BPE: the fast trainer against the readable reference, known answers, the hybrid's
two ends, cancelling, and the settings' checks."""

from __future__ import annotations

import pytest

from tokviz.core.bpe.timeline import TrainSettings
from tokviz.core.bpe.timeline import train as bpe_train
from tokviz.core.compare.documents import split_documents
from tokviz.core.errors import Cancelled, SettingsError
from tokviz.core.parity_bpe import GLOBAL, ParitySettings, ParityTraining, pairs, reference_train, train
from tokviz.core.registry import make_training, spec_of


@pytest.fixture
def udhr5(corpus_text) -> str:
    """The first five translations of the UDHR (57,453 characters)."""
    text = corpus_text("udhr2_all.txt")
    docs = split_documents(text)[:5]
    return "".join(text[d.start:d.end] for d in docs)


def rows(steps):
    return [(s.pair, s.id, s.token, s.count, s.length, s.served, s.saved,
             tuple((c.pair, c.count, c.first_chunk, c.first_offset) for c in s.candidates)) for s in steps]


def reference_rows(steps):
    return [(s.pair, s.id, s.token, s.count, s.length, s.served, s.saved, s.candidates) for s in steps]


def documents_of(settings: ParitySettings, text: str) -> list[dict[str, int]]:
    training = ParityTraining(settings, texts=[text])
    training.count()
    return [counts for _, counts in training.documents]


@pytest.mark.parametrize("units, merges, hybrid", [("bytes", 300, 0), ("bytes", 120, 40), ("chars", 60, 0)])
def test_fast_equals_the_reference(udhr5, units, merges, hybrid):
    settings = ParitySettings(units=units, merges=merges, hybrid=hybrid)
    fast = train(settings, texts=[udhr5])
    slow = reference_train(documents_of(settings, udhr5), units=units, max_merges=merges, hybrid=hybrid)
    assert len(fast.steps) == merges
    assert rows(fast.steps) == reference_rows(slow)


@pytest.mark.parametrize("vector_min", [1, 10**9])
@pytest.mark.parametrize("hybrid", [0, 40])
def test_both_merge_paths_equal_the_reference(udhr5, monkeypatch, vector_min, hybrid):
    # every merge vectorized, then every merge in the Python loop
    monkeypatch.setattr(pairs, "VECTOR_MIN_SITES", vector_min)
    settings = ParitySettings(merges=150, hybrid=hybrid)
    slow = reference_train(documents_of(settings, udhr5), max_merges=150, hybrid=hybrid)
    assert rows(train(settings, texts=[udhr5]).steps) == reference_rows(slow)


def test_a_global_merge_no_document_has_twice_is_made_in_every_document():
    text = "A\n  xy\n\nB\n  xy\n"  # 'xy' once in each document, twice in all of them together
    settings = ParitySettings(split="whitespace", merges=2, hybrid=1, min_count=2)
    tl = train(settings, texts=[text])
    assert tl.steps[0].token == b"xy" and tl.steps[0].saved == ((0, 1), (1, 1))
    slow = reference_train(documents_of(settings, text), max_merges=2, hybrid=1)
    assert rows(tl.steps) == reference_rows(slow)


def test_known_answer_on_five_udhr_documents(udhr5):
    tl = train(ParitySettings(merges=12), texts=[udhr5])
    assert tl.documents[:2] == ("Declaraçón Universal di Dirêtu di Hómé", "DECLARAÇON UNIVERSAL DI DIRITU DI OMIS")
    assert tl.initial == (10780, 11668, 14946, 10094, 11352) and tl.reference == 0
    assert [(s.token.decode(), s.served, s.count) for s in tl.steps] == [
        ("  ", 2, 754), (" k", 2, 653), (" m", 2, 391), (" u", 2, 378), (" ku", 2, 317), (" mu", 2, 261),
        (" ki", 2, 244), ("an", 2, 234), ("la", 2, 221), ("    ", 2, 218), ("tu", 2, 179), (" n", 2, 176)]
    hybrid = train(ParitySettings(merges=6, hybrid=4), texts=[udhr5])
    assert [(s.token.decode(), s.served, s.count) for s in hybrid.steps] == [
        ("  ", GLOBAL, 3769), ("    ", GLOBAL, 1111), (" k", GLOBAL, 869), ("di", GLOBAL, 776),
        (" m", 2, 391), (" u", 2, 378)]


def test_known_answer_by_hand():
    # B costs 13 bytes (its title is text too), A 9: 'cd' serves B (13 -> 7); A (9) gets 'aa' (-> 7);
    # on the tie (7, 7) the first document, A, gets 'aaa' (-> 5); then B (7) gets 'cdcd'
    tl = train(ParitySettings(split="whitespace", merges=4), texts=["A\n  aaab aaab\n\nB\n  cdcdcd cdcdcd\n"])
    assert tl.documents == ("A", "B")
    assert tl.initial == (9, 13)
    assert [(s.token, s.served, s.saved) for s in tl.steps] == [
        (b"cd", 1, ((1, 6),)), (b"aa", 0, ((0, 2),)), (b"aaa", 0, ((0, 2),)), (b"cdcd", 1, ((1, 2),))]


def test_every_merge_serves_the_costliest_document(udhr5):
    tl = train(ParitySettings(merges=200), texts=[udhr5])
    table = tl.costs()
    for k, s in enumerate(tl.steps):
        before = table.at(k)
        assert s.served == int(before.argmax())
        assert (table.at(k + 1) == before - [dict(s.saved).get(d, 0) for d in range(len(before))]).all()
    assert tl.costs().at(200).sum() == tl.length_at(200)


def test_hybrid_zero_is_parity_and_hybrid_budget_is_plain_bpe(udhr5):
    base = train(ParitySettings(merges=80), texts=[udhr5])
    assert rows(train(ParitySettings(merges=80, hybrid=0), texts=[udhr5]).steps) == rows(base.steps)
    everything = train(ParitySettings(merges=80, hybrid=80), texts=[udhr5])
    plain = bpe_train(TrainSettings(merges=80), texts=[udhr5])
    assert [(s.pair, s.count, s.length) for s in everything.steps] == [(s.pair, s.count, s.length) for s in plain.steps]
    assert all(s.served == GLOBAL for s in everything.steps)
    assert [s.pair for s in base.steps] != [s.pair for s in plain.steps]


def test_parity_lowers_the_gini_of_tokens_per_document(udhr5):
    parity = train(ParitySettings(merges=300), texts=[udhr5])
    plain = train(ParitySettings(merges=300, hybrid=300), texts=[udhr5])
    start = parity.parity_at(0).gini
    assert parity.parity_at(300).gini < start < plain.parity_at(300).gini  # plain BPE widens the gap here


def test_cancel_while_counting_and_between_steps(udhr5):
    training = ParityTraining(ParitySettings(merges=50), texts=[udhr5])
    with pytest.raises(Cancelled):
        training.prepare(should_stop=lambda: True)
    training = ParityTraining(ParitySettings(merges=50), texts=[udhr5])
    timeline = training.prepare()
    for k, _ in enumerate(training.steps(), start=1):
        if k == 7:
            break  # what the window's worker does when cancelled
    assert timeline.n_merges == 7 and not timeline.finished
    assert timeline.tokenizer().encode("Declaraçón", step=7).ids


def test_registry_and_settings():
    settings = ParitySettings(merges=3, hybrid=1)
    assert spec_of(settings).name == "parity-aware"
    tl = make_training(settings, texts=["A\n  abab abab\n"]).run()
    assert spec_of(tl).name == "parity-aware" and tl.n_merges == 3
    assert [s.served for s in tl.steps] == [GLOBAL, 0, 0]
    with pytest.raises(SettingsError, match="cannot be negative"):
        ParitySettings(hybrid=-1).validate()
    with pytest.raises(SettingsError, match="not on counts"):
        ParityTraining(ParitySettings(), table={"a": 1})
    assert ParitySettings.from_json(settings.to_json()) == settings
