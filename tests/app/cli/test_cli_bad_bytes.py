"""Bytes that are not UTF-8, wherever the command line meets them: in arguments, on stdin and in
files, for every command. Each case runs ``tokviz`` as a real process (argv and stdin as bytes,
as a shell hands them over) and must exit 2 with one line on stderr, no traceback, no output."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from tokviz.app.cli.main import COMMANDS
from tokviz.core import TrainSettings, load_timeline, train
from tokviz.core.model_files import save_model

B = os.fsencode


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """Small files every case reuses: a model, good and bad text, a model file with a bad byte."""
    d = tmp_path_factory.mktemp("bad-bytes")
    save_model(train(TrainSettings(merges=5), texts=["low lower lowest " * 5]), d / "model.json")
    (d / "ok.txt").write_text("low lower\n", encoding="utf-8")
    (d / "ok.json").write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
    (d / "badmsg.json").write_bytes(b'[{"role": "user", "content": "caf\xe9"}]')
    (d / "bad.txt").write_bytes(b"caf\xe9 ol\xff\n")
    (d / "latin1.json").write_bytes(b'{"caf\xe9": 1}')  # not UTF-8 at all: the window would ask
    (d / "bad.json").write_bytes(b'{"format": "tokviz-model", "version": 1, "settings": {"split": "\xff"}}')
    (d / os.fsdecode(b"caf\xe9.txt")).write_text("low\n", encoding="utf-8")  # a Latin-1 file name
    return d


def run(argv: list[bytes | str], cwd, stdin: bytes = b"") -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-m", "tokviz", *map(B, argv)], cwd=cwd, input=stdin,
                          capture_output=True, timeout=120, env=env)


# command -> {case: (argv, stdin, what stderr says)}; every command has a row, and every source
# of text it reads (arguments always; stdin and files where the command reads them) has a case.
TABLE = {
    "train": {
        "corpus name": (["train", b"\xff.txt", "-o", "out.json"], b"", "argument 2 (\\xff.txt) is not valid UTF-8"),
        "special token": (["train", "ok.txt", "-o", "out.json", "--special", b"<\xff>"], b"", "argument 6"),
        "output name": (["train", "ok.txt", "-o", b"out\xff.json"], b"", "argument 4 (out\\xff.json)"),
        "corpus file": (["train", "bad.txt", "-o", "out.json", "--quiet"], b"",
                        "bad.txt: not valid UTF-8 (first bad byte 0xE9 at offset 3); use --encoding-errors replace"),
    },
    "encode": {
        "text": (["encode", "--ids", "model.json", b"a\xffb"], b"",
                 "argument 4 (a\\xffb) is not valid UTF-8 (first bad byte 0xFF at offset 1)"),
        "text naming a file": (["encode", "--ids", "model.json", b"caf\xe9.txt"], b"", "TEXT is not valid UTF-8"),
        "pattern": (["encode", "model.json", "x", "--pattern", b"\xff+"], b"", "argument 5"),
        "model name": (["encode", b"m\xff.json", "x"], b"", "argument 2"),
        "stdin": (["encode", "--ids", "model.json"], b"a\xffb", "<stdin>: not valid UTF-8 (first bad byte 0xFF at "
                                                               "offset 1); convert it to UTF-8 first"),
        "text file": (["encode", "model.json", "-f", "bad.txt"], b"", "bad.txt: not valid UTF-8 (first bad byte 0xE9"),
    },
    "decode": {
        "id": (["decode", "model.json", b"1\xff"], b"", "argument 3"),
        "model file": (["decode", "bad.json", "1"], b"", "bad.json"),
    },
    "info": {
        "model name": (["info", b"m\xff.json"], b"", "argument 2"),
        "model file": (["info", "bad.json"], b"", "bad.json"),
    },
    "diff": {
        "model name": (["diff", b"m\xff.json", "model.json"], b"", "argument 2"),
        "text file": (["diff", "model.json", "model.json", "-f", "bad.txt"], b"", "bad.txt: not valid UTF-8"),
    },
    "merges": {
        "model name": (["merges", b"m\xff.json"], b"", "argument 2"),
        "model file": (["merges", "bad.json"], b"", "bad.json"),
    },
    "export": {
        "output name": (["export", "model.json", "-o", b"out\xff.json"], b"", "argument 4"),
        "model file": (["export", "bad.json", "-o", "out.json"], b"", "bad.json"),
    },
    "compare": {
        "reference": (["compare", "model.json", "-f", "ok.txt", "--reference", b"\xff"], b"", "argument 6"),
        "text file": (["compare", "model.json", "-f", "bad.txt"], b"", "bad.txt: not valid UTF-8"),
        "model file": (["compare", "bad.json", "-f", "ok.txt"], b"", "bad.json"),
    },
    "animate": {
        "text": (["animate", "model.json", "--out", "a.gif", "--text", b"a\xffb"], b"", "argument 6"),
        "model file": (["animate", "bad.json", "--out", "a.gif"], b"", "bad.json"),
        "model file not UTF-8": (["animate", "latin1.json", "--out", "a.gif"], b"",
                                 "latin1.json is not valid UTF-8 (first bad byte 0xE9"),
    },
    "gui": {  # a readable file opens the window, which reports a bad file itself
        "file name": (["gui", b"\xff.txt"], b"", "argument 2 (\\xff.txt)"),
        "no command": ([b"\xff.txt"], b"", "argument 1 (\\xff.txt)"),
    },
    "chat": {
        "model name": (["chat", b"m\xff", "-f", "ok.json"], b"", "argument 2"),
        "messages file": (["chat", "model.json", "-f", "badmsg.json"], b"", "badmsg.json: not UTF-8 JSON"),
    },
    "glitch": {
        "model name": (["glitch", b"m\xff.json"], b"", "argument 2"),
        "corpus file": (["glitch", "model.json", "--corpus", "bad.txt"], b"", "bad.txt: not valid UTF-8"),
        "model file": (["glitch", "bad.json"], b"", "bad.json"),
    },
    "count": {
        "output name": (["count", "ok.txt", "-o", b"c\xff.tsv"], b"", "argument 4"),
        "text file": (["count", "bad.txt", "-o", "c.tsv"], b"", "bad.txt: not valid UTF-8"),
    },
    "screenshot": {"output folder": (["screenshot", "--out", b"shots\xff"], b"", "argument 3")},
    "lesson": {"name": (["lesson", b"bpe\xff"], b"", "argument 2")},
}
CASES = [(cmd, case, *row) for cmd, rows in TABLE.items() for case, row in rows.items()]


def test_every_command_has_a_row():
    assert set(TABLE) == set(COMMANDS)


@pytest.fixture(scope="module")
def outcomes(workdir):
    """Every case's process, run a few at a time (start-up dominates), and the folder before."""
    before = sorted(os.listdir(workdir))
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(zip([(c[0], c[1]) for c in CASES], pool.map(lambda c: run(c[2], workdir, c[3]), CASES)))
    return done, before


@pytest.mark.parametrize(("command", "case", "argv", "stdin", "says"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_bad_bytes_exit_2_with_one_line(outcomes, command, case, argv, stdin, says):
    r = outcomes[0][(command, case)]
    err = r.stderr.decode("utf-8", "backslashreplace")
    assert r.returncode == 2, err
    assert r.stdout == b""
    assert err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("tokviz") and says in err, err
    if command not in ("train", "count"):
        assert "--encoding-errors" not in err  # only what reads a whole corpus offers that option


def test_no_case_wrote_anything(outcomes, workdir):
    assert sorted(os.listdir(workdir)) == outcomes[1]


def test_a_file_name_that_is_not_utf8_still_opens(workdir):
    r = run(["encode", "--ids", "model.json", "-f", b"caf\xe9.txt"], workdir)
    assert (r.returncode, r.stderr) == (0, b"")
    expected = load_timeline(workdir / "model.json").tokenizer().encode_ids("low\n")
    assert r.stdout.decode().split() == [str(i) for i in expected]
