"""Settings store (one owner of every key), the Qt work-around, and the layer boundaries."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QByteArray, QObject, QSettings, Signal

from tests.conftest import qt_modules_loaded
from tokviz.core import TrainSettings
from tokviz.engine import settings as settings_mod
from tokviz.engine.settings import LAYOUT_VERSION, MAX_RECENT, AppSettings

ROOT = Path(__file__).resolve().parents[2]


def test_round_trips(tmp_path):
    s = AppSettings.in_folder(tmp_path)
    ts = TrainSettings(units="chars", split="regex:\\w+", end_of_word="</w>", merges=40, min_count=3,
                       special_tokens=("<s>", "</s>"))
    s.save_train_settings(ts)
    s.set_theme("dark")
    s.set_font_scale(1.25)
    s.save_window_layout(QByteArray(b"geo"), QByteArray(b"state"))
    s.sync()
    again = AppSettings.in_folder(tmp_path)
    assert again.train_settings() == ts
    assert (again.theme(), again.font_scale()) == ("dark", 1.25)
    assert again.window_layout() == (QByteArray(b"geo"), QByteArray(b"state"))


def test_bad_values_give_defaults(tmp_path):
    path = tmp_path / "s.ini"
    q = QSettings(str(path), QSettings.Format.IniFormat)
    q.setValue(settings_mod.KEY_TRAINING, '{"units": "pixels"}')
    q.setValue(settings_mod.KEY_THEME, "neon")
    q.setValue(settings_mod.KEY_FONT_SCALE, "huge")
    q.setValue(settings_mod.KEY_RECENT, "not json")
    q.setValue(settings_mod.KEY_GEOMETRY, QByteArray(b"g"))
    q.setValue(settings_mod.KEY_LAYOUT_VERSION, str(LAYOUT_VERSION + 1))
    s = AppSettings(q)
    assert s.train_settings() is None
    assert (s.theme(), s.font_scale(), s.recent_files()) == ("system", 1.0, [])
    assert s.window_layout() == (None, None)  # saved by another layout version: ignored
    s.set_font_scale(99)
    assert s.font_scale() == settings_mod.FONT_SCALE_MAX


def test_recent_files(tmp_path):
    s = AppSettings.in_folder(tmp_path)
    for i in range(MAX_RECENT + 3):
        s.add_recent_file(tmp_path / f"f{i}.txt")
    s.add_recent_file(tmp_path / "f5.txt")
    recent = s.recent_files()
    assert len(recent) == MAX_RECENT
    assert recent[0] == str((tmp_path / "f5.txt").resolve())
    assert recent.count(recent[0]) == 1
    s.remove_recent_file(tmp_path / "f5.txt")
    assert str((tmp_path / "f5.txt").resolve()) not in s.recent_files()
    s.clear_recent_files()
    assert s.recent_files() == []


def test_default_settings_file_comes_from_the_environment(isolated_settings):
    s = AppSettings.open()
    assert Path(s.qsettings.fileName()) == isolated_settings / "tokviz.ini"


def test_many_qt_calls_keep_none_and_true_alive():
    """PySide6 6.12.0 on Python 3.11 drops a reference to None/True on every void call and emit
    until the interpreter aborts; pyproject.toml excludes it there. Guard against a regression."""

    class Emitter(QObject):
        ping = Signal(int)

    e = Emitter()
    before = sys.getrefcount(None), sys.getrefcount(True)
    for i in range(50_000):
        e.ping.emit(i)
        e.setObjectName("x")
    assert (sys.getrefcount(None), sys.getrefcount(True)) >= before


def test_engine_imports_only_qtcore():
    code = (
        "import sys, tokviz.engine.training.engine, tokviz.engine.tables.vocab_model, tokviz.engine.step_model, "
        "tokviz.engine.settings, tokviz.engine.tasks, tokviz.engine.corpus_files, tokviz.engine.samples; "
        "bad = [m for m in ('PySide6.QtGui', 'PySide6.QtWidgets', 'pyqtgraph') if m in sys.modules]; "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_training_child_imports_no_qt(tmp_path):
    assert qt_modules_loaded("tokviz.engine.training.child", "tokviz.core.processes.spawn", cwd=tmp_path) == []
    assert qt_modules_loaded("tokviz.engine.compare_child", cwd=tmp_path) == []


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module if node.level == 0 else "." * node.level + node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_imports_point_downward():
    for layer, forbidden in (("engine", ("tokviz.panels", "tokviz.app")), ("panels", ("tokviz.app",))):
        for path in (ROOT / "tokviz" / layer).glob("*.py"):
            bad = [m for m in _imports(path) if m.startswith(forbidden)]
            assert not bad, f"{path.name} imports {bad}"
    for path in (ROOT / "tokviz" / "panels").glob("*.py"):
        assert "PySide6.QtWidgets" not in _imports(path) or path.name != "__init__.py"


def test_modules_stay_small():
    for layer in ("engine", "panels", "app"):
        for path in (ROOT / "tokviz" / layer).glob("*.py"):
            if path.name == "cli.py":
                continue
            n = len(path.read_text(encoding="utf-8").splitlines())
            assert n <= 520, f"{path} has {n} lines"
