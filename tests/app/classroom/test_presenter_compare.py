"""The Compare panel in presenter mode on a 1280 x 720 projector: its results fit the screen,
with no scroll bar and nothing cut, whichever result tab is in front."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLabel, QScrollArea, QTabBar, QWidget

from tests.qt_fixtures import drain_events

PROJECTOR = QSize(1280, 720)


def _cut(panel) -> list[str]:
    """Visible buttons, boxes and one-line labels smaller than they need, and the result page
    shorter than its minimum."""
    out = []
    for w in panel.findChildren(QWidget):
        if not w.isVisible() or isinstance(w.parentWidget(), QTabBar):
            continue
        sized = isinstance(w, (QComboBox, QAbstractButton)) or (isinstance(w, QLabel) and not w.wordWrap() and w.text())
        if sized and (w.width() < w.sizeHint().width() - 1 or w.height() < w.minimumSizeHint().height()):
            out.append(f"{type(w).__name__} {w.objectName()!r} {w.size().toTuple()} < {w.sizeHint().toTuple()}")
    page = panel.tabs.currentWidget()
    if page.height() < page.minimumSizeHint().height():
        out.append(f"page {panel.tabs.tabText(panel.tabs.currentIndex())!r} {page.height()} < "
                   f"{page.minimumSizeHint().height()}")
    return out


def test_compare_fits_a_projector_in_presenter_mode(trained_window, qtbot):
    window = trained_window
    window.resize(PROJECTOR)
    panel = window.docks.panel("compare")
    window.presenter.screen_size = PROJECTOR
    window.script.enter_presenter(["compare"], scale=2.0)
    window.setWindowState(Qt.WindowState.WindowNoState)
    qtbot.waitUntil(lambda: window.size() == PROJECTOR or window.resize(PROJECTOR), timeout=10_000)
    drain_events()
    assert window.presenter.panel_ids == ["compare"] and window.presenter.scale == 2.0
    scroll = window.docks.dock("compare").findChild(QScrollArea, "compare_scroll")
    assert panel.tabs.isVisible() and not panel.models_list.isVisible()
    for index in range(panel.tabs.count()):
        panel.tabs.setCurrentIndex(index)
        drain_events()
        name = panel.tabs.tabText(index)
        assert panel.height() <= scroll.viewport().height(), name  # as tall as the dock, no taller
        assert scroll.verticalScrollBar().maximum() == 0, name  # nothing to scroll to
        assert _cut(panel) == [], name
    window.script.leave_presenter()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=10_000)
    assert panel.models_list.isVisibleTo(panel) and not panel.presenting


def test_the_caption_names_the_tokenizers_compare_shows(window, qtbot):
    from tokviz.core import TrainSettings, train

    tl = train(TrainSettings(merges=10, min_count=1), texts=["low lower lowest newer newest " * 20])
    panel = window.docks.panel("compare")
    for name in ("alpha", "beta", "gamma"):
        panel.add_timeline(name, tl)
    assert window.step_model.timeline is None  # nothing trained or opened in the window
    window.presenter.screen_size = PROJECTOR
    window.script.enter_presenter(["compare"])
    caption = window.presenter.caption
    assert "No tokenizer" not in caption and all(name in caption for name in ("alpha", "beta", "gamma")), caption
    panel.add_timeline("delta", tl)  # a model added while presenting: the caption follows
    assert "delta" in window.presenter.caption
    window.script.leave_presenter()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=10_000)
