"""Corrupt or malicious model, tokenizer and word-count files: one line on stderr and status 2,
never a traceback, a wrong id or an allocation sized by a number the file made up."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core import TokvizError, TrainSettings, train
from tokviz.core.model_files import model_from_json, model_to_json

TEXT = "low lower lowest newer newest " * 10


def _model(tmp_path, mutate) -> str:
    tl = train(TrainSettings(merges=6, split="whitespace", units="chars"), texts=[TEXT])
    d = model_to_json(tl)
    mutate(d)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    return str(path)


def _one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _set_candidate(d, value):
    d["steps"]["rows"][2][4] = [[value, 1, 3, 0, 0]]


@pytest.mark.parametrize("mutate, message", [
    (lambda d: _set_candidate(d, 10_000), "unknown id"),
    (lambda d: _set_candidate(d, -5), "malformed candidate"),
    (lambda d: d["steps"]["rows"][0].__setitem__(0, -5), "unknown id"),
    (lambda d: d["steps"]["rows"][0].__setitem__(2, 2**64), "count out of range"),
    (lambda d: d["steps"]["rows"][0].__setitem__(2, True), "count out of range"),
    (lambda d: d.__setitem__("corpus_length", -1), "bad corpus figures"),
])
@pytest.mark.parametrize("command", [("merges",), ("encode", "--ids"), ("decode",)])
def test_corrupt_models_are_refused_by_every_command(cli, tmp_path, mutate, message, command):
    path = _model(tmp_path, mutate)
    args = [*command, path] + (["low"] if command[0] == "encode" else ["1"] if command[0] == "decode" else [])
    assert message in _one_line_error(*cli(*args))


def test_a_deeply_nested_json_file_is_one_line(cli, tmp_path):
    for name in ("tokenizer.json", "model.json"):
        path = tmp_path / name
        path.write_text('{"a":' * 100_000 + "1" + "}" * 100_000, encoding="utf-8")
        assert "nested too deeply" in _one_line_error(*cli("encode", str(path), "x"))


def _tiktoken(tmp_path, ranks) -> str:
    lines = [f"{base64.b64encode(bytes([i])).decode()} {r}" for i, r in enumerate(ranks)]
    path = tmp_path / "x.tiktoken"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return str(path)


@pytest.mark.parametrize("ranks, message", [
    ([0, 1, 99_999_999], "far beyond"),
    ([0, 1, 2**63], "far beyond"),
    ([0, -1, 2], "negative"),
    ([0, 1, 1], "appears twice"),
])
def test_tiktoken_ranks_are_bounded_by_the_file(cli, tmp_path, ranks, message):
    path = _tiktoken(tmp_path, ranks)
    assert message in _one_line_error(*cli("encode", "--ids", "--pattern", r"\w+", path, "a"))


def test_a_tokenizer_json_id_far_beyond_its_vocabulary(cli, tmp_path):
    d = {"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 99_999_999}, "unk_token": "[UNK]"}}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    assert "far beyond" in _one_line_error(*cli("encode", "--ids", str(path), "a"))


def test_a_newline_in_a_file_key_stays_on_one_line(cli, tmp_path):
    path = _model(tmp_path, lambda d: d["settings"].__setitem__("evil\nsecond line", 1))
    assert "evil\\nsecond line" in _one_line_error(*cli("merges", path))


@pytest.mark.parametrize("count", [2**63, 2**64 + 7, 10**40])
def test_word_counts_beyond_64_bits(cli, tmp_path, count):
    table = tmp_path / "counts.txt"
    table.write_text(f"low {count}\nlower 3\n", encoding="utf-8")
    line = _one_line_error(*cli("train", str(table), "--word-counts", "-o", "m.json", "--merges", "3", "--quiet"))
    assert "counts add up to more text" in line
    assert not (tmp_path / "m.json").exists()


JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
                    | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
                    max_leaves=20)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_mutation_of_a_model_is_loaded_right_or_refused_clearly(data):
    tl = train(TrainSettings(merges=4, split="whitespace", units="chars"), texts=["abab cdcd abcd"])
    d = model_to_json(tl)
    target = data.draw(st.sampled_from(["settings", "base", "steps", "corpus_length", "n_chunks", "finished"]))
    d[target] = data.draw(JSON)
    try:
        loaded = model_from_json(d)
    except TokvizError:
        return  # the CLI prints it on one line (`one_line`)
    # what loads is consistent: every merge refers to ids that exist before it
    for step in loaded.steps:
        assert 0 <= step.pair[0] < step.id and 0 <= step.pair[1] < step.id
    assert loaded.tokenizer().decode(loaded.tokenizer().encode_ordinary("abab").ids) in ("abab", "")


def test_a_corpus_too_big_for_memory_is_refused_before_training(cli, tmp_path, monkeypatch):
    from tokviz.core.bpe import timeline as bpe_timeline

    monkeypatch.setattr(bpe_timeline, "available_memory", lambda: 50_000_000)  # a small machine
    corpus = tmp_path / "line.txt"
    corpus.write_text("x" * 400_000 + "y" * 400_000, encoding="utf-8")  # one word, no spaces
    line = _one_line_error(*cli("train", str(corpus), "-o", "m.json", "--merges", "5", "--quiet"))
    assert "needs about" in line and "GB is free" in line
    assert not (tmp_path / "m.json").exists()


TOKENIZER_JSON = {
    "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 1, "##b": 2}, "unk_token": "[UNK]",
              "continuing_subword_prefix": "##", "max_input_chars_per_word": 100},
    "normalizer": {"type": "Lowercase"},
    "pre_tokenizer": {"type": "WhitespaceSplit"},
    "added_tokens": [{"id": 3, "content": "[CLS]", "special": True}],
}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_mutation_of_a_tokenizer_json_loads_or_is_refused_clearly(data):
    from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

    d = json.loads(json.dumps(TOKENIZER_JSON))
    where = data.draw(st.sampled_from([d, d["model"], d["added_tokens"][0]]))
    where[data.draw(st.sampled_from(sorted(where)))] = data.draw(JSON)
    try:
        tok = HfTokenizer.from_json(d)
    except TokvizError:
        return
    ids = tok.encode_ordinary("ab a").ids
    assert all(0 <= i < tok.n_vocab for i in ids)


@pytest.mark.parametrize("bad", [float("inf"), 3.5, True, -1, 2**64, "3"])
def test_an_added_token_id_that_is_not_a_whole_number_is_refused(bad):
    """Found by the mutation test above: an id of ``inf`` raised OverflowError past the checks."""
    from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

    d = json.loads(json.dumps(TOKENIZER_JSON))
    d["added_tokens"][0]["id"] = bad
    with pytest.raises(TokvizError, match="added token's id must be a whole number"):
        HfTokenizer.from_json(d)


def test_the_window_reports_a_corrupt_model_and_keeps_the_text(window, tmp_path, dialogs):
    window.script.set_corpus_text("my corpus")
    path = _model(tmp_path, lambda d: _set_candidate(d, 10_000))
    window.script.open_path(path)
    window.script.wait_for_file()
    assert dialogs.errors and "unknown id" in dialogs.errors[-1][1]
    assert window.corpus_panel.text() == "my corpus"
