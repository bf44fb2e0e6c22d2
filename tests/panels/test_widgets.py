"""Shared widget builders of `tokviz.panels.widgets`."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QProgressBar, QVBoxLayout, QWidget

from tokviz.panels.widgets import ProgressBar


def _counting(cls):
    class Counting(cls):
        paints = 0

        def paintEvent(self, event) -> None:  # noqa: N802 (Qt's name)
            type(self).paints += 1
            super().paintEvent(event)

    return Counting


@pytest.mark.parametrize("cls, on_the_spot", [(QProgressBar, 3), (ProgressBar, 0)])
def test_a_progress_bar_value_is_painted_with_the_window_not_on_the_spot(qtbot, cls, on_the_spot):
    """QProgressBar repaints within each `setValue` (the control row); ours once the loop runs."""
    window = QWidget()
    qtbot.addWidget(window)
    bar = _counting(cls)(textVisible=True)
    bar.setRange(0, 1000)
    QVBoxLayout(window).addWidget(bar)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: type(bar).paints >= 1)
    type(bar).paints = 0
    for v in (10, 500, 999):
        bar.setValue(v)
    assert bar.value() == 999 and bar.text() == "99%" and type(bar).paints == on_the_spot
    qtbot.waitUntil(lambda: type(bar).paints >= 1)  # the queued update paints it
    assert bar.updatesEnabled()
