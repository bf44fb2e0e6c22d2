"""SuperBPE: stage 1 is plain BPE, stage 2 merges across spaces; the fast trainer equals the reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokviz.core.bpe.timeline import TrainSettings, train
from tokviz.core.errors import ModelFormatError, SettingsError
from tokviz.core.registry import make_training, spec_of
from tokviz.core.superbpe import model_file
from tokviz.core.superbpe.reference import oracle_stage_two_split, oracle_superbpe
from tokviz.core.superbpe.split import STAGE_TWO
from tokviz.core.superbpe.timeline import SuperBpeSettings, SuperBpeTraining, is_superword

SHAKESPEARE = Path(__file__).resolve().parents[4] / "shared" / "corpora" / "tinyshakespeare.txt"


@pytest.fixture(scope="module")
def text() -> str:
    if not SHAKESPEARE.exists():
        pytest.skip("tinyshakespeare.txt is not in ../shared/corpora")
    return SHAKESPEARE.read_text(encoding="utf-8")[:100_000]


def superbpe(text: str, **kw):
    return SuperBpeTraining(SuperBpeSettings(**kw), texts=[text]).run()


@pytest.mark.parametrize("units, split", [("bytes", "gpt4"), ("chars", "gpt2"), ("bytes", "o200k")])
def test_first_t_merges_are_plain_bpes(text, units, split):
    tl = superbpe(text, merges=260, transition=200, units=units, split=split)
    plain = train(TrainSettings(merges=200, units=units, split=split), texts=[text])
    assert tl.transition == 200 and tl.n_merges == 260
    assert tl.steps[:200] == plain.steps
    assert not any(is_superword(s.token) for s in tl.steps[:200])


def test_known_answer_on_tinyshakespeare(text):
    tl = superbpe(text, merges=230, transition=200)
    assert [s.token for s in tl.steps[200:212]] == [
        b". ", b", and", b"MENENIUS:\n", b"CORIOLANUS:\n", b"s,", b"\nW", b"SICINIUS:\n", b"A:\n",
        b".\n\nMENENIUS:\n", b".\n\nCORIOLANUS:\n", b"BRUTUS:\n", b", s"]
    assert [s.count for s in tl.steps[200:203]] == [117, 114, 112]
    assert [s.token for s in tl.steps if is_superword(s.token)] == [
        b", and", b", s", b", I", b"' the"]


@pytest.mark.parametrize("units", ["bytes", "chars"])
def test_fast_trainer_equals_reference(text, units):
    part = text[:15_000] + " 12345 ... ok!! a  b\t c\r\n"
    tl = superbpe(part, merges=140, transition=60, units=units)
    ref, n1 = oracle_superbpe([part], transition=60, max_merges=140, units=units)
    assert n1 == tl.transition == 60
    fast = [(s.pair, s.id, s.token, s.count, s.length,
             tuple((c.pair, c.count, c.first_chunk, c.first_offset) for c in s.candidates)) for s in tl.steps]
    assert fast == [(s.pair, s.id, s.token, s.count, s.length, s.candidates) for s in ref]


def test_stage_two_split_is_the_authors_isolated_split(text):
    samples = [text[:5000], "Hello, world!! By 2025 it is  here...\n/ ok", "a  \t b 1234567 ??\r\n// x", ""]
    for s in samples:
        assert STAGE_TWO.chunks(s) == oracle_stage_two_split(s)
        assert "".join(STAGE_TWO.chunks(s)) == s


def test_no_budget_and_early_stage_one_end():
    run = SuperBpeTraining(SuperBpeSettings(transition=50), texts=["ab cd"] * 3)
    tl = run.run()  # stage 1 runs dry after 3 merges; stage 2 starts there
    assert (tl.transition, [s.token for s in tl.steps], tl.finished) == (3, [b"ab", b" c", b" cd", b"ab cd"], True)
    assert [s.rank for s in tl.steps] == [0, 1, 2, 3] and tl.steps[3].id == 256 + 3


def test_encoding_replays_training(text):
    tl = superbpe(text[:30_000], merges=200, transition=120)
    tok = tl.tokenizer()
    plain = train(TrainSettings(merges=120), texts=[text[:30_000]]).tokenizer()
    sample = text[:30_000]
    for k in (0, 1, 50, 120):  # up to the transition: plain BPE's tokens
        assert tok.encode(sample, step=k).ids == plain.encode(sample, step=k).ids
    for k in (121, 150, 200):  # after it: as long as training's corpus at step k
        enc = tok.encode(sample, step=k)
        assert len(enc.ids) == tl.steps[k - 1].length
        assert tok.decode(enc.ids) == sample
        assert [sample[a:b].encode() for a, b in enc.spans] == enc.tokens


def test_cancel_between_steps_keeps_the_steps_made(text):
    run = SuperBpeTraining(SuperBpeSettings(merges=300, transition=100), texts=[text[:30_000]])
    run.prepare()
    made = []
    for step in run.steps():
        made.append(step)
        if len(made) == 150:  # in stage 2
            break
    assert run.timeline.n_merges == 150 and not run.timeline.finished
    assert run.timeline.steps[100:] == made[100:]


def test_model_file_round_trip(text):
    tl = superbpe(text[:20_000], merges=120, transition=80, special_tokens=("<|end|>",))
    spec = spec_of(tl)
    assert spec.name == "superbpe" and spec_of(tl.settings) is spec
    assert spec_of(TrainSettings()).name == "bpe"
    d = spec.to_json(tl)
    back = spec.from_json(d)
    assert (back.steps, back.transition, back.settings, back.base) == (tl.steps, tl.transition, tl.settings, tl.base)
    assert back.tokenizer().encode("the people, and <|end|>", allowed_special="all").ids == \
        tl.tokenizer().encode("the people, and <|end|>", allowed_special="all").ids
    with pytest.raises(ModelFormatError, match="transition"):
        model_file.from_json({**d, "transition": 500})
    with pytest.raises(ModelFormatError, match="SuperBPE"):
        model_file.from_json({**d, "format": "tokviz-model"})


@pytest.mark.parametrize("kw, message", [
    ({"split": "whitespace"}, "keeps every character"),
    ({"split": "none"}, "keeps every character"),
    ({"end_of_word": "_"}, "end-of-word"),
    ({"transition": -1}, "transition"),
    ({"merges": 10, "transition": 20}, "at most 10"),
])
def test_settings_that_cannot_work(kw, message):
    with pytest.raises(SettingsError, match=message):
        make_training(SuperBpeSettings(**kw), texts=["a b"])
