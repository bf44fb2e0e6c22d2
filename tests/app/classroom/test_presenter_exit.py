"""Leaving presenter mode: straight back to the maximized window (never hidden, never shown at its
normal size on the way) and every table's font back at the normal size, rows painted while
presenting included."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject

from tests.qt_fixtures import drain_events
from tokviz.panels.frame_turns import frame_turns


class _Recorder(QObject):
    """The Hide events and sizes a window goes through."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden, self.sizes = 0, []

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Hide:
            self.hidden += 1
        elif event.type() == QEvent.Type.Resize:
            self.sizes.append(event.size())
        return False


def test_leaving_goes_straight_back_to_the_maximized_window(window, qtbot):
    window.showMaximized()
    qtbot.waitUntil(window.isMaximized, timeout=10_000)
    drain_events()
    maximized = window.size()
    window.script.enter_presenter(["timeline"])
    qtbot.waitUntil(window.isFullScreen, timeout=10_000)
    recorder = _Recorder()
    window.installEventFilter(recorder)
    window.script.leave_presenter()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=10_000)
    drain_events()
    window.removeEventFilter(recorder)
    assert recorder.hidden == 0 and window.isVisible() and window.updatesEnabled()
    assert window.isMaximized() and window.size() == maximized
    assert [s for s in recorder.sizes if s.width() < maximized.width() or s.height() < maximized.height()] == []


def _item_sizes(table) -> set[float]:
    return {table.item(r, c).font().pointSizeF() for r in range(table.rowCount())
            for c in range(table.columnCount()) if table.item(r, c) is not None}


def _refreshed(panel, qtbot) -> None:
    """Wait for the timeline's views to have taken their turns (a step the user moves is shown
    view by view, one per painted frame)."""
    drain_events()
    qtbot.waitUntil(lambda: not panel.pacing.pending and frame_turns(panel).waiting == 0, timeout=5_000)


def test_candidate_rows_painted_while_presenting_get_the_normal_font_back(trained_window, qtbot):
    window = trained_window
    panel = window.timeline_panel
    window.step_model.set_step(3)
    _refreshed(panel, qtbot)
    table = panel.candidates
    normal = table.font().pointSizeF()
    assert _item_sizes(table) == {normal}
    window.script.enter_presenter(["timeline"])
    qtbot.waitUntil(window.isFullScreen, timeout=10_000)
    window.step_model.set_step(4)  # rows painted at the presenter's font
    _refreshed(panel, qtbot)
    assert max(_item_sizes(table)) > 1.4 * normal
    window.script.leave_presenter()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=10_000)
    _refreshed(panel, qtbot)
    assert table.font().pointSizeF() == normal and _item_sizes(table) == {normal}
