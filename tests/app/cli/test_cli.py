"""The ``tokviz`` command line: train, encode, decode, merges; every error path exits 2 with one
line on stderr, no traceback and no partial output file."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest

from tests.app.cli.usage import usage_and_error
from tokviz.app.cli.main import COMMANDS
from tokviz.app.cli.progress import ProgressBar
from tokviz.core import jit, load_timeline

LOW = "low low low low low lower lower lowest\n"


@pytest.fixture
def low_model(tmp_path, cli):
    (tmp_path / "low.txt").write_text(LOW)
    code, out, err = cli("train", "low.txt", "-o", "low.json", "--units", "chars", "--split", "whitespace",
                         "--end-of-word", "_", "--quiet")
    assert (code, out, err) == (0, "", "")
    return tmp_path / "low.json"


@pytest.fixture
def minbpe_model(tmp_path, cli):
    (tmp_path / "a.txt").write_text("aaabdaaabac")
    code, _, _ = cli("train", "a.txt", "-o", "minbpe.json", "--split", "none", "--merges", "3", "--quiet")
    assert code == 0
    return tmp_path / "minbpe.json"


def files(tmp_path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir())


# -- train ------------------------------------------------------------------------------------


def test_train_known_answer_and_merges_listing(cli, low_model):
    code, out, err = cli("merges", str(low_model))
    assert code == 0 and err == ""
    assert out.splitlines() == [
        "rank\tid\tleft\tright\tcount",
        "0\t8\tl\to\t8",
        "1\t9\tlo\tw\t8",
        "2\t10\tlow\t_\t5",
        "3\t11\tlow\te\t3",
        "4\t12\tlowe\tr\t2",
        "5\t13\tlower\t_\t2",
    ]


def test_merges_json_lines(cli, low_model):
    code, out, err = cli("merges", str(low_model), "--json")
    assert code == 0 and err == ""
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 6
    assert all(list(r) == ["rank", "pair", "id", "pair_hex", "token_hex", "count"] for r in rows)
    assert rows[0] == {"rank": 0, "pair": [2, 3], "id": 8, "pair_hex": ["6c", "6f"], "token_hex": "6c6f", "count": 8}
    assert rows[5] == {
        "rank": 5, "pair": [12, 0], "id": 13, "pair_hex": ["6c6f776572", "5f"], "token_hex": "6c6f7765725f", "count": 2,
    }
    assert [r["count"] for r in rows] == [8, 8, 5, 3, 2, 2]


def test_train_minbpe_and_encode_ids(cli, minbpe_model):
    code, out, err = cli("encode", str(minbpe_model), "aaabdaaabac", "--ids")
    assert (code, out, err) == (0, "258 100 258 97 99\n", "")
    code, out, _ = cli("encode", str(minbpe_model), "aaabdaaabac", "--ids", "--step", "1")
    assert out == "256 97 98 100 256 97 98 97 99\n"
    code, out, _ = cli("encode", str(minbpe_model), "aaabdaaabac", "--ids", "--step", "0")
    assert out == " ".join(str(b) for b in b"aaabdaaabac") + "\n"


def test_train_shows_progress_on_stderr_unless_quiet(cli, tmp_path):
    (tmp_path / "a.txt").write_text("aaabdaaabac")
    code, out, err = cli("train", "a.txt", "-o", "m.json", "--split", "none", "--vocab-size", "259")
    assert code == 0 and out == ""
    assert err.splitlines()[-1].startswith("trained 3 merges (vocabulary 259) in 0:0")
    assert load_timeline(tmp_path / "m.json").vocab_size == 259
    code, out, err = cli("train", "a.txt", "-o", "m2.json", "--split", "none", "--vocab-size", "259", "--quiet")
    assert (code, out, err) == (0, "", "")
    assert (tmp_path / "m2.json").read_bytes() == (tmp_path / "m.json").read_bytes()
    assert files(tmp_path) == ["a.txt", "m.json", "m2.json"]


class Tty(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


def test_progress_bar_on_a_terminal():
    stream = Tty()
    bar = ProgressBar(stream)
    bar.stage("counting chunks")
    bar.start(10)
    assert bar.line(5).startswith("[" + "#" * 14 + "-" * 14 + "] 5/10 merges")
    bar.last = -1e9  # force a redraw
    bar.update(5)
    bar.finish(10, 266)
    text = stream.getvalue()
    assert text.startswith("\r\x1b[2Kcounting chunks...")
    assert "\r\x1b[2K[##############--------------] 5/10 merges" in text
    assert text.endswith("trained 10 merges (vocabulary 266) in 0:00\n")
    quiet = Tty()
    bar = ProgressBar(quiet, enabled=False)
    bar.stage("x")
    bar.start(None)
    bar.update(3)
    bar.finish(3, 259)
    assert quiet.getvalue() == ""
    assert ProgressBar(io.StringIO()).line(7).startswith("7 merges")


@pytest.mark.skipif(not jit.enabled(), reason="numba is not installed or TOKVIZ_JIT=0")
def test_a_compile_notice_holds_back_the_counting_lines_until_it_ends():
    """On a terminal the notice replaces the stage's line, and the counting's lines drawn while numba
    compiles (on the warm-up's thread) wait: the notice ends with its duration, on a line of its own."""
    import numba

    from tokviz.app.cli.progress import COMPILING

    stream = Tty()
    bar = ProgressBar(stream)
    bar.stage("counting chunks")

    def warm_up():
        numba.njit(cache=False)(lambda x: x + 2)(1)
        bar.last = -1e9  # due for a redraw
        bar.counting(1, 2)

    bar.load_kernels_aside(warm_up)()
    bar.last = -1e9
    bar.counting(2, 2)
    assert re.fullmatch(r"\r\x1b\[2Kcounting chunks\.\.\.\r\x1b\[2K" + re.escape(COMPILING) + r"\d+\.\d s\n"
                        r"\r\x1b\[2Kcounting chunks 100%", stream.getvalue()), stream.getvalue()


def test_train_word_counts_known_answer(cli, tmp_path):
    (tmp_path / "t1.tsv").write_text("the 50\nun 20\n")
    (tmp_path / "t2.tsv").write_text("able\t25\nunable 12\n")
    code, _, _ = cli("train", "t1.tsv", "t2.tsv", "-o", "w.json", "--word-counts", "--units", "chars",
                     "--min-count", "2", "--quiet")
    assert code == 0
    code, out, _ = cli("merges", "w.json")
    assert [tuple(line.split("\t")[2:]) for line in out.splitlines()[1:]] == [
        ("t", "h", "50"), ("th", "e", "50"), ("a", "b", "37"), ("ab", "l", "37"),
        ("abl", "e", "37"), ("u", "n", "32"), ("un", "able", "12"),
    ]
    timeline = load_timeline(tmp_path / "w.json")
    assert timeline.settings.word_counts and timeline.settings.units == "chars"


def test_train_min_count(cli, tmp_path):
    (tmp_path / "low.txt").write_text(LOW)
    code, _, _ = cli("train", "low.txt", "-o", "m.json", "--units", "chars", "--split", "whitespace",
                     "--end-of-word", "_", "--min-count", "3", "--quiet")
    assert code == 0
    assert [s.count for s in load_timeline(tmp_path / "m.json").steps] == [8, 8, 5, 3]


@pytest.mark.parametrize("split", ["none", "whitespace", "gpt2", "gpt4", "o200k", r"regex:\w+|\S"])
def test_train_split_choices_are_recorded(cli, tmp_path, split):
    (tmp_path / "c.txt").write_text("Hello, hello world! 123 hello\n" * 3)
    code, _, err = cli("train", "c.txt", "-o", "m.json", "--split", split, "--merges", "4", "--quiet")
    assert (code, err) == (0, "")
    timeline = load_timeline(tmp_path / "m.json")
    assert timeline.settings.split == split
    assert timeline.n_merges == 4


def test_train_default_split_is_gpt4_bytes(cli, tmp_path):
    (tmp_path / "c.txt").write_text("hello hello")
    assert cli("train", "c.txt", "-o", "m.json", "--quiet")[0] == 0
    s = load_timeline(tmp_path / "m.json").settings
    assert (s.split, s.units, s.min_count, s.end_of_word) == ("gpt4", "bytes", 2, None)


def test_train_special_tokens(cli, tmp_path):
    (tmp_path / "c.txt").write_text("ab<|e|>ab<|e|><|e|>ab<|x|>")
    code, _, _ = cli("train", "c.txt", "-o", "m.json", "--split", "none", "--special", "<|e|>",
                     "--special", "<|x|>", "--quiet")
    assert code == 0
    timeline = load_timeline(tmp_path / "m.json")
    assert timeline.special_ids == {"<|e|>": 257, "<|x|>": 258}
    assert [s.token for s in timeline.steps] == [b"ab"]  # the special tokens never merge
    code, out, _ = cli("encode", "m.json", "ab<|x|>ab", "--json")
    assert json.loads(out) == {"ids": [256, 258, 256], "tokens_hex": ["6162", "3c7c787c3e", "6162"],
                               "spans": [[0, 2], [2, 7], [7, 9]], "inserted": []}
    code, out, _ = cli("decode", "m.json", "256", "257", "256")
    assert out == "ab<|e|>ab\n"


def test_train_several_files_and_bom(cli, tmp_path):
    (tmp_path / "a.txt").write_bytes(b"\xef\xbb\xbfcd ab")
    (tmp_path / "b.txt").write_text("ab cd")
    assert cli("train", "a.txt", "b.txt", "-o", "m.json", "--quiet")[0] == 0
    timeline = load_timeline(tmp_path / "m.json")
    assert timeline.corpus_length == len(b"cd ab" + b"ab cd")  # the BOM is dropped
    assert [s.token for s in timeline.steps] == [b"cd", b"ab"]  # chunks of a.txt come first


def test_train_encoding_errors_replace(cli, tmp_path):
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9 caf\xe9 caf\xe9")
    code, out, err = cli("train", "latin.txt", "-o", "m.json", "--quiet")
    assert code == 2 and out == ""
    assert err == ("tokviz: latin.txt: not valid UTF-8 (first bad byte 0xE9 at offset 3); "
                   "use --encoding-errors replace to read it anyway\n")
    assert files(tmp_path) == ["latin.txt"]
    code, _, _ = cli("train", "latin.txt", "-o", "m.json", "--encoding-errors", "replace", "--quiet")
    assert code == 0
    vocab = load_timeline(tmp_path / "m.json").token_bytes()
    assert "\ufffd".encode() in vocab  # the bad byte became U+FFFD, which then merged


# -- encode / decode --------------------------------------------------------------------------


def test_encode_default_format_lists_tokens(cli, low_model):
    code, out, err = cli("encode", str(low_model), "lower low")
    assert (code, err) == (0, "")
    assert out == "13\tlower_\n10\tlow_\n"


def test_encode_json(cli, low_model):
    code, out, err = cli("encode", str(low_model), "lower  low", "--json")
    assert (code, err) == (0, "")
    assert out.count("\n") == 1
    assert list(json.loads(out)) == ["ids", "tokens_hex", "spans", "inserted"]
    assert json.loads(out) == {"ids": [13, 10], "tokens_hex": ["6c6f7765725f", "6c6f775f"],
                               "spans": [[0, 5], [7, 10]], "inserted": []}


def test_encode_unicode_bytes_spans(cli, tmp_path):
    (tmp_path / "c.txt").write_text("héllo héllo 😀😀")
    assert cli("train", "c.txt", "-o", "m.json", "--quiet")[0] == 0
    code, out, _ = cli("encode", "m.json", "é😀", "--json", "--step", "0")
    assert json.loads(out) == {
        "ids": [0xC3, 0xA9, 0xF0, 0x9F, 0x98, 0x80],
        "tokens_hex": ["c3", "a9", "f0", "9f", "98", "80"],
        "spans": [[0, 1], [0, 1], [1, 2], [1, 2], [1, 2], [1, 2]], "inserted": [],
    }
    code, out, _ = cli("encode", "m.json", "é😀", "--step", "0")  # partial tokens shown escaped
    assert out == "195\t\\xc3\n169\t\\xa9\n240\t\\xf0\n159\t\\x9f\n152\t\\x98\n128\t\\x80\n"
    # control characters and backslashes are escaped, so each token stays on its line
    (tmp_path / "d.txt").write_text("a\tb\\c\n" * 3)
    assert cli("train", "d.txt", "-o", "d.json", "--split", "none", "--quiet")[0] == 0
    assert cli("encode", "d.json", "\t\\\n\"", "--step", "0")[1] == '9\t\\t\n92\t\\\\\n10\t\\n\n34\t\\"\n'


def test_encode_from_file(cli, tmp_path, low_model):
    (tmp_path / "in.txt").write_text("lowest lower")
    code, out, _ = cli("encode", str(low_model), "-f", "in.txt", "--ids")
    assert (code, out) == (0, "11 5 6 0 13\n")
    (tmp_path / "empty.txt").write_text("")
    assert cli("encode", str(low_model), "-f", "empty.txt", "--ids") == (0, "\n", "")


def test_encode_chars_model_shows_unk(cli, low_model):
    code, out, _ = cli("encode", str(low_model), "loz")
    assert out == "8\tlo\n14\t[UNK]\n0\t_\n"
    assert cli("encode", str(low_model), "loz", "--tokens")[1] == "lo [UNK] _\n"


def test_decode(cli, minbpe_model, low_model):
    assert cli("decode", str(minbpe_model), "258", "100", "258", "97", "99") == (0, "aaabdaaabac\n", "")
    assert cli("decode", str(minbpe_model), "258,100", "258, 97,99") == (0, "aaabdaaabac\n", "")
    assert cli("decode", str(low_model), "13", "14") == (0, "lower_[UNK]\n", "")
    assert cli("decode", str(minbpe_model), "195") == (0, "\ufffd\n", "")


# -- errors -----------------------------------------------------------------------------------


@pytest.fixture
def workdir(tmp_path, minbpe_model):
    """tmp_path with a text file, a model, and files of every wrong kind."""
    (tmp_path / "ok.txt").write_text("hello hello world")
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (tmp_path / "latin.txt").write_bytes(b"ol\xe9")
    (tmp_path / "table.txt").write_text("the 5\nthis is not a table\n")
    truncated = minbpe_model.read_bytes()[:37]
    assert truncated == b'{"format":"tokviz-model","version":1,'
    (tmp_path / "truncated.json").write_bytes(truncated)
    (tmp_path / "future.json").write_text('{"format": "tokviz-model", "version": 7}')
    (tmp_path / "other.json").write_text('{"hello": "world"}')
    return tmp_path


ERROR_CASES = {
    # train
    "missing file": (["train", "nope.txt", "-o", "out.json"], "tokviz: nope.txt: no such file"),
    "empty file": (["train", "empty.txt", "-o", "out.json"], "tokviz: empty.txt: file is empty"),
    "binary file": (["train", "image.png", "-o", "out.json"],
                    "tokviz: image.png: looks like a binary file (NUL byte at offset 8), not text"),
    "not utf-8": (["train", "latin.txt", "-o", "out.json"],
                  "tokviz: latin.txt: not valid UTF-8 (first bad byte 0xE9 at offset 2); "
                  "use --encoding-errors replace to read it anyway"),
    "folder as corpus": (["train", ".", "-o", "out.json"], "tokviz: .: is a folder, not a file"),
    "nothing to train on": (["train", "ok.txt", "-o", "out.json", "--split", r"regex:\d+"],
                            "tokviz: the corpus has no text to train on (it is empty after splitting)"),
    "bad regex": (["train", "ok.txt", "-o", "out.json", "--split", "regex:(un"],
                  "tokviz: invalid split regex '(un': missing ) at position 3"),
    "capturing regex": (["train", "ok.txt", "-o", "out.json", "--split", "regex:(a)"],
                        "tokviz: split regex '(a)' has capturing groups; use (?:...) instead of (...)"),
    "unknown split": (["train", "ok.txt", "-o", "out.json", "--split", "gpt5"],
                      "tokviz: unknown split 'gpt5'; choose one of none|whitespace|gpt2|gpt4|o200k|regex:PATTERN"),
    "vocab too small bytes": (["train", "ok.txt", "-o", "out.json", "--vocab-size", "100", "--special", "<s>"],
                              "tokviz: vocabulary size 100 is too small: the base vocabulary and special tokens "
                              "already take 257 ids; choose a size of at least 257"),
    "vocab too small chars": (["train", "ok.txt", "-o", "out.json", "--units", "chars", "--vocab-size", "5"],
                              "tokviz: vocabulary size 5 is too small: the base vocabulary and special tokens "
                              "already take 9 ids; choose a size of at least 9"),
    "vocab size zero": (["train", "ok.txt", "-o", "out.json", "--vocab-size", "0"],
                        "tokviz: vocabulary size must be positive, got 0"),
    "negative merges": (["train", "ok.txt", "-o", "out.json", "--merges", "-3"],
                        "tokviz train: argument --merges: expected a number >= 0, got -3"),
    "both budgets": (["train", "ok.txt", "-o", "out.json", "--merges", "3", "--vocab-size", "300"],
                     "tokviz train: argument --vocab-size: not allowed with argument --merges"),
    "min count zero": (["train", "ok.txt", "-o", "out.json", "--min-count", "0"],
                       "tokviz: minimum count must be at least 1, got 0"),
    "empty special": (["train", "ok.txt", "-o", "out.json", "--special", ""],
                      "tokviz: a special token cannot be empty"),
    "empty marker": (["train", "ok.txt", "-o", "out.json", "--end-of-word", ""],
                     "tokviz: the end-of-word marker cannot be empty"),
    "bad units": (["train", "ok.txt", "-o", "out.json", "--units", "words"],
                  "tokviz train: argument --units: invalid choice: 'words' (choose from 'bytes', 'chars')"),
    "bad table": (["train", "table.txt", "-o", "out.json", "--word-counts"],
                  "tokviz: table.txt:2: expected 'word count' or 'word<TAB>count', got 'this is not a table'"),
    "unwritable output": (["train", "ok.txt", "-o", "ok.txt/out.json"],
                          "tokviz: ok.txt/out.json: cannot write (Not a directory)"),
    "missing output folder": (["train", "ok.txt", "-o", "no/such/out.json"],
                              "tokviz train: output folder no/such does not exist"),
    "output is a folder": (["train", "ok.txt", "-o", "."], "tokviz train: output . is a folder; give a file name"),
    "no output given": (["train", "ok.txt"], "tokviz train: the following arguments are required: -o/--output"),
    # models
    "missing model": (["encode", "nope.json", "hi"], "tokviz: nope.json: no such file, and not a known tokenizer "
                      "name (r50k_base, gpt2, p50k_base, p50k_edit, cl100k_base, o200k_base, o200k_harmony) or a "
                      "Hugging Face cache name (hf:ORG/NAME)"),
    "truncated model": (["merges", "truncated.json"],
                        "tokviz: truncated.json: not a valid model file (JSON error at line 1, column 38; truncated?)"),
    "future model": (["decode", "future.json", "1"],
                     "tokviz: future.json: model file format version 7 is newer than this tokviz reads (1); "
                     "update tokviz"),
    "not a model": (["encode", "other.json", "hi"],
                    "tokviz: other.json: JSON, but not a tokviz model, tokenizer.json, tekken.json or encoder.json"),
    "text file as model": (["merges", "ok.txt"],
                           "tokviz: ok.txt: not a tokenizer file tokviz knows (GGUF .gguf, minbpe .model, vocab.bpe + encoder.json, "
                           "tokviz model, tokenizer.json, tekken.json, .tiktoken, SentencePiece .model)"),
    # encode / decode
    "id out of range": (["decode", "minbpe.json", "97", "259"],
                        "tokviz: id 259 is not in the vocabulary (valid ids: 0..258)"),
    "negative id": (["decode", "minbpe.json", "-1"], "tokviz: id -1 is not in the vocabulary (valid ids: 0..258)"),
    "not an id": (["decode", "minbpe.json", "12", "x7"], "tokviz decode: 'x7' is not an id (ids are whole numbers)"),
    "step past the end": (["encode", "minbpe.json", "abc", "--step", "4"],
                          "tokviz encode: --step 4 is past the last merge (3)"),
    "text and file": (["encode", "minbpe.json", "abc", "-f", "ok.txt"],
                      "tokviz encode: give TEXT or -f FILE, not both"),
    "missing input file": (["encode", "minbpe.json", "-f", "nope.txt"], "tokviz: nope.txt: no such file"),
    "binary input file": (["encode", "minbpe.json", "-f", "image.png"],
                          "tokviz: image.png: looks like a binary file (NUL byte at offset 8), not text"),
    "two formats": (["encode", "minbpe.json", "abc", "--ids", "--json"],
                    "tokviz encode: argument --json: not allowed with argument --ids"),
    # the command itself
    "unknown subcommand": (["frobnicate", "x"],  # the list grows with new commands (lesson, animate, ...)
                           "tokviz: unknown command or file 'frobnicate' (commands: train, encode, decode, merges, "
                           f"gui, screenshot{''.join(', ' + c for c in COMMANDS[6:])})"),
    "unknown option": (["--frobnicate"], "tokviz: unrecognized arguments: --frobnicate"),
    "unknown train option": (["train", "ok.txt", "-o", "out.json", "--colour"],
                             "tokviz train: unrecognized arguments: --colour"),
    "mistyped option": (["encode", "minbpe.json", "--idz", "abc"],
                        "tokviz encode: unrecognized arguments: --idz abc; did you mean --ids?"),
}
# the mistakes argparse finds: its usage lines come first, then the one error line
PARSER_CASES = {"negative merges", "both budgets", "bad units", "no output given", "two formats", "unknown option",
                "unknown train option", "mistyped option"}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_errors_exit_2_with_one_line_and_no_output_file(cli, workdir, case):
    argv, message = ERROR_CASES[case]
    before = files(workdir)
    code, out, err = cli(*argv)
    assert code == 2
    assert out == ""
    usage, line = usage_and_error(err)
    assert line == message
    assert usage.startswith(f"usage: {message.split(':')[0]} ") if case in PARSER_CASES else usage == ""
    assert files(workdir) == before  # no model written, no temporary file left behind


def test_interrupted_training_leaves_no_file(cli, workdir, monkeypatch):
    from tokviz.core import Training

    def interrupted(self):
        yield from ()
        raise KeyboardInterrupt

    monkeypatch.setattr(Training, "steps", interrupted)
    before = files(workdir)
    code, out, err = cli("train", "ok.txt", "-o", "out.json", "--quiet")
    assert (code, out, err) == (130, "", "tokviz: interrupted\n")
    assert files(workdir) == before


def test_failed_write_leaves_no_partial_file(cli, workdir, monkeypatch):
    import tokviz.core.model_files as model_io

    def disk_full(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(model_io.os, "replace", disk_full)
    before = files(workdir)
    code, out, err = cli("train", "ok.txt", "-o", "out.json", "--quiet")
    assert (code, out, err) == (2, "", "tokviz: out.json: cannot write (No space left on device)\n")
    assert files(workdir) == before  # the temporary file is gone too


# -- real processes ---------------------------------------------------------------------------


def tokviz(*argv: str, cwd, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tokviz", *argv],
        cwd=cwd,
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=120,
        env=env,
    )


def buffered_env() -> dict:
    """The environment with Python's standard streams buffered, as they are for most users."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def test_process_exit_flushes_everything_and_keeps_the_status(tmp_path):
    # the command ends with os._exit (`tokviz.app.cli.entry`): every byte must be out first
    (tmp_path / "c.txt").write_text("aaabdaaabac")
    assert tokviz("train", "c.txt", "-o", "m.json", "--split", "none", "--merges", "3", cwd=tmp_path).returncode == 0
    text = "aaabd" * 40_000  # 200,000 characters: far more than a pipe or a stdout buffer holds
    r = tokviz("encode", "m.json", "--ids", cwd=tmp_path, stdin=text.encode(), env=buffered_env())
    assert r.returncode == 0 and r.stderr == b""
    assert r.stdout == b" ".join([b"258 100"] * 40_000) + b"\n"
    r = tokviz("encode", "m.json", "aaab", "--ids", cwd=tmp_path, env=buffered_env())
    assert (r.returncode, r.stdout, r.stderr) == (0, b"258\n", b"")
    r = tokviz("encode", "nope.json", "x", cwd=tmp_path, env=buffered_env())
    assert r.returncode == 2 and r.stdout == b"" and r.stderr.startswith(b"tokviz: ") and r.stderr.count(b"\n") == 1


def test_process_output_to_a_reader_that_left(tmp_path):
    """A reader that went away (``| head``) is no error, whether the output meets it while being
    written (2 MB of ids) or only when the last buffered bytes are flushed on the way out."""
    (tmp_path / "c.txt").write_text("aaabdaaabac")
    assert tokviz("train", "c.txt", "-o", "m.json", "--split", "none", "--merges", "3", cwd=tmp_path).returncode == 0
    (tmp_path / "big.txt").write_text("aaabd" * 400_000)
    for source in (["-f", "big.txt"], ["aaab"]):
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader is gone before the first byte
        try:
            r = subprocess.run([sys.executable, "-m", "tokviz", "encode", "m.json", *source, "--ids"], cwd=tmp_path,
                               stdout=write_end, stderr=subprocess.PIPE, timeout=120, env=buffered_env())
        finally:
            os.close(write_end)
        assert (r.returncode, r.stderr) == (0, b""), source  # no "Exception ignored ... BrokenPipeError"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("buffered", [True, False])
def test_process_output_to_a_full_disk_is_one_line_and_status_2(tmp_path, buffered):
    (tmp_path / "c.txt").write_text("aaabdaaabac")
    assert tokviz("train", "c.txt", "-o", "m.json", "--split", "none", "--merges", "3", cwd=tmp_path).returncode == 0
    env = buffered_env() if buffered else {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open("/dev/full", "wb") as full:
        r = subprocess.run([sys.executable, "-m", "tokviz", "encode", "m.json", "aaab", "--ids"], cwd=tmp_path,
                           stdout=full, stderr=subprocess.PIPE, timeout=120, env=env)
    assert (r.returncode, r.stderr) == (2, b"tokviz: cannot write the output: No space left on device\n")


def test_process_train_encode_decode(tmp_path):
    (tmp_path / "c.txt").write_text("aaabdaaabac")
    r = tokviz("train", "c.txt", "-o", "m.json", "--split", "none", "--merges", "3", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == b""
    assert r.stderr.decode().startswith("trained 3 merges (vocabulary 259)")
    r = tokviz("encode", "m.json", "aaabdaaabac", "--ids", cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"258 100 258 97 99\n", b"")
    r = tokviz("decode", "m.json", "258", "100", cwd=tmp_path)
    assert (r.returncode, r.stdout) == (0, b"aaabd\n")
    r = tokviz("encode", "m.json", "--json", cwd=tmp_path, stdin="aaab\u00e9".encode())
    assert r.returncode == 0
    assert json.loads(r.stdout) == {"ids": [258, 195, 169], "tokens_hex": ["61616162", "c3", "a9"],
                                    "spans": [[0, 4], [4, 5], [4, 5]], "inserted": []}
    r = tokviz("merges", "m.json", "--json", cwd=tmp_path)
    assert [json.loads(line)["token_hex"] for line in r.stdout.splitlines()] == ["6161", "616161", "61616162"]


@pytest.mark.parametrize(
    ("argv", "stdin", "prefix"),
    [
        (["train", "image.png", "-o", "out.json"], None, "tokviz: image.png: looks like a binary file"),
        (["train", "ok.txt", "-o", "out.json", "--split", "regex:[z-a]"], None, "tokviz: invalid split regex"),
        (["train", "ok.txt", "-o", "out.json", "--vocab-size", "10"], None, "tokviz: vocabulary size 10 is too small"),
        (["train", "ok.txt", "-o", "ok.txt/out.json"], None, "tokviz: ok.txt/out.json: cannot write"),
        (["merges", "truncated.json"], None, "tokviz: truncated.json: not a valid model file"),
        (["decode", "minbpe.json", "100000"], None, "tokviz: id 100000 is not in the vocabulary"),
        (["encode", "minbpe.json", "--ids"], b"ab\xffcd", "tokviz: <stdin>: not valid UTF-8 (first bad byte 0xFF at offset 2)"),
        (["frobnicate", "x"], None, "tokviz: unknown command or file 'frobnicate'"),
        (["merges"], None, "tokviz merges: the following arguments are required: MODEL"),
    ],
)
def test_process_errors(workdir, argv, stdin, prefix):
    before = files(workdir)
    r = tokviz(*argv, cwd=workdir, stdin=stdin)
    err = r.stderr.decode()
    assert r.returncode == 2
    assert r.stdout == b""
    usage, line = usage_and_error(err)
    assert line.startswith(prefix)
    assert (usage != "") == ("arguments are required" in line)  # argparse's mistakes come with the usage
    assert files(workdir) == before
