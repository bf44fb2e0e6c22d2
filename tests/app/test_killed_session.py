"""A session killed with SIGKILL while training comes back: a real tokviz process (offscreen Qt, its
own settings folder) opens a corpus, trains a model, starts a long second run with other settings
and is killed mid-run; the next window offers the autosave and restores the corpus, the settings
of the killed run and the last complete model (never a half-trained one)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.qt_fixtures import drain_events
from tokviz.core import TrainSettings, train
from tokviz.engine.settings import AppSettings

ROOT = Path(__file__).resolve().parents[2]
FIRST = TrainSettings(merges=30)
SECOND = TrainSettings(merges=150_000, min_count=1, split="whitespace")  # runs for many seconds (all 156k merges: 6 s alone)

CHILD = """
import sys
from PySide6.QtCore import QTimer
from tokviz.app.gui import create_application, create_main_window
from tokviz.core import TrainSettings

corpus = sys.argv[1]
app = create_application()
window = create_main_window()
window.script.open_path(corpus)
if window.script.wait_for_file() != "opened":
    sys.exit("could not open the corpus")
assert window.script.start_training(TrainSettings(merges=30)) and window.script.wait_for_training() == "finished"
# nothing here saves by hand: the window autosaves when a run starts, and every second
assert window.script.start_training(TrainSettings(merges=150_000, min_count=1, split="whitespace"))
for _ in range(2):  # the one of the start, then the timer's while merges arrive
    window.script.wait_for({"saved": [window.sessions.autosaved]}, 60_000)
# the next save may be under way when the kill comes, as it would be for a user: sessions are
# written atomically, so the last complete one is what comes back (waiting for a quiet moment
# raced the timer, which saves again a second after each save while the run goes on)
print("training" if window.training_engine.is_running else "finished too soon", flush=True)
QTimer.singleShot(120_000, app.quit)  # never outlive a test that died
app.exec()
"""


def _read_line(proc: subprocess.Popen, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            return proc.stdout.readline().strip()
        if proc.poll() is not None:
            break
    return ""


def test_kill_9_while_training_keeps_corpus_settings_and_last_model(make_window, dialogs, qtbot, tmp_path,
                                                                     long_text):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(long_text, encoding="utf-8")
    settings_file = tmp_path / "settings" / "tokviz.ini"
    settings_file.parent.mkdir()
    child_settings = AppSettings.open(settings_file)
    child_settings.set_autosave_seconds(1)  # the timer also saves while the run goes on
    child_settings.sync()
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TOKVIZ_SETTINGS_FILE": str(settings_file),
           "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
           "XDG_CACHE_HOME": str(home / ".cache"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(script), str(corpus)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
    try:
        line = _read_line(proc, 120)
        assert line == "training", (line, proc.stderr.read() if proc.poll() is not None else "")
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()

    store = AppSettings.open(settings_file)
    assert (store.data_dir() / "autosave.tokviz").is_file()
    dialogs.yes_no_answer = True
    w = make_window(settings=store, load_default_sample=False)
    assert w.sessions.crashed
    qtbot.waitUntil(lambda: len(dialogs.asked_yes_no) == 1, timeout=10_000)
    qtbot.waitUntil(lambda: w.corpus_panel.text() == long_text, timeout=30_000)
    drain_events()
    assert dialogs.errors == []
    shown = w.training_panel.settings()
    assert (shown.merges, shown.min_count, shown.split) == (SECOND.merges, SECOND.min_count, SECOND.split)
    model = w.step_model.timeline
    expected = train(FIRST, texts=[long_text])
    assert model is not None and model.finished and model.n_steps == 30
    assert model.merges() == expected.merges() and w.step_model.step == 30
