"""The command line as people type it: options after the positionals, help that says what every
argument is and what it defaults to, the usage on a mistyped option, merges and tokens that show
their spaces, encodings found by name in ``$TOKVIZ_VOCAB_DIR``, ``--help``/``--version`` that load
no command, and a word on stderr while numba compiles the Unigram kernels."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys

import pytest

from tests.app.cli.usage import usage_and_error
from tests.conftest import shared_file
from tokviz.app.cli.main import main
from tokviz.core import jit
from tokviz.core.registry import SPECS

CORPUS = "the cat sat on the mat; the cat ate the rat\n" * 20


@pytest.fixture
def bpe_model(tmp_path, cli):
    (tmp_path / "c.txt").write_text(CORPUS)
    assert cli("train", "c.txt", "-o", "m.json", "--merges", "12", "--quiet") == (0, "", "")
    return "m.json"


def help_of(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


def help_entries(text: str) -> dict[str, str]:
    """``{"--vocab-size": "the vocabulary size ...", "MODEL": "...", ...}`` from argparse's help."""
    entries: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        head = re.match(r"^  (-\S+|[A-Z][A-Z.]*)(?:[ ,][^ ].*?)?(?: {2,}(.*))?$", line)
        if head:
            name = head.group(1).split(",")[0]
            entries[name] = head.group(2) or ""
        elif name is not None and line.startswith(" " * 10):
            entries[name] = (entries[name] + " " + line.strip()).strip()
        else:
            name = None
    return entries


# -- options anywhere -------------------------------------------------------------------------


def test_options_may_follow_the_positionals(cli, tmp_path, bpe_model):
    ids = cli("encode", "--ids", bpe_model, "the cat")
    assert ids[0] == 0 and ids[1].split()
    assert cli("encode", bpe_model, "--ids", "the cat") == ids  # was "unrecognized arguments: the cat"
    assert cli("encode", bpe_model, "--step", "0", "the cat", "--ids")[1].split() == [str(b) for b in b"the cat"]
    (tmp_path / "c2.txt").write_text("a rat sat\n")
    assert cli("train", "c.txt", "-o", "two.json", "--merges", "3", "c2.txt", "--quiet") == (0, "", "")
    assert cli("decode", "two.json", "116", "--", "104")[1] == "th\n"


# -- help -------------------------------------------------------------------------------------


def test_train_help_says_what_every_argument_is_and_its_default(capsys):
    from tokviz.app.cli.algorithms import declared_options

    entries = help_entries(help_of(capsys, "train"))
    assert {"FILE", "-o", "--vocab-size", "--merges", "--special", "--seed-size"} <= set(entries)
    assert all(text for text in entries.values()), {k: v for k, v in entries.items() if not v}
    flags = {decl[0][2].flag for decl in declared_options().values()} | {"--algorithm", "--encoding-errors"}
    assert [f for f in sorted(flags) if "(default" not in entries[f]] == []
    # the budget when none is given: a number for Unigram, what "none" means for BPE and WordPiece
    assert "unigram 8000" in entries["--vocab-size"] and "no limit" in entries["--vocab-size"]
    # every algorithm's default, the BPE family's named together: "bpe, superbpe and boundless gpt4"
    assert re.search(r"\(default: bpe(, [a-z-]+)*( and [a-z-]+)? gpt4; wordpiece and unigram whitespace\)",
                     entries["--split"]), entries["--split"]


@pytest.mark.parametrize("command", ["encode", "decode", "merges", "compare", "export", "animate", "chat"])
def test_model_is_described(capsys, command):
    entries = help_entries(help_of(capsys, command))
    assert len(entries["MODEL"]) > 20, entries


def test_encode_help_says_what_each_format_prints(capsys):
    entries = help_entries(help_of(capsys, "encode"))
    assert entries["--tokens"] and entries["--ids"] and entries["--json"] and entries["TEXT"]


# -- mistakes ---------------------------------------------------------------------------------


def test_a_mistyped_option_prints_the_usage_then_one_line(cli, bpe_model):
    code, out, err = cli("encode", bpe_model, "--idz", "the cat")
    usage, line = usage_and_error(err)
    assert (code, out) == (2, "")
    assert usage.startswith("usage: tokviz encode ") and "--ids" in usage
    assert line == "tokviz encode: unrecognized arguments: --idz the cat; did you mean --ids?"
    code, _, err = cli("--frobnicate")
    assert code == 2 and usage_and_error(err)[0].startswith("usage: tokviz ")


def test_mistakes_a_command_finds_stay_one_line(cli, bpe_model):
    code, _, err = cli("encode", bpe_model, "abc", "-f", "c.txt")
    assert code == 2 and usage_and_error(err) == ("", "tokviz encode: give TEXT or -f FILE, not both")


# -- what merges and --tokens print -----------------------------------------------------------


def test_merges_prints_a_header_and_shows_spaces(cli, bpe_model):
    code, out, err = cli("merges", bpe_model)
    assert (code, err) == (0, "")
    header, *rows = out.splitlines()
    assert header == "rank\tid\tleft\tright\tcount"
    assert len(rows) == 12 and all(len(r.split("\t")) == 5 for r in rows)
    pairs = [tuple(r.split("\t")[2:4]) for r in rows]
    assert ("␣", "the") in pairs and not any(" " in a + b for a, b in pairs)  # a space is seen, not guessed
    code, out, _ = cli("merges", bpe_model, "--json")  # the machine-readable form: no header, bytes in hex
    assert out.splitlines()[0].startswith("{") and len(out.splitlines()) == 12


def test_tokens_prints_the_tokens_on_one_line(cli, bpe_model):
    table = cli("encode", bpe_model, "the cat\nsat")[1]
    tokens = cli("encode", bpe_model, "the cat\nsat", "--tokens")[1]
    assert tokens != table and tokens.count("\n") == 1
    assert tokens.rstrip("\n").split(" ") == [
        line.split("\t")[1].replace(" ", "␣").replace("\\n", "↵") for line in table.splitlines()]
    assert "␣cat" in tokens.split(" ")


# -- encodings by name ------------------------------------------------------------------------


@pytest.fixture
def vocab_dir(tmp_path, monkeypatch):
    """An empty tiktoken cache (and no way to download), and a classroom folder for the files."""
    folder = tmp_path / "classroom-vocab"
    folder.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    for proxy in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(proxy, "http://127.0.0.1:9")  # a download attempt fails at once
    monkeypatch.setenv("TOKVIZ_VOCAB_DIR", os.pathsep.join([str(tmp_path / "nowhere"), str(folder)]))
    return folder


def test_the_vocab_dir_serves_encoding_names(cli, vocab_dir):
    src = shared_file("vocab", "tiktoken", "cl100k_base.tiktoken")
    (vocab_dir / "cl100k_base.tiktoken").write_bytes(src.read_bytes())
    assert cli("encode", "cl100k_base", "hello world", "--ids") == (0, "15339 1917\n", "")
    code, _, err = cli("encode", "o200k_base", "hello world", "--ids")  # not there: the error says where to put it
    assert code == 2 and "TOKVIZ_VOCAB_DIR" in usage_and_error(err)[1]


def test_a_wrong_file_in_the_vocab_dir_is_named(cli, vocab_dir):
    (vocab_dir / "o200k_base.tiktoken").write_text("not the file\n")
    code, out, err = cli("encode", "o200k_base", "hello", "--ids")
    assert (code, out) == (2, "")
    line = usage_and_error(err)[1]
    assert "o200k_base.tiktoken" in line and "sha256" in line


# -- start-up ---------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_no_command(tmp_path, flag):
    code = (
        "import sys\n"
        "from tokviz.app.cli.main import main\n"
        "try:\n"
        f"    main([{flag!r}])\n"
        "except SystemExit as done:\n"
        "    print('exit', done.code)\n"
        "heavy = [m for m in ('numpy', 'regex', 'tokviz.core.registry', 'tokviz.app.cli.algorithms',\n"
        "                     'tokviz.app.cli.compare', 'tokviz.app.cli.chat', 'tokviz.app.cli.export',\n"
        "                     'tokviz.app.cli.animate') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-2:] == ["exit 0", "[]"]
    assert ("train" in out.stdout and "compare" in out.stdout) if flag == "--help" else lines[0].startswith("tokviz ")


# -- compiling the Unigram kernels ------------------------------------------------------------

NOTICE = re.compile(r"^compiling fast kernels, once per machine: \d+\.\d s$")


@pytest.mark.skipif(not jit.enabled(), reason="numba is not installed or TOKVIZ_JIT=0")
@pytest.mark.parametrize("compiles", [True, False])
def test_train_says_when_it_compiles_kernels(cli, tmp_path, monkeypatch, compiles):
    """A warm-up that makes numba compile (a fresh function, never cached) is announced on stderr
    with its duration; one that loads everything from the cache says nothing."""
    import numba

    asked = []

    def warm_up(*, encoder=True):
        asked.append(encoder)
        if compiles:
            numba.njit(cache=False)(lambda x: x + 1)(1)

    monkeypatch.setitem(SPECS, "unigram", dataclasses.replace(SPECS["unigram"], warm_up=warm_up))
    (tmp_path / "c.txt").write_text(CORPUS)
    code, _, err = cli("train", "c.txt", "-o", "u.json", "--algorithm", "unigram", "--vocab-size", "30")
    lines = err.splitlines()
    assert code == 0 and lines[-1].startswith("trained ")
    assert [bool(NOTICE.match(line)) for line in lines[:-1]] == ([True] if compiles else [])
    assert asked == [False]  # the model is only saved: the encoder's kernels are not loaded
    code, _, err = cli("train", "c.txt", "-o", "q.json", "--algorithm", "unigram", "--vocab-size", "30", "--quiet")
    assert (code, err) == (0, "")


@pytest.mark.slow
@pytest.mark.skipif(not jit.enabled(), reason="numba is not installed or TOKVIZ_JIT=0")
def test_the_first_unigram_training_on_a_machine_says_it_compiles(tmp_path):
    """With numba's cache empty, the real kernels are compiled and that is said; the next run
    loads them and says nothing."""
    (tmp_path / "c.txt").write_text(CORPUS)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    argv = [sys.executable, "-m", "tokviz", "train", "c.txt", "-o", "u.json", "--algorithm", "unigram",
            "--vocab-size", "30"]
    first, second = (subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
                     for _ in range(2))
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert NOTICE.match(first.stderr.splitlines()[0]), first.stderr
    assert "compiling" not in second.stderr


@pytest.mark.parametrize("big", [False, True])
def test_train_loads_kernels_while_it_counts_a_small_corpus(cli, tmp_path, monkeypatch, big):
    """A corpus counted in this process: the kernels load on a thread while it is read and counted,
    and the rounds start once they are loaded. A corpus big enough to be counted in forked
    processes (which a running thread forbids): they load first, here."""
    import threading

    from tokviz.core.algorithm.staged import StagedTraining
    from tokviz.core.text import chunks

    counting, seen = threading.Event(), {}

    def warm_up(*, encoder=True):
        seen["on the main thread"] = threading.current_thread() is threading.main_thread()
        seen["while counting"] = counting.wait(timeout=0 if big else 60)
        seen["loaded"] = True

    prepare, run = StagedTraining.prepare, StagedTraining.run

    def prepare_and_say(self, **kw):
        counting.set()
        return prepare(self, **kw)

    def run_once_loaded(self, *args, **kw):
        seen["loaded before the rounds"] = seen.get("loaded", False)
        return run(self, *args, **kw)

    monkeypatch.setitem(SPECS, "unigram", dataclasses.replace(SPECS["unigram"], warm_up=warm_up))
    monkeypatch.setattr(StagedTraining, "prepare", prepare_and_say)
    monkeypatch.setattr(StagedTraining, "run", run_once_loaded)
    if big:
        monkeypatch.setattr(chunks, "PARALLEL_MIN_CHARS", len(CORPUS))
    (tmp_path / "c.txt").write_text(CORPUS)
    code, _, err = cli("train", "c.txt", "-o", "u.json", "--algorithm", "unigram", "--vocab-size", "30", "--quiet")
    assert (code, err) == (0, "")
    assert seen == {"on the main thread": big, "while counting": not big, "loaded": True,
                    "loaded before the rounds": True}
    assert not _warm_up_threads()


def _warm_up_threads() -> list:
    import threading

    return [t for t in threading.enumerate() if t.name == "tokviz-warm-up"]


def test_a_training_that_fails_while_kernels_load_aside_says_why(cli, tmp_path, monkeypatch):
    """The corpus turns out empty while the kernels load on their thread: one line on stderr."""
    monkeypatch.setitem(SPECS, "unigram", dataclasses.replace(SPECS["unigram"], warm_up=lambda *, encoder: None))
    (tmp_path / "c.txt").write_text(" \n\t\n")
    code, _, err = cli("train", "c.txt", "-o", "u.json", "--algorithm", "unigram", "--vocab-size", "30")
    for thread in _warm_up_threads():
        thread.join()
    assert code != 0 and len(err.splitlines()) == 1 and "no text" in err
    assert not (tmp_path / "u.json").exists()


@pytest.mark.skipif(not jit.enabled(), reason="numba is not installed or TOKVIZ_JIT=0")
def test_a_mistake_found_while_kernels_compile_aside_is_said_at_once(cli, tmp_path, monkeypatch):
    """A mistake in the arguments while numba compiles the kernels on their thread (the first run
    on a machine, up to a minute): the notice's line ends and the mistake is said on the next one,
    without waiting for the compilation."""
    import threading

    from numba.core import event

    from tokviz.app.cli import algorithms
    from tokviz.app.cli.progress import COMPILING

    compiling, release, finished = threading.Event(), threading.Event(), []

    def warm_up(*, encoder=True):  # a compilation as numba announces one, which lasts until released
        event.start_event("numba:compile")
        compiling.set()
        try:
            release.wait(timeout=60)
        finally:
            event.end_event("numba:compile")
            finished.append(True)

    def settings_once_compiling(*args):
        assert compiling.wait(timeout=60)
        return train_settings(*args)

    train_settings = algorithms.train_settings
    monkeypatch.setattr(algorithms, "train_settings", settings_once_compiling)
    monkeypatch.setitem(SPECS, "unigram", dataclasses.replace(SPECS["unigram"], warm_up=warm_up))
    (tmp_path / "c.txt").write_text(CORPUS)
    (tmp_path / "folder").mkdir()
    code, _, err = cli("train", "c.txt", "-o", "folder", "--algorithm", "unigram", "--vocab-size", "30")
    assert (code, finished) == (2, [])  # said while the compilation still runs
    assert err.splitlines()[0] == COMPILING and "is a folder" in err.splitlines()[1], err
    release.set()
    for thread in _warm_up_threads():
        thread.join()


def test_ctrl_c_while_kernels_load_aside_ends_the_command_at_once(cli, tmp_path, monkeypatch):
    """Ctrl+C while the corpus is counted: 'interrupted' and status 130 without waiting for the
    warm-up's thread (a first compilation can take a minute)."""
    import threading

    from tokviz.core.algorithm.staged import StagedTraining

    release, waited = threading.Event(), []

    def warm_up(*, encoder=True):
        waited.append(release.wait(timeout=60))

    def interrupted(self, **kw):
        raise KeyboardInterrupt

    monkeypatch.setitem(SPECS, "unigram", dataclasses.replace(SPECS["unigram"], warm_up=warm_up))
    monkeypatch.setattr(StagedTraining, "prepare", interrupted)
    (tmp_path / "c.txt").write_text(CORPUS)
    code, _, err = cli("train", "c.txt", "-o", "u.json", "--algorithm", "unigram", "--vocab-size", "30")
    assert (code, err.strip(), waited) == (130, "tokviz: interrupted", [])  # the warm-up still waits
    release.set()
    for thread in _warm_up_threads():
        thread.join()
    assert waited == [True]
