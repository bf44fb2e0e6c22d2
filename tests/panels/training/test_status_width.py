"""The training status in the status bar keeps its place while its text changes length on every
progress report: no relayout of the status bar (and no jumping progress bar) per report."""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QMainWindow

from tests.qt_fixtures import drain_events
from tokviz.engine.training.engine import STAGE_TRAINING, TrainingProgress
from tokviz.panels.training.status import TrainingStatusPanel


def progress(done: int, rate: float, left: float) -> TrainingProgress:
    return TrainingProgress(STAGE_TRAINING, done=done, budget=20_000, rate=rate, seconds_left=left,
                            fraction=done / 20_000)


def test_the_status_width_only_grows_during_a_run(qtbot):
    window = QMainWindow()
    qtbot.addWidget(window)
    panel = TrainingStatusPanel()
    window.statusBar().addPermanentWidget(panel)  # where the main window shows it
    window.resize(1000, 300)
    window.show()
    qtbot.waitExposed(window)

    def bar_x() -> int:
        return panel.bar.mapTo(window, QPoint(0, 0)).x()

    panel.show_progress(progress(12_345, 1234.0, 4000))  # "... 12,345 / 20,000 merges · 1,234/s · 1:06:40 left"
    drain_events()
    wide, x = panel.label.width(), bar_x()
    assert panel.label.width() >= panel.label.fontMetrics().horizontalAdvance(panel.text)
    panel.show_progress(progress(12_400, 9.5, 8))  # a shorter text: nothing moves
    drain_events()
    assert (panel.label.width(), bar_x()) == (wide, x)
    panel.show_outcome("Trained")  # the run is over: the outcome takes its own width
    drain_events()
    assert panel.label.width() < wide
