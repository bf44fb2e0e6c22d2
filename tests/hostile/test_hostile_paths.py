"""Paths that are not ordinary files never hang or fill memory: a FIFO with no writer, a device
that never ends (``/dev/zero``), a folder. The CLI answers with one line and status 2, the loaders
with an error, the window with a message, at once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokviz.core import CorpusError, ModelFormatError, TokvizError, read_text
from tokviz.core.loading import load_tokenizer
from tokviz.core.model_files import load_timeline
from tokviz.core.saved.session import CorpusRef, check_corpus_file

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
CATASTROPHE_S = 60  # a hang is the failure; the real answer takes well under a second


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe.txt"
    os.mkfifo(path)
    return path


def _tokviz(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokviz", *args], capture_output=True, text=True,
                          timeout=CATASTROPHE_S, cwd=cwd)


@pytest.mark.parametrize("command", [
    ("train", "{path}", "-o", "m.json", "--merges", "5", "--quiet"),
    ("encode", "{path}", "hello"),
    ("merges", "{path}"),
    ("decode", "{path}", "1"),
    ("encode", "cl100k_base", "-f", "{path}"),
])
@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
def test_cli_refuses_what_is_not_an_ordinary_file(tmp_path, fifo, command, target):
    path = str(fifo) if target == "fifo" else target
    if not Path(path).exists():
        pytest.skip(f"{path} does not exist here")
    r = _tokviz(*(a.format(path=path) for a in command), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert "not an ordinary file" in lines[0] or "no such file" in lines[0] or "not a known" in lines[0]
    assert not (tmp_path / "m.json").exists()


def test_loaders_refuse_fifos_and_devices(fifo):
    with pytest.raises(CorpusError, match="not an ordinary file"):
        read_text(fifo)
    with pytest.raises(ModelFormatError, match="not an ordinary file"):
        load_timeline(fifo)
    with pytest.raises(TokvizError, match="not an ordinary file"):
        load_tokenizer(fifo)
    if Path("/dev/zero").exists():
        with pytest.raises(CorpusError, match="character device"):
            read_text("/dev/zero")


def test_a_session_corpus_that_never_ends_is_refused(tmp_path):
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero here")
    with pytest.raises(TokvizError, match="not an ordinary file"):
        check_corpus_file(CorpusRef("t", False, path="/dev/zero", sha256="0" * 64, size=10))


def test_the_window_opens_a_fifo_without_waiting(window, fifo, qtbot, dialogs):
    window.script.set_corpus_text("my text")
    window.script.open_path(fifo)
    assert window.script.wait_for_file(CATASTROPHE_S * 1000) in ("failed", "idle")
    assert dialogs.errors and "not an ordinary file" in dialogs.errors[-1][1]
    assert window.corpus_panel.text() == "my text"


def test_memory_follows_the_files_content(tmp_path):
    """Two megabytes of one repeated character train within a bound proportional to the text (the
    trainer stores positions as 8-byte integers); the peak is measured by a fresh parent process."""
    corpus = tmp_path / "a.txt"
    corpus.write_text("a" * 2_000_000, encoding="utf-8")
    probe = ("import resource, subprocess, sys; "
             "r = subprocess.run([sys.executable, '-m', 'tokviz', 'train', sys.argv[1], '-o', 'm.json', '--quiet']); "
             "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, str(corpus)], capture_output=True, text=True,
                         timeout=CATASTROPHE_S * 3, cwd=tmp_path)
    code, peak_kb = map(int, out.stdout.split())
    assert code == 0, out.stderr
    assert peak_kb < 1_000_000, f"peak {peak_kb / 1024:.0f} MB for a 2 MB file"
