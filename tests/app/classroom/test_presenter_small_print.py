"""Presenter mode scales the small print too: the characters under byte groups in the token view
are at least 24 px on a 1920 x 1080 screen (8-9 px before), and back to their normal size after."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontInfo

from tests.qt_fixtures import drain_events

FULL_HD = QSize(1920, 1080)


def _caption_px(window) -> int:
    return QFontInfo(window.token_view_panel.view.caption_font()).pixelSize()


def test_byte_group_captions_grow_to_24_px_at_1080p(trained_window, qtbot):
    window = trained_window
    window.token_view_panel.set_text("café 東京")  # multi-byte characters: byte groups with captions
    normal = _caption_px(window)
    assert normal < 24  # the small print is small in the normal window
    window.presenter.screen_size = FULL_HD
    window.script.enter_presenter(["token_view"], scale=1.5)  # the smallest presenter scale
    window.setWindowState(Qt.WindowState.WindowNoState)
    window.resize(FULL_HD)
    qtbot.waitUntil(lambda: window.size() == FULL_HD, timeout=10_000)
    drain_events()
    assert _caption_px(window) >= 24
    view = window.token_view_panel.view
    assert QFontInfo(view.caption_font()).pixelSize() >= QFontInfo(view.font()).pixelSize()
    window.script.leave_presenter()
    drain_events()
    assert _caption_px(window) == normal


def test_small_print_follows_the_screen_height(window):
    window.presenter.screen_size = QSize(3840, 2160)
    window.script.enter_presenter(["token_view"], scale=1.5)
    drain_events()
    assert _caption_px(window) >= 48
    window.script.leave_presenter()
