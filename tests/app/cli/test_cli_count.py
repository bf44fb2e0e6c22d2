"""``tokviz count`` and ``tokviz train --counts``: counting where the corpus lives and training here
gives the same model as training from the text, for every algorithm; shards add up."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_file


@pytest.fixture(scope="module")
def halves(tmp_path_factory):
    text = shared_file("corpora", "tinyshakespeare.txt").read_text(encoding="utf-8")
    tmp = tmp_path_factory.mktemp("halves")
    (tmp / "a.txt").write_text(text[:60_000], encoding="utf-8")
    (tmp / "b.txt").write_text(text[60_000:100_000], encoding="utf-8")
    return tmp


def _merges(cli, model):
    code, out, _ = cli("merges", str(model), "--json")
    assert code == 0
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("algorithm, size", [("bpe", 600), ("wordpiece", 400), ("unigram", 400)])
def test_training_from_count_shards_equals_training_from_the_text(cli, halves, tmp_path, algorithm, size):
    pytest.importorskip("pyarrow")
    a, b = str(halves / "a.txt"), str(halves / "b.txt")
    assert cli("count", a, "-o", "a.parquet", "--split", "gpt2")[0] == 0
    assert cli("count", b, "-o", "b.tsv", "--split", "gpt2")[0] == 0
    common = ("--algorithm", algorithm, "--vocab-size", str(size), "--quiet")
    assert cli("train", a, b, "-o", "text.json", "--split", "gpt2", *common)[0] == 0
    code, _, err = cli("train", "--counts", "a.parquet", "b.tsv", "-o", "counts.json", *common)  # split from the files
    assert code == 0, err
    assert _merges(cli, tmp_path / "counts.json") == _merges(cli, tmp_path / "text.json")


def test_count_says_what_it_wrote_and_the_file_declares_its_split(cli, halves, tmp_path):
    code, out, err = cli("count", str(halves / "b.txt"), "-o", "b.tsv", "--split", "o200k", "--special", "KING")
    assert code == 0 and out == "" and "pre-tokens" in err and "b.tsv" in err
    lines = (tmp_path / "b.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "#tokviz-counts v1\tsplit=o200k" and not any(x.startswith("KING\t") for x in lines)


@pytest.mark.parametrize("argv, words", [
    (("train", "-o", "m.json"), "give text FILEs or --counts"),
    (("train", "x.txt", "--counts", "c.tsv", "-o", "m.json"), "not both"),
    (("train", "--counts", "c.tsv", "-o", "m.json", "--split", "gpt4"), "made with --split gpt2"),
    (("train", "--counts", "missing.tsv", "-o", "m.json"), "missing.tsv"),
    (("train", "--counts", "huge.tsv", "-o", "m.json"), "characters training counts"),
    (("count", "x.txt", "-o", "c2.tsv", "--split", "regex:("), "regex"),
])
def test_mistakes_are_one_line_and_status_2(cli, tmp_path, argv, words):
    (tmp_path / "x.txt").write_text("some text", encoding="utf-8")
    (tmp_path / "c.tsv").write_text("#tokviz-counts v1\tsplit=gpt2\nsome\t1\n", encoding="utf-8")
    (tmp_path / "huge.tsv").write_text("some\t99999999999999999999999999\n", encoding="utf-8")
    code, out, err = cli(*argv)
    assert code == 2 and words in err and len(err.strip().splitlines()) <= 2  # (a usage line, then the one line)
