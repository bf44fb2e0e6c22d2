"""The command line decides how many processes a command uses (`choose_processes`, once) and
passes the number down: ``encode`` writes a big text's ids and JSON in two processes when two are
chosen, in one otherwise; ``train`` counts with them; ``compare`` measures its models side by side
with them. The output is the same either way."""

from __future__ import annotations

from tests.conftest import shared_file
from tokviz.app.cli import compare as cli_compare
from tokviz.app.cli import main as cli_main


def test_encode_uses_the_processes_the_command_line_chose(cli, monkeypatch, tmp_path, corpus_text, forks):
    from tokviz.core.bpe.ranked import tokenizer as rank_bpe
    from tokviz.core.processes import halves

    monkeypatch.setattr(halves, "PARALLEL_MIN_CHARS", 50_000)
    monkeypatch.setattr(rank_bpe, "HALVES_MIN_LATIN", 50_000)  # English, cut in two from there
    path = str(shared_file("vocab", "tiktoken", "cl100k_base.tiktoken"))
    (tmp_path / "t.txt").write_text(corpus_text("gutenberg30.txt", 150_000), encoding="utf-8")
    outputs = {}
    for n in (1, 2):
        monkeypatch.setattr(cli_main, "choose_processes", lambda n=n: n)
        forks.clear()
        outputs[n] = [cli("encode", path, "-f", "t.txt", fmt) for fmt in ("--ids", "--json")]
        assert len(forks) == (0 if n == 1 else 2)  # one forked half for --ids, one for --json
    assert outputs[1] == outputs[2]
    assert [code for code, _, _ in outputs[1]] == [0, 0]


def test_train_counts_with_the_processes_the_command_line_chose(cli, monkeypatch, tmp_path, corpus_text, forks):
    from tokviz.core.text import chunks

    monkeypatch.setattr(chunks, "PARALLEL_MIN_CHARS", 1000)
    monkeypatch.setattr(chunks, "SLICE_CHARS", 20_000)
    real = chunks.fork_call
    monkeypatch.setattr(chunks, "fork_call", lambda fn: forks.append(1) or real(fn))  # imported by name there
    (tmp_path / "t.txt").write_text(corpus_text("tinyshakespeare.txt", 100_000), encoding="utf-8")
    models = {}
    for n in (1, 2):
        monkeypatch.setattr(cli_main, "choose_processes", lambda n=n: n)
        forks.clear()
        code, _, err = cli("train", "t.txt", "-o", f"m{n}.json", "--split", "gpt4", "--merges", "20", "--quiet")
        assert (code, err) == (0, "")
        assert len(forks) == n - 1
        models[n] = (tmp_path / f"m{n}.json").read_text(encoding="utf-8")
    assert models[1] == models[2]


def test_compare_measures_models_side_by_side_with_the_processes_the_command_line_chose(cli, monkeypatch, tmp_path,
                                                                                       corpus_text, forks):
    from tokviz.core.compare import side_by_side

    real = side_by_side.fork_stream
    monkeypatch.setattr(side_by_side, "fork_stream", lambda fn: forks.append(1) or real(fn))
    paths = [str(shared_file("vocab", "tiktoken", f"{name}.tiktoken")) for name in ("cl100k_base", "r50k_base")]
    (tmp_path / "t.txt").write_text(corpus_text("gutenberg30.txt", 150_000), encoding="utf-8")
    outputs = {}
    for n in (1, 2):
        monkeypatch.setattr(cli_compare, "choose_processes", lambda n=n, **_: n)
        forks.clear()
        outputs[n] = cli("compare", *paths, "-f", "t.txt", "--json")
        assert outputs[n][0] == 0
        assert len(forks) == (2 if n == 2 else 0)  # a child a model
    assert outputs[1] == outputs[2]
