"""BoundlessBPE: the fast trainer equals the readable reference, supermerges off is plain BPE,
known answers on tinyshakespeare, cancelling, model files, and the two-pass encoder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.boundless.model_file import from_json, to_json
from tokviz.core.boundless.reference import oracle_boundless
from tokviz.core.boundless.timeline import BoundlessSettings, BoundlessTraining, train_boundless
from tokviz.core.bpe.timeline import TrainSettings, train
from tokviz.core.errors import ModelFormatError, SettingsError
from tokviz.core.registry import settings_from_json, settings_to_json, spec_of

CORPUS = Path("/work/shared/corpora/tinyshakespeare.txt")
SHAKESPEARE = CORPUS.read_text(encoding="utf-8") if CORPUS.exists() else ""
needs_corpus = pytest.mark.skipif(not SHAKESPEARE, reason="tinyshakespeare is not on this machine")


def rows(steps):
    return [(s.kind, s.pair, s.token, s.count, s.length) for s in steps]


@needs_corpus
@pytest.mark.parametrize("start, size, n, rule", [(0, 8000, 160, "letters"), (50_000, 6000, 140, "any"),
                                                  (300_000, 7000, 150, "letters")])
def test_fast_trainer_equals_the_reference(start, size, n, rule):
    text = SHAKESPEARE[start:start + size]
    texts = [text, text[:1500]]  # two texts: a run never crosses from one to the other
    ref = oracle_boundless(texts, max_steps=n, superwords=rule)
    tl = train_boundless(BoundlessSettings(merges=n, superwords=rule), texts=texts)
    assert rows(tl.steps) == [(s.kind, s.pair, s.token, s.count, s.length) for s in ref]
    assert any(s.kind == "supermerge" for s in ref)  # the slice exercises both kinds


def test_reference_and_trainer_agree_on_a_tie_and_a_chain():
    texts = ["the cat the cat the cat. a a a a a a"]
    ref = oracle_boundless(texts, max_steps=12, min_count=2, superwords="any")
    tl = train_boundless(BoundlessSettings(merges=12, superwords="any"), texts=texts)
    assert rows(tl.steps) == [(s.kind, s.pair, s.token, s.count, s.length) for s in ref]


@needs_corpus
def test_known_answer_on_tinyshakespeare():
    tl = train_boundless(BoundlessSettings(merges=400), texts=[SHAKESPEARE[:100_000]])
    assert [(s.rank, s.token.decode(), s.count) for s in tl.steps if s.kind == "supermerge"] == [
        (251, " the people", 49), (308, " to the", 39), (372, "First Citizen", 30)]
    assert [s.token.decode() for s in tl.steps[:8]] == [" t", "he", "ou", " a", " the", " s", " w", "re"]
    assert tl.length_at(400) == 41207
    # the rival count: what the winner beat (a supermerge wins ties, a merge must be higher)
    s = tl.steps[251]
    assert s.rival <= s.count and tl.steps[250].rival < tl.steps[250].count


@needs_corpus
@pytest.mark.parametrize("tie_break", ["first", "hf"])
def test_supermerges_off_is_plain_bpe(tie_break):
    text = SHAKESPEARE[:60_000]
    off = train_boundless(BoundlessSettings(merges=300, supermerges="off", tie_break=tie_break), texts=[text])
    bpe = train(TrainSettings(merges=300, tie_break=tie_break), texts=[text])
    assert [(s.pair, s.count, s.length) for s in off.steps] == [(s.pair, s.count, s.length) for s in bpe.steps]
    assert {s.kind for s in off.steps} == {"merge"}
    assert off.tokenizer().encode_ids(text) == bpe.tokenizer().encode_ids(text)


def test_a_word_table_has_no_neighbours_so_no_supermerges():
    tl = train_boundless(BoundlessSettings(merges=20), table={" of": 50, " the": 50})
    assert tl.n_supermerges == 0 and tl.n_runs == 0


@needs_corpus
def test_encoding_the_corpus_gives_the_trained_length():
    text = SHAKESPEARE[:40_000]
    tl = train_boundless(BoundlessSettings(merges=300), texts=[text])
    tok = tl.tokenizer()
    assert tl.n_supermerges > 0
    assert len(tok.encode_ids(text)) == tl.length_at(tl.n_merges)
    for k in (0, 150, tl.n_merges):  # every step, of either kind, replays
        assert len(tok.encode_ids(text, step=k)) == tl.length_at(k)
    enc = tok.encode(text[:2000])
    assert enc.ids == tok.encode_ids(text[:2000])
    assert "".join(text[a:b] for a, b in enc.spans) == text[:2000]
    supers = [i for i, t in enumerate(enc.ids) if tok.is_superword(t)]
    assert supers and all(b"".join([enc.tokens[i]]) == text[slice(*enc.spans[i])].encode() for i in supers)


def test_cancel_between_steps_keeps_what_was_made():
    run = BoundlessTraining(BoundlessSettings(merges=50), texts=["of the people by the people " * 30])
    run.prepare()
    made = []
    for step in run.steps():
        made.append(step)
        if len(made) == 5:
            break
    assert run.timeline.n_merges == 5 and not run.timeline.finished
    assert [s.rank for s in run.timeline.steps] == [0, 1, 2, 3, 4]


def test_model_file_round_trip(tmp_path):
    tl = train_boundless(BoundlessSettings(merges=40, special_tokens=("<|end|>",)),
                         texts=["of the people, by the people, for the people " * 20])
    assert tl.n_supermerges > 0
    back = from_json(json.loads(json.dumps(to_json(tl))))
    assert rows(back.steps) == rows(tl.steps) and back.settings == tl.settings
    assert [s.rival for s in back.steps] == [s.rival for s in tl.steps]
    text = "for the people<|end|>"
    assert back.tokenizer().encode(text, allowed_special="all").ids == tl.tokenizer().encode(text, allowed_special="all").ids
    assert spec_of(back).name == "boundless"
    assert settings_from_json(settings_to_json(tl.settings)) == tl.settings


@pytest.mark.parametrize("damage, message", [
    (lambda d: d["steps"]["rows"][0].__setitem__(0, "deletion"), "unknown kind"),
    (lambda d: d["steps"]["rows"][0].__setitem__(1, 10**6), "unknown id"),
    (lambda d: d.__setitem__("version", 99), "newer"),
    (lambda d: d["settings"].__setitem__("supermerges", "maybe"), "on or off"),
])
def test_a_damaged_model_file_is_a_clear_error(damage, message):
    d = to_json(train_boundless(BoundlessSettings(merges=10), texts=["of the of the of the"]))
    damage(d)
    with pytest.raises(ModelFormatError, match=message):
        from_json(d)


def test_bad_settings_are_refused():
    with pytest.raises(SettingsError, match="superword rule"):
        BoundlessSettings(superwords="digits").validate()
    with pytest.raises(SettingsError, match="either a vocabulary size or a number of merges"):
        BoundlessSettings(merges=3, vocab_size=300).validate()


_MODEL = train_boundless(BoundlessSettings(merges=120, superwords="any"),
                         texts=["I saw the cat and the dog. The cat saw the dog and I saw the cat! " * 15])


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("the cat dog I saw.! \n") + ["é", "日", "😀"]), max_size=80),
       st.integers(min_value=0, max_value=120))
def test_decode_of_encode_is_the_text(text, step):
    tok = _MODEL.tokenizer()
    enc = tok.encode(text, step=step)
    assert tok.decode(enc.ids) == text
    assert enc.ids == tok.encode_ids(text, step=step)
    assert [a for a, _ in enc.spans] == sorted(a for a, _ in enc.spans)
