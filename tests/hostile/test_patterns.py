"""Regular expressions from files and users run with a time limit: a catastrophic pattern is one
line (CLI exit 2) or a message in the window, never minutes of backtracking."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tokviz.core.errors import PatternTimeout
from tokviz.core.text import pattern_limits
from tokviz.core.text.split import parse_split
from tokviz.core.text.unicode_tables import PinnedPattern

ROOT = Path(__file__).resolve().parents[2]
CATASTROPHIC = "(a|aa)+$"
TEXT = "a" * 40 + "b"  # (a|aa)+$ backtracks through Fibonacci(40) ways to cut the a's: minutes


def split_tokenizer_json(pattern: str) -> dict:
    """A small BPE tokenizer.json whose pre-tokenizer is a Split on `pattern`."""
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated",
                              "invert": False},
            "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "vocab": {"a": 0, "b": 1, "aa": 2}, "merges": ["a a"]}}


def _cli(*args: str) -> subprocess.CompletedProcess:
    """``tokviz ARGS`` in a child process, killed after a generous bound (the old code ran 240 s)."""
    return subprocess.run([sys.executable, "-m", "tokviz", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=90)


def _one_line(got: subprocess.CompletedProcess) -> str:
    assert got.returncode == 2 and got.stdout == "", (got.returncode, got.stdout, got.stderr[-2000:])
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in got.stderr, got.stderr[-2000:]
    return lines[0]


def test_a_catastrophic_split_pattern_in_a_tokenizer_json_is_one_line(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(split_tokenizer_json(CATASTROPHIC)), encoding="utf-8")
    line = _one_line(_cli("encode", "--ids", str(path), TEXT))
    assert "(a|aa)+" in line and "time limit of 2.0 s" in line


def test_a_catastrophic_training_regex_is_one_line(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT + "\n", encoding="utf-8")
    line = _one_line(_cli("train", "--quiet", "-o", str(tmp_path / "m.json"), "--split", "regex:(?:a|aa)+$",
                          "--merges", "3", str(corpus)))
    assert "(?:a|aa)+$" in line and "time limit" in line
    assert not (tmp_path / "m.json").exists()


@pytest.fixture
def short_limit(monkeypatch):
    """A limit of a twentieth of a second (the default's two seconds are for users, not tests)."""
    monkeypatch.setattr(pattern_limits, "BASE_SECONDS", 0.05)


@pytest.mark.parametrize("call", [
    lambda p: p.findall(TEXT),
    lambda p: list(p.finditer(TEXT)),
    lambda p: p.sub("x", TEXT),
    lambda p: p.isolated(TEXT),
])
def test_every_way_of_running_a_file_pattern_is_limited(short_limit, call):
    with pytest.raises(PatternTimeout, match=r"time limit of 0\.1 s on a text of 41 characters"):
        call(PinnedPattern(CATASTROPHIC.replace("$", r"\Z")))


def test_a_typed_split_regex_is_limited_when_counting_and_cutting(short_limit):
    splitter = parse_split("regex:(?:a|aa)+$")
    for run in (splitter.count, splitter.chunks, splitter.spans):
        with pytest.raises(PatternTimeout, match="time limit"):
            run(TEXT)


def test_the_limit_grows_with_the_text():
    """Real patterns run at most ~0.7 us a character: a 10 MB text gets 52 s."""
    assert pattern_limits.time_limit(0) == 2.0
    assert pattern_limits.time_limit(10_000_000) == pytest.approx(52.0)
    assert pattern_limits.time_limit(10_000_000) > 7 * 0.7e-6 * 10_000_000


def test_an_ordinary_pattern_gives_the_same_chunks(short_limit):
    pattern = PinnedPattern(r"\p{L}+|\p{N}{1,3}|\s+|[^\s\p{L}\p{N}]+")
    text = "Hello, world 12345 héllo"
    assert pattern.findall(text) == ["Hello", ",", " ", "world", " ", "123", "45", " ", "héllo"]
    assert pattern.isolated(text) == pattern.findall(text)


def test_the_window_reports_a_catastrophic_pattern_and_keeps_the_text(window, qtbot, dialogs, tmp_path,
                                                                      short_limit):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(split_tokenizer_json(CATASTROPHIC)), encoding="utf-8")
    window.corpus_panel.set_text("the user's corpus")
    dialogs.open_answer = str(path)
    window.commands.open_tokenizer.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    tv = window.token_view_panel
    tv.set_text(TEXT)
    tv.refresh(delay_ms=0)
    assert tv.wait_idle(qtbot)
    qtbot.waitUntil(lambda: "time limit" in tv.status.text(), timeout=30_000)
    assert "Cannot tokenize" in tv.status.text() and "(a|aa)+" in tv.status.text()
    assert tv.text() == TEXT and window.corpus_panel.text() == "the user's corpus"


# -- vetted patterns: Python's re (no time limit) only for published patterns known to be linear ----

VETTED_RUNS = """
import resource, sys
resource.setrlimit(resource.RLIMIT_CPU, (60, 60))  # quadratic backtracking on 200k characters takes hours
from tokviz.core.text.token_text import VETTED_PATTERNS, python_pattern
from tokviz.core.text.unicode_tables import PinnedPattern
n = 200_000
texts = [c * n for c in " \\n\\r\\t!1aA_'"] + [" !" * (n // 2), "\\r\\n" * (n // 2), " a" * (n // 2), "1a" * (n // 2)]
for source in sorted(VETTED_PATTERNS):
    pattern = PinnedPattern(python_pattern(source), trusted=True)
    for text in texts:
        assert "".join(pattern.isolated(text)) == text
print("ok", len(VETTED_PATTERNS) * len(texts))
"""


def test_vetted_patterns_are_linear_on_runs_of_one_character():
    """Every vetted pattern, on Python's re (the ASCII path), splits 200,000-character runs within a
    CPU limit a quadratic pattern would pass by hours."""
    done = subprocess.run([sys.executable, "-c", VETTED_RUNS], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr[-2000:]


def test_only_vetted_patterns_from_files_take_the_unlimited_path():
    from tokviz.core.formats.tokenizer_json.normalizers import hf_pattern
    from tokviz.core.text.token_text import VETTED_PATTERNS

    assert all(hf_pattern({"Regex": p}, "Split").trusted for p in VETTED_PATTERNS)
    assert not hf_pattern({"Regex": CATASTROPHIC}, "Split").trusted
    assert not hf_pattern({"Regex": r"\p{N}{1,3} "}, "Split").trusted  # a near copy is not vetted
