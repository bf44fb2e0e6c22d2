"""The checks of ``tokviz screenshot``: a shot still showing a progress bar, a picture too small,
two identical pictures or a missing file are errors with one line; a panel is shot alone at a
readable size and put back in its dock."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar, QVBoxLayout, QWidget

from tests.qt_fixtures import drain_events
from tokviz.app.docks import DockManager
from tokviz.app.screenshots.capture import MIN_SIZE, ShotError, check_shots, save_panel_shot, save_shot
from tokviz.panels.base import Panel


def _png(path, size, color="#336699"):
    image = QImage(*size, QImage.Format.Format_RGB32)
    image.fill(QColor(color))
    assert image.save(str(path))
    return path


def test_a_set_of_distinct_readable_pictures_passes(tmp_path):
    check_shots([_png(tmp_path / "a.png", (800, 500)), _png(tmp_path / "b.png", (1280, 800), "#aa0000")])


def test_identical_pictures_are_an_error(tmp_path):
    a, b = _png(tmp_path / "a.png", (900, 600)), _png(tmp_path / "b.png", (900, 600))
    with pytest.raises(ShotError, match="b.png is the same picture as a.png"):
        check_shots([a, b])


@pytest.mark.parametrize("size", [(637, 184), (1280, 499), (799, 800)])
def test_a_picture_under_the_minimum_is_an_error(tmp_path, size):
    with pytest.raises(ShotError, match=f"small.png is {size[0]}x{size[1]}, smaller than 800x500"):
        check_shots([_png(tmp_path / "small.png", size)])
    assert MIN_SIZE == (800, 500)


def test_a_missing_picture_is_an_error(tmp_path):
    with pytest.raises(ShotError, match="gone.png was not written"):
        check_shots([_png(tmp_path / "a.png", (900, 600)), tmp_path / "gone.png"])


def test_a_shot_showing_a_progress_bar_is_refused(qtbot, tmp_path):
    widget = QWidget()
    qtbot.addWidget(widget)
    bar = QProgressBar(objectName="compare_progress")
    QVBoxLayout(widget).addWidget(bar)
    widget.resize(300, 200)
    widget.show()
    with pytest.raises(ShotError, match="shot.png: work still in progress \\(compare_progress\\)"):
        save_shot(widget, tmp_path / "shot.png")
    assert not (tmp_path / "shot.png").exists()
    bar.hide()  # the run ended
    assert save_shot(widget, tmp_path / "shot.png").is_file()


class _TinyPanel(Panel):
    PANEL_ID = "tiny"
    TITLE = "Tiny"

    def __init__(self) -> None:
        super().__init__()
        QVBoxLayout(self).addWidget(QLabel("content"))


@pytest.mark.qt_log_ignore("does not support (raise|propagateSizeHints)")  # the offscreen platform, floating the dock
def test_a_panel_is_shot_alone_at_a_readable_size_and_docked_again(qtbot, tmp_path):
    window = QMainWindow()
    qtbot.addWidget(window)
    window.docks = docks = DockManager(window)
    other = _TinyPanel()
    other.PANEL_ID = "other"
    docks.add_panel(other)
    dock = docks.add_panel(_TinyPanel(), tabify_with="other")
    window.resize(700, 300)
    window.show()
    drain_events()
    assert dock.width() < 800 or dock.height() < 500  # squeezed in the window
    path = save_panel_shot(window, "tiny", tmp_path / "tiny.png", drain_events, size=(1000, 640))
    image = QImage(str(path))
    assert (image.width(), image.height()) == (1000, 640)
    assert not dock.isFloating() and dock.isVisible()


def test_a_shot_larger_than_the_size_the_set_promises_is_an_error(qtbot, tmp_path):
    widget = QWidget()
    qtbot.addWidget(widget)
    QVBoxLayout(widget).addWidget(QLabel("wide content"))
    widget.setMinimumWidth(1385)  # a panel that asks for more room than the picture has
    widget.resize(1280, 800)
    widget.show()
    drain_events()
    assert widget.width() == 1385
    with pytest.raises(ShotError, match="wide.png is 1385x800, larger than the 1280x800 the set promises"):
        save_shot(widget, tmp_path / "wide.png", fit=(1280, 800))
    assert not (tmp_path / "wide.png").exists()
    widget.setMinimumWidth(0)
    widget.resize(1280, 800)
    drain_events()
    path = save_shot(widget, tmp_path / "wide.png", fit=(1280, 800))
    assert QImage(str(path)).size().toTuple() == (1280, 800)
