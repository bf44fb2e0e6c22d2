"""``tokviz train --algorithm bpe|wordpiece|unigram``; encode, decode and merges on every model kind."""

from __future__ import annotations

import json

import pytest

from tests.app.cli.usage import usage_and_error
from tokviz.core.model_files import load_model

CORPUS = ("hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5
          + "unbelievable unable believable believe able " * 4 + "\n")


@pytest.fixture(autouse=True)
def corpus_file(cli, tmp_path):
    """``c.txt`` in the folder the `cli` fixture runs in."""
    (tmp_path / "c.txt").write_text(CORPUS)


@pytest.mark.parametrize("algo, extra, kind", [
    ("bpe", ["--units", "chars", "--split", "gpt2", "--merges", "10"], "Timeline"),
    ("wordpiece", ["--merges", "10", "--max-word-chars", "20"], "WordPieceTimeline"),
    ("unigram", ["--vocab-size", "40", "--min-count", "1", "--prune-fraction", "0.3", "--em-iterations", "3"],
     "UnigramTimeline"),
])
def test_train_each_algorithm_and_round_trip(cli, tmp_path, algo, extra, kind):
    code, out, err = cli("train", "c.txt", "-o", "m.json", "--algorithm", algo, "--quiet", *extra)
    assert (code, out, err) == (0, "", "")
    tl = load_model(tmp_path / "m.json")
    assert type(tl).__name__ == kind
    if algo == "wordpiece":
        assert tl.settings.max_word_chars == 20 and tl.n_merges == 10
    if algo == "unigram":
        assert (tl.settings.prune_fraction, tl.settings.em_iterations, tl.vocab_size) == (0.3, 3, 40)
    text = "unbelievable hugs pun"
    code, ids, err = cli("encode", "m.json", text, "--ids")
    assert code == 0 and err == ""
    assert [int(i) for i in ids.split()] == tl.tokenizer().encode(text).ids
    code, out, err = cli("decode", "m.json", *ids.split())
    assert (code, out, err) == (0, text + "\n", "")


def test_encode_shows_wordpiece_and_unigram_forms(cli):
    cli("train", "c.txt", "-o", "wp.json", "--algorithm", "wordpiece", "--merges", "3", "--quiet")
    code, out, _ = cli("encode", "wp.json", "hugs")
    pieces = [line.split("\t")[1] for line in out.splitlines()]
    assert code == 0 and len(pieces) > 1 and pieces[0] == "h"
    assert all(p.startswith("##") for p in pieces[1:]) and "".join(p.lstrip("#") for p in pieces) == "hugs"
    cli("train", "c.txt", "-o", "un.json", "--algorithm", "unigram", "--vocab-size", "40", "--quiet")
    code, out, _ = cli("encode", "un.json", "hugs")
    assert out.splitlines()[0].split("\t")[1].startswith("▁")


def test_merges_prints_scores_and_rounds(cli, tmp_path):
    cli("train", "c.txt", "-o", "wp.json", "--algorithm", "wordpiece", "--merges", "2", "--quiet")
    code, out, _ = cli("merges", "wp.json")
    header, first = (line.split("\t") for line in out.splitlines()[:2])
    assert header == ["rank", "id", "left", "right", "count", "score"]
    code, out, _ = cli("merges", "wp.json", "--json")
    d = json.loads(out.splitlines()[0])
    assert d["score"] == pytest.approx(d["count"] / (d["left_count"] * d["right_count"]))
    assert code == 0 and first[4] == str(d["count"]) and float(first[5]) == pytest.approx(d["score"], rel=1e-5)
    assert first[3].startswith("##")  # the right part of a WordPiece merge is a continuation
    cli("train", "c.txt", "-o", "un.json", "--algorithm", "unigram", "--vocab-size", "40", "--quiet")
    tl = load_model(tmp_path / "un.json")
    code, out, _ = cli("merges", "un.json")
    header, *lines = out.splitlines()
    assert header.split("\t")[:3] == ["round", "vocab_size", "log_likelihood"] and len(lines) == tl.n_rounds
    assert [int(x.split("\t")[1]) for x in lines] == [r.vocab_size for r in tl.rounds]
    code, out, _ = cli("merges", "un.json", "--json")
    rounds = [json.loads(x) for x in out.splitlines()]
    assert [len(r["pruned"]) for r in rounds] == [len(r.pruned) for r in tl.rounds]


def test_step_past_the_last_round_is_an_error(cli):
    cli("train", "c.txt", "-o", "un.json", "--algorithm", "unigram", "--vocab-size", "40", "--quiet")
    code, out, err = cli("encode", "un.json", "hug", "--step", "999")
    assert code == 2 and out == "" and "past the last round" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("args, message", [
    (["--algorithm", "unigram", "--merges", "5"], "--merges applies to bpe, wordpiece"),
    (["--algorithm", "wordpiece", "--units", "chars"], "--units applies to bpe"),
    (["--algorithm", "wordpiece", "--end-of-word", "_"], "--end-of-word applies to bpe"),
    (["--algorithm", "bpe", "--seed-size", "100"], "--seed-size applies to unigram only"),
    (["--algorithm", "unigram", "--max-word-chars", "5"], "--max-word-chars applies to wordpiece only"),
    (["--algorithm", "unigram", "--prune-fraction", "1.5"], "between 0 and 1"),
    (["--algorithm", "unigram", "--vocab-size", "5"], "too small"),
    (["--algorithm", "sentencepiece"], "invalid choice"),
])
def test_bad_options_exit_2_with_one_line(cli, tmp_path, args, message):
    code, out, err = cli("train", "c.txt", "-o", "m.json", "--quiet", *args)
    assert code == 2 and out == ""
    usage, line = usage_and_error(err)
    assert message in line and (usage != "") == (message == "invalid choice")
    assert not (tmp_path / "m.json").exists()


def test_train_says_the_rounds_the_timeline_counts(cli, tmp_path):
    """Round 0 is the seed: a run whose timeline ends at round k says it trained k rounds."""
    code, _, err = cli("train", "c.txt", "-o", "un.json", "--algorithm", "unigram", "--vocab-size", "40")
    tl = load_model(tmp_path / "un.json")
    assert code == 0 and tl.last_step == tl.n_rounds - 1 >= 1
    assert err.splitlines()[-1].startswith(f"trained {tl.last_step} rounds (vocabulary {tl.vocab_size})")
