"""``tokviz glitch MODEL``: the Glitch tokens panel's ranking from the command line, as a table,
one JSON object or a Markdown report; the corpus read as the panel reads it (its first N
characters); bad input is one line and status 2."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_file
from tokviz.core.glitch import MAX_CORPUS_CHARS, glitch_report
from tokviz.core.loading import open_timeline

# under-trained GPT-2 tokens cohere-ai/magikarp verified with the model (tests/bench/bench_glitch_recall.py)
VERIFIED = {40241: "InstoreAndOnline", 30905: "rawdownload", 39752: "quickShip", 40240: "oreAndOnline"}


@pytest.fixture(scope="module")
def gpt2():
    return str(shared_file("vocab", "gpt2-data-gym", "vocab.bpe"))


def test_json_rows_are_the_panels_ranking_on_the_corpus_start(cli, gpt2):
    corpus = shared_file("corpora", "tinyshakespeare.txt")
    code, out, err = cli("glitch", gpt2, "--corpus", str(corpus), "--max-chars", "30000", "--top", "0", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    text = corpus.read_text(encoding="utf-8")[:30000]
    report = glitch_report(open_timeline(gpt2).tokenizer(), text)  # what the panel runs on that corpus
    assert data["corpus_chars"] == 30000 == report.coverage.corpus_chars
    assert [r["id"] for r in data["rows"]] == [r.id for r in report.rows]
    assert len(data["rows"]) == data["n_tokens"] == 50256
    assert data["rows"][0]["rank"] == 1 and bytes.fromhex(data["rows"][0]["bytes"]) == report.rows[0].token


def test_the_default_table_finds_magikarps_tokens_without_a_corpus(cli, gpt2):
    code, out, _ = cli("glitch", gpt2, "--top", "20")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("No corpus text") and lines[1].split()[:2] == ["rank", "id"]
    ranked = [int(line.split()[1]) for line in lines[2:]]
    assert len(ranked) == 20 and VERIFIED.keys() <= set(ranked)


def test_the_report_has_magikarps_sections(cli, gpt2):
    code, out, _ = cli("glitch", gpt2, "--report", "--top", "10")
    assert code == 0
    for heading in ("# Glitch-token report:", "## Summary", "## Candidates (top 10 by score)",
                    "## Unreachable tokens (", "## Undecodable tokens ("):
        assert heading in out
    candidates = out.split("## Candidates")[1].split("## Unreachable")[0]
    assert sum(line.startswith("| ") and line[2].isdigit() for line in candidates.splitlines()) == 10
    assert "`oreAndOnline`" in candidates


def test_several_corpus_files_are_one_corpus_capped_at_max_chars(cli, gpt2, tmp_path):
    (tmp_path / "a.txt").write_text("é" * 700, encoding="utf-8")
    (tmp_path / "b.txt").write_text("b" * 700, encoding="utf-8")
    code, out, _ = cli("glitch", gpt2, "--corpus", "a.txt", "--corpus", "b.txt", "--max-chars", "1000",
                       "--json", "--top", "1")
    assert code == 0 and json.loads(out)["corpus_chars"] == 1000


def test_the_default_corpus_cap_is_the_panels():
    from tokviz.panels import glitch_panel

    assert glitch_panel.MAX_CORPUS_CHARS == MAX_CORPUS_CHARS


@pytest.mark.parametrize("data, words", [(b"\x00\x01binary", "binary"), (b"ok \xff\xfe", "not valid UTF-8")])
def test_a_bad_corpus_is_one_line_and_status_2(cli, gpt2, tmp_path, data, words):
    (tmp_path / "bad.txt").write_bytes(data)
    code, out, err = cli("glitch", gpt2, "--corpus", "bad.txt")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and words in err


def test_a_missing_model_is_one_line_and_status_2(cli, tmp_path):
    code, out, err = cli("glitch", str(tmp_path / "none.json"))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


def test_read_text_head_never_cuts_a_character(tmp_path):
    from tokviz.core.text.corpus import read_text_head

    path = tmp_path / "t.txt"
    path.write_text("a€😀" * 50, encoding="utf-8")
    for n in range(40):
        assert read_text_head(path, n) == ("a€😀" * 50)[:n]
