"""Corrupt or malicious tekken.json files: one line on stderr and status 2 from every command, never
a traceback, and no table sized by a number the file made up."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import pytest

PATTERN = r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s+"


def _tekken(n_special: int = 20) -> dict:  # files that list no specials have 20 built-in ones
    vocab = [bytes([b]) for b in range(256)] + [b"ab", b"abc", b" x"]
    return {
        "config": {"pattern": PATTERN, "default_vocab_size": len(vocab) + n_special,
                   "default_num_special_tokens": n_special, "version": "v3"},
        "vocab": [{"rank": i, "token_bytes": base64.b64encode(t).decode(), "token_str": None}
                  for i, t in enumerate(vocab)],
    }


def _write(tmp_path, d) -> str:
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    return str(path)


def _one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_sound_file_encodes_with_ids_after_its_special_tokens(cli, tmp_path):
    code, out, err = cli("encode", "--ids", _write(tmp_path, _tekken()), "abc x<s>")
    assert (code, err) == (0, "") and out.split() == ["277", "278", "1"]  # "abc" and " x": 20 + rank, then <s>


def _entry(d, i, **fields):
    d["vocab"][i].update(fields)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: _entry(d, 257, token_bytes="@@not base64@@"), "vocab entry 257 is not"),
    (lambda d: _entry(d, 258, token_bytes="YW=Jj"), "vocab entry 258 is not"),  # padding inside
    (lambda d: _entry(d, 5, token_bytes=17), "vocab entry 5 is not"),
    (lambda d: _entry(d, 5, token_bytes="ñ"), "vocab entry 5 is not"),
    (lambda d: _entry(d, 4, rank=10**30), "vocab entry 4 has rank"),
    (lambda d: _entry(d, 4, rank=True), "vocab entry 4 has rank"),
    (lambda d: _entry(d, 4, rank="4"), "vocab entry 4 has rank"),
    (lambda d: d["vocab"].__setitem__(7, "AAc="), "vocab entry 7 is not"),
    (lambda d: d["vocab"].__setitem__(7, None), "vocab entry 7 is not"),
    (lambda d: _entry(d, 257, token_bytes=d["vocab"][256]["token_bytes"]), "a token appears twice"),
    (lambda d: d["config"].update(default_vocab_size=10**40), "needs"),
    (lambda d: d["config"].update(default_vocab_size=1), "needs"),
    (lambda d: d["config"].update(default_vocab_size=2.5), "'default_vocab_size' must be a whole number"),
    (lambda d: d["config"].update(default_num_special_tokens=-1), "must be a whole number >= 0"),
    (lambda d: d["config"].update(default_num_special_tokens=10**9, default_vocab_size=10**9 + 259),
     "far beyond the 20 special tokens"),
    (lambda d: d["config"].update(default_num_special_tokens=[3]), "must be a whole number"),
    (lambda d: d["config"].update(pattern=7), "'pattern' must be a string"),
    (lambda d: d["config"].update(pattern="(unclosed"), "invalid split pattern"),
    (lambda d: d.__setitem__("special_tokens", {"<s>": 1}), "'special_tokens' must be a list"),
    (lambda d: d.__setitem__("special_tokens", [{"rank": 0, "token_str": 5}]), "special token 0 is not"),
    (lambda d: d.__setitem__("special_tokens", [{"rank": 2**70, "token_str": "<s>"}]), "special token 0 has rank"),
    (lambda d: d.__setitem__("special_tokens", [{"rank": 0, "token_str": "<s>"}, {"rank": 1, "token_str": "<s>"}]),
     "a special token appears twice"),
    (lambda d: d.__setitem__("special_tokens", [{"rank": i, "token_str": str(i)} for i in range(21)]),
     "21 special tokens listed"),
])
@pytest.mark.parametrize("command", [("encode", "--ids"), ("decode",), ("merges",)])
def test_corrupt_tekken_files_are_one_line_errors(cli, tmp_path, mutate, message, command):
    d = _tekken()
    mutate(d)
    args = [*command, _write(tmp_path, d)] + (["abc"] if command[0] == "encode" else ["1"] if command[0] == "decode" else [])
    line = _one_line_error(*cli(*args))
    assert line.startswith("tokviz: ") and "tekken" in line and message in line, line


def test_a_huge_special_token_count_is_refused_within_little_memory(tmp_path):
    """Filler names are made one per special id: a file asking for a billion must be refused
    before any are made (a child process with a small address space would die otherwise)."""
    d = _tekken()
    d["config"].update(default_num_special_tokens=10**9, default_vocab_size=10**9 + 259)
    path = _write(tmp_path, d)
    code = (
        "import resource, sys\n"
        "from tokviz.core.loading import load_tokenizer\n"
        "from tokviz.core.errors import ModelFormatError\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        f"try:\n    load_tokenizer({path!r})\nexcept ModelFormatError as e:\n    print('refused', e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0 and done.stdout.startswith("refused") and "far beyond" in done.stdout, done.stderr
