"""One training entry point and one model file API for BPE, WordPiece and Unigram."""

from __future__ import annotations

import json

import pytest

from tokviz.core import ModelFormatError, SettingsError, TokvizError, TrainSettings, load_timeline, save_timeline
from tokviz.core.bpe.timeline import Timeline, Training, train
from tokviz.core.model_files import load_model, save_model
from tokviz.core.registry import (
    algorithm_of,
    empty_copy,
    make_training,
    settings_from_json,
    settings_to_json,
    snapshot,
    step_noun,
)
from tokviz.core.unigram.timeline import UnigramSettings, UnigramTimeline, UnigramTraining, train_unigram
from tokviz.core.wordpiece.timeline import WordPieceSettings, WordPieceTimeline, WordPieceTraining, train_wordpiece

CORPUS = "hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5 + "unbelievable unable believable " * 3
SETTINGS = {
    "bpe": TrainSettings(units="chars", split="whitespace", merges=12),
    "wordpiece": WordPieceSettings(merges=12),
    "unigram": UnigramSettings(vocab_size=40, seed_min_count=1),
}
TRAIN = {"bpe": train, "wordpiece": train_wordpiece, "unigram": train_unigram}


@pytest.mark.parametrize("algo", SETTINGS)
def test_make_training_picks_the_trainer_and_matches_its_train_function(algo):
    s = SETTINGS[algo]
    training = make_training(s, texts=[CORPUS])
    assert type(training) is {"bpe": Training, "wordpiece": WordPieceTraining, "unigram": UnigramTraining}[algo]
    tl = training.prepare(processes=1)
    assert tl.n_steps == 0 and training.budget is not None
    steps = list(training.steps())
    expected = TRAIN[algo](s, texts=[CORPUS])
    assert len(steps) == tl.n_steps == expected.n_steps > 0
    assert tl.token_bytes() == expected.token_bytes()
    assert algorithm_of(s) == algorithm_of(tl) == algo
    table = make_training(s, table={"hug": 10, "pug": 5, "hugs": 5}).run()
    assert table.n_steps > 0


def test_budget_counts_merges_or_rounds():
    wp = make_training(WordPieceSettings(merges=7), texts=[CORPUS])
    wp.prepare()
    assert wp.budget == 7
    un = make_training(UnigramSettings(vocab_size=40, seed_min_count=1), texts=[CORPUS])
    un.prepare()
    rounds = un.run().n_rounds
    assert un.budget == rounds  # round 0 + the prune rounds
    assert step_noun(SETTINGS["unigram"]) == "rounds" and step_noun(SETTINGS["bpe"], 1) == "merge"


def test_impossible_settings_fail_when_the_training_is_made():
    with pytest.raises(SettingsError, match="at least 256"):
        make_training(TrainSettings(vocab_size=10))
    with pytest.raises(SettingsError, match="prune fraction"):
        make_training(UnigramSettings(prune_fraction=1.5))
    with pytest.raises(SettingsError, match="cannot train"):
        make_training(object())


@pytest.mark.parametrize("algo", SETTINGS)
def test_empty_copy_and_snapshot(algo):
    tl = TRAIN[algo](SETTINGS[algo], texts=[CORPUS])
    empty = empty_copy(tl)
    assert empty.n_steps == 0 and not empty.finished and tl.n_steps > 0
    snap = snapshot(tl)
    tl.steps.append(tl.steps[-1])
    assert snap.n_steps == tl.n_steps - 1


@pytest.mark.parametrize("algo", SETTINGS)
def test_settings_json_round_trip(algo):
    d = settings_to_json(SETTINGS[algo])
    assert d["algorithm"] == algo
    assert settings_from_json(json.loads(json.dumps(d))) == SETTINGS[algo]
    legacy = SETTINGS["bpe"].to_json()  # saved before there was a choice: BPE
    assert settings_from_json(legacy) == SETTINGS["bpe"]
    with pytest.raises(SettingsError, match="unknown algorithm"):
        settings_from_json({"algorithm": "sentencepiece-bpe"})


@pytest.mark.parametrize("algo", SETTINGS)
def test_save_and_load_any_model(tmp_path, algo):
    tl = TRAIN[algo](SETTINGS[algo], texts=[CORPUS])
    path = tmp_path / f"{algo}.json"
    save_model(tl, path)
    head = path.read_bytes()[:60]
    assert {"bpe": b'"tokviz-model"', "wordpiece": b'"tokviz-wordpiece"', "unigram": b'"tokviz-unigram"'}[algo] in head
    back = load_model(path)
    assert type(back) is {"bpe": Timeline, "wordpiece": WordPieceTimeline, "unigram": UnigramTimeline}[algo]
    assert back.token_bytes() == tl.token_bytes() and back.n_steps == tl.n_steps
    tok, tok2 = tl.tokenizer(), back.tokenizer()
    assert tok.encode("unbelievable hugs").ids == tok2.encode("unbelievable hugs").ids
    assert list(tmp_path.iterdir()) == [path]  # atomic: no temporary files left


def test_bpe_files_still_load_with_load_timeline(tmp_path):
    tl = train(SETTINGS["bpe"], texts=[CORPUS])
    save_timeline(tl, tmp_path / "a.json")
    save_model(tl, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert load_timeline(tmp_path / "b.json").token_bytes() == load_model(tmp_path / "a.json").token_bytes()


def test_load_model_errors_say_what_is_wrong(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"format": "tokviz-wordpiece", "version": 99}))
    with pytest.raises(ModelFormatError, match="newer than this tokviz reads"):
        load_model(bad)
    bad.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ModelFormatError, match="not a tokviz model"):
        load_model(bad)
    bad.write_text('{"format": "tokviz-unigram", "vers')
    with pytest.raises(ModelFormatError, match="truncated"):
        load_model(bad)
    with pytest.raises(ModelFormatError, match="no such file"):
        load_model(tmp_path / "missing.json")
    tl = train_unigram(SETTINGS["unigram"], texts=[CORPUS])
    d = json.loads(json.dumps(__import__("tokviz.core.unigram.model_file", fromlist=["to_json"]).to_json(tl)))
    d["pieces"][0] = d["pieces"][1]
    bad.write_text(json.dumps(d))
    with pytest.raises(ModelFormatError, match="distinct"):
        load_model(bad)


def test_saving_something_else_is_a_clear_error(tmp_path):
    class Other:
        algorithm = "pretrained"

    with pytest.raises(TokvizError, match="pretrained"):
        save_model(Other(), tmp_path / "x.json")
    assert not list(tmp_path.iterdir())
