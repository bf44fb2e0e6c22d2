"""`TrainingStatusPanel`: training progress for the status bar.

Shows the stage while the corpus is read and counted (and, the first time on a machine, while
numba compiles an algorithm's kernels: "Compiling fast kernels, once per machine: 12 s"), then merges done / budget, merges per second
and the time left, with a progress bar; afterwards a one-line outcome. It only displays
`tokviz.engine.training.engine.TrainingProgress` snapshots.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from tokviz.engine.training.engine import STAGE_COMPILING, STAGE_TRAINING, TrainingProgress
from tokviz.panels.widgets import ProgressBar


def format_duration(seconds: float) -> str:
    """``0.42`` -> ``'0.42 s'``; ``75`` -> ``'1:15'``; ``3700`` -> ``'1:01:40'``."""
    if seconds < 1:
        return f"{max(0.0, seconds):.2f} s"
    if seconds < 10:
        return f"{seconds:.1f} s"
    seconds = int(round(seconds))
    m, s = divmod(seconds, 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def format_progress(p: TrainingProgress) -> str:
    """The status text of a progress snapshot, e.g. ``'Training 120 / 500 merges · 3,000/s · 0:01 left'``."""
    if p.stage == STAGE_COMPILING:  # the seconds of this wait, the one that needs explaining
        return f"{p.label}: {p.stage_elapsed:.0f} s"
    if p.stage != STAGE_TRAINING:
        text = p.label
        if p.fraction is not None and p.fraction < 1:
            text += f" {100 * p.fraction:.0f}%"
        return f"{text} ({format_duration(p.elapsed)})"
    total = f" / {p.budget:,}" if p.budget is not None else ""
    text = f"Training: {p.done:,}{total} {p.unit}"
    if p.rate > 0:
        text += f" · {p.rate:,.{1 if p.rate < 10 else 0}f} {p.unit}/s"
    if p.seconds_left is not None:
        text += f" · {format_duration(p.seconds_left)} left"
    return text


class TrainingStatusPanel(QWidget):
    """Label + progress bar, shown in the status bar's permanent area."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("training_status")
        self.label = QLabel(objectName="training_status_label")
        self.bar = ProgressBar(objectName="training_status_bar", textVisible=False)
        self.bar.setRange(0, 1000)
        self.bar.setFixedWidth(160)
        self.bar.setMaximumHeight(14)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 4, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        self.bar.hide()

    def show_progress(self, p: TrainingProgress) -> None:
        self.label.setText(format_progress(p))
        # the text changes length on every report: a width that only grows during a run keeps the
        # progress bar in place and spares the status bar a relayout and repaint per report
        width = self.label.sizeHint().width()
        if width > self.label.minimumWidth():
            self.label.setMinimumWidth(width)
        self.bar.show()
        if p.fraction is None:
            self.bar.setRange(0, 0)  # busy indicator
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(round(1000 * p.fraction))

    def show_outcome(self, text: str) -> None:
        self.label.setMinimumWidth(0)
        self.bar.hide()
        self.label.setText(text)

    @property
    def text(self) -> str:
        return self.label.text()
