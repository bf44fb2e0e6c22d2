"""A quick first window: the panels no first screen shows (the heatmaps, the glitch finder, the
timeline's charts, a lesson's plot) and pyqtgraph itself are made after the first paint, or the
moment they are needed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from tests.qt_fixtures import drain_events
from tokviz.panels.deferred import DeferredChart

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import sys
from PySide6.QtCore import QTimer
from tokviz.app.gui import create_application, create_main_window
app = create_application()
w = create_main_window()
LATER = ("pyqtgraph", "tokviz.panels.glitch_panel", "tokviz.core.weights", "tokviz.core.compare.run")
before = [m for m in LATER if m in sys.modules]
def made():
    return [pid for pid in ("embeddings", "positional", "glitches") if w.docks.dock(pid).widget().objectName() == pid]
print("before", before, made(), flush=True)
def later():
    print("after", "pyqtgraph" in sys.modules, made(), type(w.embedding_panel).__name__,
          type(w.glitch_panel).__name__, flush=True)
    w.shutdown()
    app.quit()
QTimer.singleShot(1000, later)
app.exec()
"""


def test_the_first_paint_comes_before_the_heatmaps_the_glitch_finder_and_pyqtgraph(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path),
           "TOKVIZ_SETTINGS_FILE": str(tmp_path / "s.ini"), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "before [] []", "after True ['embeddings', 'positional', 'glitches'] EmbeddingPanel GlitchPanel"]


def test_a_panel_made_later_is_made_on_first_use(qtbot):
    from PySide6.QtWidgets import QMainWindow

    from tokviz.app.docks import DockManager
    from tokviz.panels.base import Panel

    class Later(Panel):
        PANEL_ID, TITLE = "later", "Later"

    class Sibling(Panel):
        PANEL_ID, TITLE = "sibling", "Sibling"

    window = QMainWindow()
    qtbot.addWidget(window)
    docks = DockManager(window)
    made = []

    def build():
        made.append(1)
        return [Later(), Sibling()]

    docks.add_later("later", "Later", build)
    docks.add_later("sibling", "Sibling", build)
    assert docks.panel_ids() == ["later", "sibling"] and made == []
    assert docks.dock("later").objectName() == "dock_later" and not isinstance(docks.dock("later").widget(), Panel)
    assert [a.text() for a in docks.menu.actions()] == ["Later", "Sibling"]
    assert isinstance(docks.panel("sibling"), Sibling) and made == [1]  # both made, once
    assert docks.dock("later").widget() is docks.panel("later")
    docks.build_pending()
    assert made == [1] and [type(p).__name__ for p in docks.panels()] == ["Later", "Sibling"]


class _Chart(QLabel):
    from PySide6.QtCore import Signal

    step_clicked = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.calls = []

    def set_series(self, *args):
        self.calls.append(("set_series", args))

    def set_cursor(self, k):
        self.calls.append(("set_cursor", k))


def test_a_deferred_chart_remembers_its_settings_until_it_is_painted(qtbot):
    made = []
    holder = QWidget()
    qtbot.addWidget(holder)
    chart = DeferredChart(lambda: made.append(_Chart()) or made[-1])
    QVBoxLayout(holder).addWidget(chart)
    clicked = []
    chart.step_clicked.connect(clicked.append)
    chart.set_cursor(1)
    chart.set_series([0], [1], [2])
    chart.set_cursor(5)  # only the last value of each setter is kept, in the order of the calls
    assert made == [] and not chart.is_built
    holder.resize(200, 100)
    holder.show()
    qtbot.waitExposed(holder)
    qtbot.waitUntil(lambda: chart.is_built, timeout=10_000)  # painted: now it exists
    real = made[0]
    assert real.calls == [("set_series", ([0], [1], [2])), ("set_cursor", 5)]
    chart.set_cursor(7)  # from now on straight through
    assert real.calls[-1] == ("set_cursor", 7)
    real.step_clicked.emit(3)
    drain_events()
    assert clicked == [3] and chart.text() == "" and len(made) == 1  # other attributes: the real chart's
